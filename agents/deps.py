"""What an agent tree is built from: process-wide dependencies and the turn's loaded context."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from google.adk.models import BaseLlm

from agents.safety.classifier import CrisisClassifier
from confidant.ports import MemoryRecord, WisdomIndex


@dataclass(frozen=True)
class AgentDeps:
    """Created once per process by the composition root; shared by every request's tree."""

    model: BaseLlm
    wisdom: WisdomIndex
    # The crisis guard's optional second layer (CONFIDANT_CRISIS_CLASSIFIER); None = lexicon only.
    crisis_classifier: CrisisClassifier | None = None


@dataclass(frozen=True)
class TurnContext:
    """What the turn loaded before the run; fed to instruction providers."""

    user_id: str
    session_id: str
    locale: str  # "zh" or "en"
    memories: Sequence[MemoryRecord] = field(default_factory=tuple)  # newest first
