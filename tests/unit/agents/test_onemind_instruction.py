"""The instruction text: markers, the current stage's rules only, past crystals."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agents.deps import TurnContext
from agents.onemind import prompts, state_keys
from agents.onemind.agent import render_instruction
from agents.onemind.stages import STAGE_ORDER, Stage, current_stage, next_stage, stage_index
from confidant.ports import MemoryRecord


def _memory(kind: str, name: str, insight: str) -> MemoryRecord:
    return MemoryRecord(
        id=name,
        user_id="u",
        app="onemind",
        kind=kind,
        text=insight,
        data={"name": name, "insight": insight},
        created_at=datetime.now(UTC),
    )


@pytest.mark.parametrize("stage", list(Stage))
def test_instruction_carries_the_current_stage_and_only_its_rules(stage: Stage) -> None:
    text = render_instruction(
        {state_keys.CURRENT_STAGE: stage.value}, TurnContext("u", "s", locale="en")
    )
    assert f"\nCURRENT_STAGE: {stage.value}\n" in text
    assert "\nLANGUAGE: en\n" in text
    assert prompts.STAGE_RULES[stage] in text
    for other in Stage:
        if other is not stage:
            assert prompts.STAGE_RULES[other] not in text
    assert 'never say "you should"' in text
    assert "1 to 3 sentences" in text


def test_language_prefers_state_then_turn() -> None:
    turn = TurnContext("u", "s", locale="en")
    assert "\nLANGUAGE: zh\n" in render_instruction({state_keys.LOCALE: "zh-CN"}, turn)
    assert "\nLANGUAGE: en\n" in render_instruction({state_keys.LOCALE: "fr"}, turn)
    assert "\nLANGUAGE: zh\n" in render_instruction({}, TurnContext("u", "s", locale="zh"))


def test_default_stage_is_awareness() -> None:
    text = render_instruction({}, TurnContext("u", "s", locale="en"))
    assert f"CURRENT_STAGE: {Stage.AWARENESS.value}" in text
    assert current_stage({state_keys.CURRENT_STAGE: "garbage"}) is Stage.AWARENESS


def test_past_crystals_and_session_notes_are_listed() -> None:
    memories = [
        _memory("integration_crystal", "Small steps", "Starting small feels safe."),
        _memory("fact", "Ignored", "Not a crystal."),
        _memory("integration_crystal", "允许不完美", "粗糙的初稿也可以。"),
    ]
    state = {
        state_keys.CURRENT_STAGE: Stage.MICRO_ACTION.value,
        state_keys.STAGE_NOTES: {Stage.AWARENESS.value: "fear of judgement"},
    }
    text = render_instruction(state, TurnContext("u", "s", locale="en", memories=memories))
    assert "- Small steps: Starting small feels safe." in text
    assert "- 允许不完美: 粗糙的初稿也可以。" in text
    assert "Ignored" not in text
    assert f"- {Stage.AWARENESS.value}: fear of judgement" in text


def test_no_past_section_without_crystals() -> None:
    text = render_instruction({}, TurnContext("u", "s", locale="en"))
    assert "INTEGRATED BEFORE" not in text


def test_stage_order_helpers() -> None:
    assert [stage.value for stage in STAGE_ORDER] == [
        "stage_1_awareness",
        "stage_2_integration",
        "stage_3_micro_action",
        "stage_4_solidification",
    ]
    assert next_stage(Stage.AWARENESS) is Stage.INTEGRATION
    assert next_stage(Stage.SOLIDIFICATION) is None
    assert stage_index(Stage.MICRO_ACTION) == 3


def test_the_rolling_summary_and_memory_hits_reach_the_instruction() -> None:
    hits = [
        _memory("fact", "f1", "My sister lives in Berlin"),
        _memory("integration_crystal", "Starting small", "starting small quiets the fear"),
        _memory("fact", "f2", "I am a teacher"),
    ]
    turn = TurnContext(
        "u",
        "s",
        locale="en",
        loaded={
            "summary": {"text": "The user is stuck on a thesis.", "covers_seq": 9},
            "memory_hits": hits,
        },
    )
    text = render_instruction({}, turn)
    summary_at = text.index(prompts.ROLLING_SUMMARY_HEADER)
    assert text[summary_at:].splitlines()[2] == "The user is stuck on a thesis."
    facts = text[text.index(prompts.MEMORY_HITS_HEADER) :].splitlines()[2:4]
    assert facts == ["- My sister lives in Berlin", "- I am a teacher"]  # most similar first
    crystals = text[text.index(prompts.PAST_INTEGRATIONS_HEADER) :]
    assert "- Starting small: starting small quiets the fear" in crystals
    assert "teacher" not in crystals  # facts are not crystals

    empty = render_instruction({}, TurnContext("u", "s", locale="en", loaded={"summary": None}))
    assert prompts.ROLLING_SUMMARY_HEADER not in empty
    assert prompts.MEMORY_HITS_HEADER not in empty
