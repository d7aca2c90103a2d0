"""What an agent tree is built from: process-wide dependencies and the turn's loaded context."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from google.adk.models import BaseLlm
from google.adk.tools.base_toolset import BaseToolset

from agents.data_parts import DataParts
from agents.safety.classifier import CrisisClassifier
from agents.safety.detector import CrisisDetector
from confidant.agentconfig.config import McpServerConfig
from confidant.effects import EffectLedger
from confidant.ports import Embedder, MemoryRecord, WisdomIndex
from confidant.relationship.service import RelationshipService
from confidant.tasks import TaskWriter


class ToolsetProvider(Protocol):
    """MCP toolsets per user (confidant.mcptools.McpToolsetPool)."""

    def toolsets(
        self, app: str, servers: Sequence[McpServerConfig], user_id: str
    ) -> list[BaseToolset]: ...


class ModelResolver(Protocol):
    """Models by agent role (confidant.models.factory.ModelCatalog)."""

    @property
    def selectable(self) -> tuple[str, ...]: ...

    def for_agent(self, role: str, choice: str | None = None) -> BaseLlm: ...


@dataclass(frozen=True)
class TaskflowLimits:
    """Loop limits of the taskflow app (settings)."""

    max_detail_rounds: int = 4  # critic verdicts before an incomplete task is given up
    max_classification_corrections: int = 2  # user corrections before the last one stands


@dataclass(frozen=True)
class AgentDeps:
    """Created once per process by the composition root; shared by every request's tree."""

    model: BaseLlm
    wisdom: WisdomIndex
    # The process's one crisis detector (CONFIDANT_CRISIS_MODEL picks lexicon + n-gram model or
    # the lexicon alone): the guard plugin and the relationship router ask it, and the composition
    # root hands the same one to the quota gate and the rate limits. No default, so that nothing
    # silently builds a second detector that differs from the composition root's.
    crisis_detector: CrisisDetector
    embedder: Embedder | None = None  # text embeddings (memory search); None where unused
    models: ModelResolver | None = None  # models per agent role; None: `model` everywhere
    relationship: RelationshipService | None = None  # persons and self-profile (issue 9)
    # taskflow (issue 12): the external task system, the exactly-once ledger, loop limits.
    tasks: TaskWriter | None = None
    effects: EffectLedger | None = None
    taskflow_limits: TaskflowLimits = field(default_factory=TaskflowLimits)
    # The crisis guard's optional second layer (CONFIDANT_CRISIS_CLASSIFIER); None = lexicon only.
    crisis_classifier: CrisisClassifier | None = None
    protocol_timeout_s: float = 3600.0  # a protocol left this long asks to confirm (issue 10)
    mcp: ToolsetProvider | None = None  # MCP toolsets of the apps' agent configs (issue 12)


@dataclass(frozen=True)
class TurnContext:
    """What the turn loaded before the run; fed to instruction providers."""

    user_id: str
    session_id: str
    locale: str  # "zh" or "en"
    memories: Sequence[MemoryRecord] = field(default_factory=tuple)  # newest first
    app: str = ""
    message: str = ""  # the user's message of this turn
    # App-specific request fields, validated by the app's `options_model` (e.g. skill, person).
    options: Mapping[str, Any] = field(default_factory=dict)
    # What the app's declared context sources loaded, by source name (see AppSpec.context).
    loaded: Mapping[str, Any] = field(default_factory=dict)
    # The app's own data parts of this turn (agents/data_parts.py).
    data_parts: DataParts = field(default_factory=DataParts)
