"""What a skill's tools are built with, per request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.data_parts import DataParts
    from agents.protocols.engine import ProtocolRunner
    from confidant.profiles.draft import ProfileDraft


@dataclass(frozen=True)
class ToolEnv:
    """The skill id is the request's, never a model argument: a tool only touches its skill."""

    skill_id: str
    draft: ProfileDraft
    data_parts: DataParts
    protocols: ProtocolRunner | None = None
