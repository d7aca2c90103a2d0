"""What a skill's tools are built with, per request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.deps import UiChannel
    from agents.protocols.engine import ProtocolRunner
    from confidant.profiles.draft import ProfileDraft


@dataclass(frozen=True)
class ToolEnv:
    """The skill id is the request's, never a model argument: a tool only touches its skill."""

    skill_id: str
    draft: ProfileDraft
    ui: UiChannel
    protocols: ProtocolRunner | None = None
