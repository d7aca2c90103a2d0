"""The offline model answers the extractor prompts deterministically (no key needed)."""

from __future__ import annotations

import json

import pytest

from agents.offline import OfflineModel
from agents.offline.extractors import answer
from confidant.jobs import prompts
from confidant.jobs.extractor import Extractor, InvalidExtractionError, parse_answer
from confidant.jobs.handlers import EmotionReading, MemoryPlan, SummaryAnswer


def _request(**sections: str) -> str:
    return "\n\n".join(prompts.section(marker, body) for marker, body in sections.items())


def _emotion(message: str, previous: str = "") -> dict:
    text = _request(**{prompts.PREVIOUS_MOOD: previous, prompts.USER_MESSAGE: message})
    reply = answer(prompts.system_instruction("emotion", prompts.EMOTION_INSTRUCTION), text)
    assert reply is not None
    return json.loads(reply)


def test_moods_come_from_cue_words_and_the_trend_from_the_previous_mood() -> None:
    assert _emotion("I feel stuck and tired") == {
        "user_mood": "stuck",
        "other_mood": None,
        "trend": "steady",
        "tags": ["stuck", "tired"],
    }
    assert _emotion("I am happy today", previous="sad")["trend"] == "improving"
    assert _emotion("我很焦虑", previous="calm")["trend"] == "worsening"
    assert _emotion("nothing in particular")["user_mood"] == "neutral"
    assert _emotion("My boss is angry. I am calm.")["other_mood"] == "angry"


def test_the_summary_keeps_the_previous_one_and_adds_the_new_messages() -> None:
    text = _request(
        **{
            prompts.PREVIOUS_SUMMARY: 'The user said "I procrastinate".',
            prompts.NEW_EVENTS: (
                "user: I am afraid of failing. It scares me.\nassistant: I hear you."
            ),
        }
    )
    reply = answer(prompts.system_instruction("summary", prompts.SUMMARY_INSTRUCTION), text)
    summary = json.loads(reply or "")["summary"]
    assert summary == 'The user said "I procrastinate". The user said "I am afraid of failing".'


def test_memory_operations_add_new_facts_update_changed_ones_and_skip_known_ones() -> None:
    text = _request(
        **{
            prompts.USER_MESSAGE: "I am a nurse now. I have a dog. My sister is kind. Nice day!",
            prompts.EXISTING_MEMORIES: "- [m1] I am a teacher\n- [m2] I have a dog",
        }
    )
    reply = answer(prompts.system_instruction("memory", prompts.MEMORY_INSTRUCTION), text)
    assert json.loads(reply or "") == {
        "operations": [
            {"op": "update", "id": "m1", "text": "I am a nurse now"},
            {"op": "add", "id": None, "text": "My sister is kind"},
        ]
    }


def test_a_coach_prompt_is_not_an_extractor_prompt() -> None:
    assert answer("# IDENTITY & MISSION\nYou are OneMind", "hello") is None


async def test_the_extractor_validates_the_offline_models_json() -> None:
    extractor = Extractor(OfflineModel())
    reading = await extractor.extract(
        prompts.EMOTION_TASK,
        prompts.EMOTION_INSTRUCTION,
        _request(**{prompts.USER_MESSAGE: "我有点累"}),
        EmotionReading,
    )
    assert reading.user_mood == "tired"
    plan = await extractor.extract(
        prompts.MEMORY_TASK,
        prompts.MEMORY_INSTRUCTION,
        _request(**{prompts.USER_MESSAGE: "我是老师，我有两个孩子"}),
        MemoryPlan,
    )
    assert [op.text for op in plan.operations] == ["我是老师", "我有两个孩子"]


def test_answers_are_parsed_strictly() -> None:
    assert parse_answer('```json\n{"summary": "ok"}\n```', SummaryAnswer).summary == "ok"
    with pytest.raises(InvalidExtractionError):
        parse_answer("Sure! Here is the summary.", SummaryAnswer)
    with pytest.raises(InvalidExtractionError):
        parse_answer('{"summary": ""}', SummaryAnswer)
