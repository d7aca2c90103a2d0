"""What an agent tree is built from: process-wide dependencies and the turn's loaded context."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from google.adk.models import BaseLlm
from google.adk.tools.base_toolset import BaseToolset

from confidant.agentconfig.config import McpServerConfig
from confidant.ports import Embedder, MemoryRecord, WisdomIndex
from confidant.relationship.service import RelationshipService


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
class AgentDeps:
    """Created once per process by the composition root; shared by every request's tree."""

    model: BaseLlm
    wisdom: WisdomIndex
    embedder: Embedder | None = None  # text embeddings (memory search); None where unused
    models: ModelResolver | None = None  # models per agent role; None: `model` everywhere
    relationship: RelationshipService | None = None  # persons and self-profile (issue 9)
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
