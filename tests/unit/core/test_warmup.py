"""The start-up warm-up runs a real turn in memory and never touches the model it is given."""

from __future__ import annotations

from agents.deps import AgentDeps
from agents.safety import CrisisDetector
from agents.safety.detector import Detection
from confidant.warmup import warm_up
from confidant.wisdom.local_index import LocalWisdomIndex
from tests.support.scripted_model import ScriptedLlm


class _RecordingDetector(CrisisDetector):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def detect(self, text: str) -> Detection:
        self.asked.append(text)
        return super().detect(text)


async def test_warm_up_runs_a_turn_without_the_configured_model() -> None:
    configured = ScriptedLlm(script=["must not be called"])
    deps = AgentDeps(model=configured, wisdom=LocalWisdomIndex(), crisis_detector=CrisisDetector())
    reply = await warm_up(deps, "onemind")
    assert reply.strip()
    assert configured.requests == []


async def test_warm_up_warms_the_crisis_detector_that_will_serve() -> None:
    # Not a second detector of its own (the lexicon again, without the n-gram layer if it is on).
    serving = _RecordingDetector()
    deps = AgentDeps(
        model=ScriptedLlm(script=[]), wisdom=LocalWisdomIndex(), crisis_detector=serving
    )
    await warm_up(deps, "onemind")
    assert serving.asked
