"""Helpers: the shipped skills, a turn's draft and a tool context with plain dict state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agents.data_parts import DataParts
from agents.lifecoach.agent import SKILLS
from agents.protocols.engine import ProtocolRunner
from agents.skills import ToolEnv, build_tools
from confidant.profiles import ProfileDraft


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeToolContext:
    state: dict[str, Any] = field(default_factory=dict)


@dataclass
class Turn:
    draft: ProfileDraft
    runner: ProtocolRunner
    data_parts: DataParts
    tools: dict[str, Any]
    context: FakeToolContext

    async def call(self, name: str, **args: Any) -> dict[str, Any]:
        return await self.tools[name].run_async(args=args, tool_context=self.context)


def turn(
    stored: dict[str, Any] | None = None,
    *,
    skill: str = "lifecoach",
    clock: Clock | None = None,
    timeout_s: float = 3600.0,
) -> Turn:
    clock = clock or Clock()
    draft = ProfileDraft(stored, clock=clock)
    manifest = SKILLS[skill]
    runner = ProtocolRunner(draft, skill, manifest.loaded_protocols, timeout_s, clock)
    data_parts = DataParts()
    env = ToolEnv(skill_id=skill, draft=draft, data_parts=data_parts, protocols=runner)
    tools = {tool.name: tool for tool in build_tools(manifest.tools, env)}
    return Turn(draft, runner, data_parts, tools, FakeToolContext())
