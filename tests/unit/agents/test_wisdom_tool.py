"""retrieve_wisdom: topics reach the index; nothing found is said plainly, never papered over."""

from __future__ import annotations

from dataclasses import dataclass

from agents.deps import AgentDeps, TurnContext
from agents.onemind.stages import Stage
from agents.onemind.tools import NO_WISDOM_NOTE, RETRIEVE_WISDOM_DECLARATION, STATUS_NO_WISDOM
from agents.safety import CrisisDetector
from confidant.ports import WISDOM_TOPICS, WisdomIndex, WisdomPassage
from tests.unit.agents.support import (
    RecordingWisdom,
    ScriptedLlm,
    call,
    run_turn,
    session_in_stage,
)


@dataclass
class EmptyWisdom:
    async def search(
        self, query: str, *, top_k: int = 3, locale: str | None = None, topic: str | None = None
    ) -> list[WisdomPassage]:
        return []


async def _retrieve(wisdom: WisdomIndex, **args: object) -> dict[str, object]:
    sessions = await session_in_stage(Stage.INTEGRATION.value)
    result = await run_turn(
        deps=AgentDeps(
            crisis_detector=CrisisDetector(),
            model=ScriptedLlm(steps=[call("retrieve_wisdom", **args), "ok"]),
            wisdom=wisdom,
        ),
        sessions=sessions,
        memory=None,
        turn=TurnContext(user_id="u", session_id="s", locale="en"),
        text="hi",
    )
    (response,) = [r.response or {} for r in result.responses]
    return response


def test_topic_is_offered_as_the_closed_vocabulary() -> None:
    schema = RETRIEVE_WISDOM_DECLARATION.parameters
    assert schema is not None and schema.properties is not None
    assert schema.properties["topic"].enum == list(WISDOM_TOPICS)
    assert schema.required == ["query"]


async def test_a_known_topic_reaches_the_index_and_an_unknown_one_does_not() -> None:
    wisdom = RecordingWisdom()
    assert (await _retrieve(wisdom, query="can't sleep", topic="sleep"))["status"] == "ok"
    assert (await _retrieve(wisdom, query="can't sleep", topic="astrology"))["status"] == "ok"
    assert wisdom.topics == ["sleep", None]


async def test_nothing_found_says_so_and_forbids_inventing() -> None:
    response = await _retrieve(EmptyWisdom(), query="anything")
    assert response["status"] == STATUS_NO_WISDOM
    assert response["passages"] == [] and response["note"] == NO_WISDOM_NOTE
