"""The four-stage onemind conversation, end to end through build_app + Runner (SSE)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from google.adk.sessions import InMemorySessionService

from agents.deps import AgentDeps, TurnContext
from agents.offline import OfflineModel
from agents.onemind import state_keys
from agents.onemind.stages import Stage
from agents.safety import CrisisDetector
from confidant.ports import MemoryRecord
from confidant.wisdom import LocalWisdomIndex
from tests.unit.agents.support import (
    APP,
    CountingLlm,
    RecordingMemoryService,
    TurnResult,
    run_turn,
)

CJK = re.compile(r"[\u4e00-\u9fff]")
SENTENCE_END = re.compile(r"[.!?。！？]+")


@dataclass(frozen=True)
class Step:
    message: str
    stage_after: Stage
    calls: list[str]


CONVERSATIONS: dict[str, list[Step]] = {
    "en": [
        Step(
            "I want to finish my thesis but I keep putting it off because it never feels "
            "good enough.",
            Stage.AWARENESS,
            [],
        ),
        Step(
            "Yes, part of me is terrified of being judged as not perfect.",
            Stage.INTEGRATION,
            ["advance_stage", "retrieve_wisdom"],
        ),
        Step("Both parts want my work to matter.", Stage.MICRO_ACTION, ["advance_stage"]),
        Step(
            "I will write one messy paragraph after breakfast.",
            Stage.SOLIDIFICATION,
            ["advance_stage"],
        ),
        Step("I learned that starting small feels safe.", Stage.SOLIDIFICATION, ["save_crystal"]),
    ],
    "zh": [
        Step("我想写完论文，但总觉得写得不够好，一直在拖延。", Stage.AWARENESS, []),
        Step(
            "是的，我害怕写得不完美被别人评判。",
            Stage.INTEGRATION,
            ["advance_stage", "retrieve_wisdom"],
        ),
        Step("这两个部分都希望我的工作有意义。", Stage.MICRO_ACTION, ["advance_stage"]),
        Step("早饭后写一段粗糙的草稿。", Stage.SOLIDIFICATION, ["advance_stage"]),
        Step("我发现从小处开始会让我感到安全。", Stage.SOLIDIFICATION, ["save_crystal"]),
    ],
}


def assert_reply_rules(text: str, language: str) -> None:
    sentences = [s for s in SENTENCE_END.split(text) if s.strip()]
    assert 1 <= len(sentences) <= 3, text
    assert "you should" not in text.casefold()
    assert "你应该" not in text
    if language == "zh":
        assert CJK.search(text), text
    else:
        assert not CJK.search(text), text


def assert_streamed(result: TurnResult) -> None:
    # Partial chunks carry exactly the text of the final replies (typewriter effect).
    assert result.partial_text
    assert result.partial_text == "".join(result.reply_texts)
    assert sum(1 for event in result.events if event.partial) >= 2


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_four_stage_conversation(language: str) -> None:
    model = CountingLlm(inner=OfflineModel())
    deps = AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=LocalWisdomIndex())
    sessions = InMemorySessionService()
    memory = RecordingMemoryService()
    user, session_id = f"user-{language}", f"session-{language}"
    # zh takes the language from session state, en from the turn (the fallback).
    initial_state = {state_keys.LOCALE: "zh"} if language == "zh" else None
    await sessions.create_session(
        app_name=APP, user_id=user, session_id=session_id, state=initial_state
    )
    turn = TurnContext(user_id=user, session_id=session_id, locale=language)

    results: list[TurnResult] = []
    for step in CONVERSATIONS[language]:
        result = await run_turn(
            deps=deps, sessions=sessions, memory=memory, turn=turn, text=step.message
        )
        results.append(result)
        stored = await sessions.get_session(app_name=APP, user_id=user, session_id=session_id)
        assert stored is not None
        assert stored.state.get(state_keys.CURRENT_STAGE, Stage.AWARENESS.value) == (
            step.stage_after.value
        ), step.message
        assert result.call_names == step.calls, step.message
        assert all(r.response and r.response["status"] == "ok" for r in result.responses)
        assert len(result.reply_texts) == 1
        assert_reply_rules(result.reply_texts[0], language)
        assert_streamed(result)

    # Turn 1: no state written yet; the reflection quotes the stuck point.
    assert "current_stage" not in (results[0].final[0].actions.state_delta or {})
    # Turn 2: the wisdom passage's title is woven into the reply.
    wisdom = next(r for r in results[1].responses if r.name == "retrieve_wisdom")
    assert wisdom.response is not None
    passages = wisdom.response["passages"]
    assert passages and all(p["id"].startswith(f"{language}-") for p in passages)
    assert passages[0]["title"] in results[1].reply_texts[0]

    stored = await sessions.get_session(app_name=APP, user_id=user, session_id=session_id)
    assert stored is not None
    notes = stored.state[state_keys.STAGE_NOTES]
    assert list(notes) == [stage.value for stage in Stage]
    crystal_ids = stored.state[state_keys.CRYSTAL_IDS]
    assert len(crystal_ids) == 1

    # The crystal reached the memory service, with the whole journey in its metadata.
    assert len(memory.added) == 1
    app_name, memory_user, entry = memory.added[0]
    assert (app_name, memory_user) == (APP, user)
    assert entry.id == crystal_ids[0]
    metadata = entry.custom_metadata
    assert metadata["kind"] == "integration_crystal"
    assert metadata["insight"] == CONVERSATIONS[language][-1].message
    assert metadata["name"] and metadata["name"] in results[-1].reply_texts[0]
    assert metadata["stages"] == notes
    assert metadata["session_id"] == session_id
    started = datetime.fromisoformat(metadata["started_at"])
    created = datetime.fromisoformat(metadata["created_at"])
    assert started <= created
    assert entry.content.parts and entry.content.parts[0].text == metadata["insight"]

    # A further message in stage 4: gentle text only, no second crystal.
    after = await run_turn(
        deps=deps, sessions=sessions, memory=memory, turn=turn, text="thank you / 谢谢"
    )
    assert after.call_names == []
    assert_reply_rules(after.reply_texts[0], language)
    assert len(memory.added) == 1

    # Every model call of the session carried the markers the offline model reads.
    for request in model.requests:
        instruction = str(request.config.system_instruction)
        assert f"LANGUAGE: {language}" in instruction
        assert re.search(r"^CURRENT_STAGE: stage_\d_\w+$", instruction, re.MULTILINE)


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_new_session_sees_earlier_crystal(language: str) -> None:
    model = CountingLlm(inner=OfflineModel())
    deps = AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=LocalWisdomIndex())
    sessions = InMemorySessionService()
    memory = RecordingMemoryService()
    user = "returning-user"
    first = TurnContext(user_id=user, session_id="first", locale=language)
    for step in CONVERSATIONS[language]:
        await run_turn(deps=deps, sessions=sessions, memory=memory, turn=first, text=step.message)
    (_, _, entry) = memory.added[0]

    # What the chat layer loads before the next session's turn.
    crystal = MemoryRecord(
        id=entry.id or "",
        user_id=user,
        app=APP,
        kind=entry.custom_metadata["kind"],
        text=entry.custom_metadata["insight"],
        data=dict(entry.custom_metadata),
        session_id="first",
        created_at=datetime.now(UTC),
    )
    second = TurnContext(user_id=user, session_id="second", locale=language, memories=[crystal])
    model.requests.clear()
    result = await run_turn(
        deps=deps,
        sessions=sessions,
        memory=memory,
        turn=second,
        text=CONVERSATIONS[language][0].message,
    )

    assert result.call_names == []
    instruction = str(model.requests[0].config.system_instruction)
    assert "WHAT THIS USER HAS INTEGRATED BEFORE" in instruction
    assert entry.custom_metadata["name"] in instruction
    assert entry.custom_metadata["insight"] in instruction
    assert f"CURRENT_STAGE: {Stage.AWARENESS.value}" in instruction
    stored = await sessions.get_session(app_name=APP, user_id=user, session_id="second")
    assert stored is not None
    assert state_keys.CURRENT_STAGE not in stored.state
