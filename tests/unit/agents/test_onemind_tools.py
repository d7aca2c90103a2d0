"""The onemind tools through a Runner driven by a scripted model: guards and idempotency."""

from __future__ import annotations

from typing import Any

from google.adk.sessions import InMemorySessionService

from agents.deps import AgentDeps, TurnContext
from agents.onemind import state_keys
from agents.onemind.stages import Stage
from agents.onemind.tools import (
    ADVANCE_STAGE_DECLARATION,
    RETRIEVE_WISDOM_DECLARATION,
    SAVE_CRYSTAL_DECLARATION,
)
from agents.safety import CrisisDetector
from tests.unit.agents.support import (
    APP,
    RecordingMemoryService,
    RecordingWisdom,
    ScriptedLlm,
    call,
    run_turn,
)


async def _session(state: dict[str, Any] | None) -> InMemorySessionService:
    sessions = InMemorySessionService()
    await sessions.create_session(app_name=APP, user_id="u", session_id="s", state=state)
    return sessions


async def _state(sessions: InMemorySessionService) -> dict[str, Any]:
    stored = await sessions.get_session(app_name=APP, user_id="u", session_id="s")
    assert stored is not None
    return dict(stored.state)


async def test_wrong_stage_calls_return_errors_and_change_nothing() -> None:
    model = ScriptedLlm(
        steps=[
            call("save_crystal", name="n", insight="i"),
            call("retrieve_wisdom", query="q"),
            call("advance_stage", next_stage=Stage.MICRO_ACTION.value, summary="skip"),
            call("advance_stage", next_stage="stage_9_bogus", summary="bogus"),
            call("advance_stage", next_stage=Stage.INTEGRATION.value, summary="   "),
            "fine",
        ]
    )
    wisdom = RecordingWisdom()
    memory = RecordingMemoryService()
    sessions = await _session({"locale": "en"})
    turn = TurnContext(user_id="u", session_id="s", locale="en")

    result = await run_turn(
        deps=AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=wisdom),
        sessions=sessions,
        memory=memory,
        turn=turn,
        text="hello",
    )

    statuses = [(r.name, (r.response or {}).get("status")) for r in result.responses]
    assert statuses == [
        ("save_crystal", "error"),
        ("retrieve_wisdom", "error"),
        ("advance_stage", "error"),
        ("advance_stage", "error"),
        ("advance_stage", "error"),
    ]
    reasons = [str((r.response or {}).get("reason")) for r in result.responses]
    assert "stage_4_solidification" in reasons[0]
    assert "stage_2_integration" in reasons[1]
    assert "stage_2_integration" in reasons[2]
    assert await _state(sessions) == {"locale": "en"}
    assert wisdom.queries == []
    assert memory.added == []


async def test_advance_stage_moves_exactly_one_step_and_files_the_summary() -> None:
    model = ScriptedLlm(
        steps=[
            call("advance_stage", next_stage=Stage.INTEGRATION.value, summary="named it"),
            call("retrieve_wisdom", query="fear of judgement", top_k=99),
            call("advance_stage", next_stage=Stage.MICRO_ACTION.value, summary="integrated"),
            "done",
        ]
    )
    wisdom = RecordingWisdom()
    sessions = await _session(None)
    turn = TurnContext(user_id="u", session_id="s", locale="zh")

    result = await run_turn(
        deps=AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=wisdom),
        sessions=sessions,
        memory=None,
        turn=turn,
        text="hi",
    )

    assert [(r.response or {}).get("status") for r in result.responses] == ["ok", "ok", "ok"]
    # top_k is clamped; locale falls back to the turn's when the state has none.
    assert wisdom.queries == [("fear of judgement", 5, "zh")]
    state = await _state(sessions)
    assert state[state_keys.CURRENT_STAGE] == Stage.MICRO_ACTION.value
    assert state[state_keys.STAGE_NOTES] == {
        Stage.AWARENESS.value: "named it",
        Stage.INTEGRATION.value: "integrated",
    }


async def test_save_crystal_is_written_once_per_session() -> None:
    model = ScriptedLlm(
        steps=[
            call("save_crystal", name="Small steps", insight="Starting small feels safe."),
            call("save_crystal", name="Again", insight="Another one."),
            call("advance_stage", next_stage=Stage.SOLIDIFICATION.value, summary="past the end"),
            "closing",
        ]
    )
    memory = RecordingMemoryService()
    start = {state_keys.CURRENT_STAGE: Stage.SOLIDIFICATION.value}
    sessions = await _session(start)
    turn = TurnContext(user_id="u", session_id="s", locale="en")

    result = await run_turn(
        deps=AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=RecordingWisdom()),
        sessions=sessions,
        memory=memory,
        turn=turn,
        text="I learned something",
    )

    first, second, beyond = (r.response or {} for r in result.responses)
    assert first["status"] == "ok" and first["already_saved"] is False
    assert second == {
        "status": "ok",
        "crystal_id": first["crystal_id"],
        "name": "Small steps",
        "already_saved": True,
    }
    assert beyond["status"] == "error"
    assert len(memory.added) == 1
    assert memory.added[0][2].custom_metadata["name"] == "Small steps"
    state = await _state(sessions)
    assert state[state_keys.CRYSTAL_IDS] == [first["crystal_id"]]
    assert state[state_keys.CURRENT_STAGE] == Stage.SOLIDIFICATION.value


async def test_save_crystal_without_memory_service_reports_an_error_and_records_nothing() -> None:
    model = ScriptedLlm(steps=[call("save_crystal", name="n", insight="i"), "sorry"])
    start = {state_keys.CURRENT_STAGE: Stage.SOLIDIFICATION.value}
    sessions = await _session(start)
    turn = TurnContext(user_id="u", session_id="s", locale="en")

    result = await run_turn(
        deps=AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=RecordingWisdom()),
        sessions=sessions,
        memory=None,
        turn=turn,
        text="done",
    )

    assert (result.responses[0].response or {})["status"] == "error"
    assert state_keys.CRYSTAL_IDS not in await _state(sessions)


async def test_declarations_are_sent_to_the_model() -> None:
    model = ScriptedLlm(steps=["hi"])
    sessions = await _session(None)
    await run_turn(
        deps=AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=RecordingWisdom()),
        sessions=sessions,
        memory=None,
        turn=TurnContext(user_id="u", session_id="s", locale="en"),
        text="hello",
    )
    tools = model.requests[0].config.tools or []
    declarations = [d for tool in tools for d in tool.function_declarations or []]
    assert {d.name for d in declarations} == {
        ADVANCE_STAGE_DECLARATION.name,
        RETRIEVE_WISDOM_DECLARATION.name,
        SAVE_CRYSTAL_DECLARATION.name,
    }
