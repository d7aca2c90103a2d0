"""The start-up warm-up runs a real turn in memory and never touches the model it is given."""

from __future__ import annotations

from agents.deps import AgentDeps
from confidant.warmup import warm_up
from confidant.wisdom.local_index import LocalWisdomIndex
from tests.support.scripted_model import ScriptedLlm


async def test_warm_up_runs_a_turn_without_the_configured_model() -> None:
    configured = ScriptedLlm(script=["must not be called"])
    reply = await warm_up(AgentDeps(model=configured, wisdom=LocalWisdomIndex()), "onemind")
    assert reply.strip()
    assert configured.requests == []
