"""The crisis guard through a real Runner: the model is never called on a crisis message."""

from __future__ import annotations

import logging
from datetime import datetime

import pytest
from google.adk.sessions import InMemorySessionService

from agents.deps import AgentDeps, TurnContext
from agents.offline import OfflineModel
from agents.safety import (
    CRISIS_GUARD_PLUGIN_NAME,
    CRISIS_STATE_KEY,
    CrisisDetector,
    CrisisGuardPlugin,
    check_in_section,
)
from agents.safety.followup import CHECK_IN_HEADER
from confidant.wisdom import LocalWisdomIndex
from tests.unit.agents.support import CountingLlm, RecordingMemoryService, run_turn

CASES = [
    ("en", None, "I want to kill myself", "988"),
    ("en", None, "ｋ ｉ ｌ ｌ  m y s e l f", "988"),
    ("zh", None, "我真的不想活了", "010-82951332"),
    ("zh", None, "自 殺", "400-161-9995"),
    # The session's locale wins over the message's script.
    ("en", "zh", "I want to end it all", "400-161-9995"),
    ("zh", "en", "我想自杀", "988"),
]


@pytest.mark.parametrize(("turn_locale", "state_locale", "message", "hotline"), CASES)
async def test_crisis_message_gets_fixed_reply_without_model_call(
    turn_locale: str, state_locale: str | None, message: str, hotline: str
) -> None:
    model = CountingLlm(inner=OfflineModel())
    deps = AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=LocalWisdomIndex())
    sessions = InMemorySessionService()
    state = {"locale": state_locale} if state_locale else None
    await sessions.create_session(app_name="onemind", user_id="u1", session_id="s1", state=state)
    turn = TurnContext(user_id="u1", session_id="s1", locale=turn_locale)

    result = await run_turn(
        deps=deps, sessions=sessions, memory=RecordingMemoryService(), turn=turn, text=message
    )

    assert model.requests == []
    assert len(result.events) == 1
    reply = result.events[0]
    assert reply.author == "model"
    assert reply.content is not None
    assert hotline in (reply.content.parts[0].text or "")
    stored = await sessions.get_session(app_name="onemind", user_id="u1", session_id="s1")
    assert stored is not None
    assert [event.author for event in stored.events] == ["user", "model"]
    assert "current_stage" not in stored.state


async def test_ordinary_message_reaches_the_model_and_crisis_after_it_does_not() -> None:
    model = CountingLlm(inner=OfflineModel())
    deps = AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=LocalWisdomIndex())
    sessions = InMemorySessionService()
    turn = TurnContext(user_id="u1", session_id="s2", locale="en")
    await sessions.create_session(app_name="onemind", user_id="u1", session_id="s2")

    await run_turn(
        deps=deps,
        sessions=sessions,
        memory=None,
        turn=turn,
        text="I keep avoiding my thesis because it never feels good enough.",
    )
    assert len(model.requests) == 1

    crisis = await run_turn(
        deps=deps, sessions=sessions, memory=None, turn=turn, text="I could just kms"
    )
    assert len(model.requests) == 1
    assert "988" in crisis.reply_texts[0]


async def test_locale_sent_with_the_message_picks_the_reply() -> None:
    # The chat layer passes the request's locale as the user event's state delta.
    model = CountingLlm(inner=OfflineModel())
    deps = AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=LocalWisdomIndex())
    result = await run_turn(
        deps=deps,
        sessions=InMemorySessionService(),
        memory=None,
        turn=TurnContext(user_id="u1", session_id="s3", locale="zh"),
        text="I want to end it all",
        state_delta={"locale": "zh"},
    )
    assert model.requests == []
    assert "010-82951332" in result.reply_texts[0]


def test_plugin_name_constant() -> None:
    assert CrisisGuardPlugin().name == CRISIS_GUARD_PLUGIN_NAME


async def test_a_crisis_turn_is_stored_with_time_and_signals_and_a_repeat_still_gets_the_reply(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = CountingLlm(inner=OfflineModel())
    deps = AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=LocalWisdomIndex())
    sessions = InMemorySessionService()
    turn = TurnContext(user_id="u1", session_id="s4", locale="en")
    message = "I've been saving up my sleeping pills and I'm going to take them all tonight"

    with caplog.at_level(logging.INFO, logger="agents.safety"):
        first = await run_turn(deps=deps, sessions=sessions, memory=None, turn=turn, text=message)
    reply = first.events[0]
    flag = reply.actions.state_delta[CRISIS_STATE_KEY]  # committed with the reply event
    assert flag["source"] == "lexicon" and flag["count"] == 1 and flag["locale"] == "en"
    assert {"method", "means_plan"} <= set(flag["signals"])
    assert datetime.fromisoformat(flag["at"]).tzinfo is not None
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "means_plan" in logged and "sleeping pills" not in logged  # signals, never text

    second = await run_turn(
        deps=deps, sessions=sessions, memory=None, turn=turn, text="I want to die"
    )
    assert model.requests == []
    assert "988" in second.reply_texts[0]
    stored = await sessions.get_session(app_name="onemind", user_id="u1", session_id="s4")
    assert stored is not None
    assert stored.state[CRISIS_STATE_KEY]["count"] == 2
    assert "explicit_intent" in stored.state[CRISIS_STATE_KEY]["signals"]


async def test_the_next_ordinary_turn_is_told_to_check_in_first() -> None:
    model = CountingLlm(inner=OfflineModel())
    deps = AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=LocalWisdomIndex())
    sessions = InMemorySessionService()
    turn = TurnContext(user_id="u1", session_id="s5", locale="zh")
    await run_turn(deps=deps, sessions=sessions, memory=None, turn=turn, text="遗书已经写好了")
    assert model.requests == []
    await run_turn(deps=deps, sessions=sessions, memory=None, turn=turn, text="我好一点了")
    instruction = str(model.requests[0].config.system_instruction)
    assert CHECK_IN_HEADER in instruction and "farewell" in instruction
    # Before the stage rules: it comes first.
    assert instruction.index(CHECK_IN_HEADER) < instruction.index("CURRENT STAGE RULES")


def test_the_check_in_section_is_only_rendered_after_a_crisis() -> None:
    assert check_in_section({}) is None
    assert check_in_section({CRISIS_STATE_KEY: "garbage"}) is None
    section = check_in_section(
        {CRISIS_STATE_KEY: {"at": "2026-11-23T05:00:00+00:00", "signals": ["burden"]}}
    )
    assert section is not None
    assert "2026-11-23T05:00:00+00:00" in section and "burden" in section
