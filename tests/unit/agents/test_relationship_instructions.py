"""Every section of the relationship instructions, on the rendered text, with and without data."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from google.adk.events import Event
from google.genai import types

from agents.deps import TurnContext
from agents.relationship import prompts
from agents.relationship.instructions import (
    EXCERPT_CHARS,
    SpecialistView,
    prior_excerpts,
    render_orchestrator_instruction,
    render_router_instruction,
    render_specialist_instruction,
)
from confidant.ports import MemoryRecord

PERSON = {
    "name": "Alex",
    "relationship": "partner",
    "tags": ["avoidant", "night owl"],
    "status": "went quiet after our fight",
    "notes": "hates being rushed",
}
SELF = {"about": "introvert", "communication_style": "writes long messages", "values": ["trust"]}


def _render(**fields) -> str:  # type: ignore[no-untyped-def]
    return render_specialist_instruction(
        SpecialistView(role=fields.pop("role", "analyzer"), **fields)
    )


@pytest.mark.parametrize("role", ["profile", "analyzer", "strategist", "writer"])
def test_every_specialist_gets_the_persona_and_its_own_framework(role: str) -> None:
    text = _render(role=role)
    assert text.startswith(prompts.PRODUCT_PERSONA)
    assert prompts.FRAMEWORKS[role] in text
    others = [prompts.FRAMEWORKS[r] for r in prompts.FRAMEWORKS if r != role]
    assert not any(framework in text for framework in others)
    assert f"{prompts.AGENT_MARKER}: {role}" in text
    for rule in ("one or two sentences first", "3-8 sentences", "never encourage manipulation"):
        assert rule in text


def test_person_section() -> None:
    text = _render(person=PERSON)
    assert prompts.PERSON_HEADER in text
    assert f"{prompts.PERSON_MARKER}: Alex" in text
    for line in (
        "Relationship: partner",
        "Tags: avoidant, night owl",
        "Status: went quiet after our fight",
        "Notes: hates being rushed",
    ):
        assert line in text
    assert prompts.PERSON_HEADER not in _render()
    assert prompts.PERSON_HEADER not in _render(person={"name": ""})


def test_self_profile_section() -> None:
    text = _render(self_profile=SELF)
    assert prompts.SELF_PROFILE_HEADER in text
    assert "About: introvert" in text and "Values: trust" in text
    assert "Communication style: writes long messages" in text
    assert prompts.SELF_PROFILE_HEADER not in _render()
    assert prompts.SELF_PROFILE_HEADER not in _render(self_profile={"about": "", "values": []})


def test_follow_up_section() -> None:
    assert prompts.FOLLOW_UP_INSTRUCTION in _render(follow_up=True)
    assert prompts.FOLLOW_UP_INSTRUCTION not in _render(follow_up=False)


def test_reply_language_section() -> None:
    assert "Reply only in Simplified Chinese" in _render(language="zh")
    assert "Reply only in English" in _render(language="en")
    assert f"{prompts.LANGUAGE_MARKER}: zh" in _render(language="zh")


def test_output_budget_section() -> None:
    assert "about 300 tokens" in _render(max_tokens=300)
    assert "# OUTPUT BUDGET" not in _render()


def test_pipeline_preamble_carries_the_first_steps_full_output() -> None:
    analysis = "Alex withdraws when criticised. " * 20  # long: passed whole, never cut
    text = _render(role="strategist", pipeline_output=analysis)
    assert prompts.PIPELINE_PREAMBLES["strategist"] in text
    assert f"{prompts.PIPELINE_BEGIN}\n{analysis.strip()}\n{prompts.PIPELINE_END}" in text
    writer = _render(role="writer", pipeline_output="Step 1: apologise.")
    assert prompts.PIPELINE_PREAMBLES["writer"] in writer and "Step 1: apologise." in writer
    assert prompts.PIPELINE_BEGIN not in _render(role="strategist")
    # The first step of a pipeline never sees a preamble.
    assert prompts.PIPELINE_BEGIN not in _render(role="analyzer", pipeline_output=analysis)


def test_recent_interactions_prefer_the_summary_else_first_four_excerpts() -> None:
    excerpts = [f"user: message {i} " + "x" * 200 for i in range(6)]
    summary = {"text": "They argued about holidays; the user wants to apologise.", "covers_seq": 8}
    with_summary = _render(summary=summary, excerpts=excerpts[:4])
    assert prompts.RECENT_SUMMARY_HEADER in with_summary
    assert summary["text"] in with_summary
    assert prompts.RECENT_EXCERPTS_HEADER not in with_summary

    events = [
        Event(
            author="user" if i % 2 == 0 else "analyzer",
            invocation_id=f"i{i // 2}",
            content=types.Content(role="user", parts=[types.Part(text=f"m{i} " + "y" * 300)]),
        )
        for i in range(6)
    ]
    lines = prior_excerpts(events)
    assert (
        len(lines) == 4 and lines[0].startswith("user: m0") and lines[1].startswith("analyzer: m1")
    )
    assert all(len(line.split(": ", 1)[1]) <= EXCERPT_CHARS for line in lines)
    text = _render(excerpts=lines)
    assert prompts.RECENT_EXCERPTS_HEADER in text and "- user: m0" in text
    assert "m4" not in text
    assert prompts.RECENT_EXCERPTS_HEADER not in _render()
    assert prompts.RECENT_SUMMARY_HEADER not in _render(summary=None)


def test_emotion_trajectory_keeps_the_last_five() -> None:
    snapshots = [
        {
            "user_mood": f"mood{i}",
            "other_mood": "distant",
            "trend": "worse",
            "tags": ["fight"],
            "session_id": "s",
            "person_id": "p",
            "created_at": f"2026-01-0{i + 1}",
        }
        for i in range(7)
    ]
    text = _render(emotions=snapshots)
    assert prompts.EMOTIONS_HEADER in text
    assert "mood0" not in text and "mood1" not in text
    assert text.index("mood2") < text.index("mood6")
    assert "- user: mood6; other: distant; trend: worse; tags: fight" in text
    assert prompts.EMOTIONS_HEADER not in _render(emotions=[])


def test_long_term_memory_hits() -> None:
    hit = MemoryRecord(
        id="m1",
        user_id="u",
        app="relationship",
        kind="fact",
        text="Alex's mother was ill last spring",
        created_at=datetime.now(UTC),
    )
    text = _render(memory_hits=[hit, {"text": "Prefers texts over calls"}])
    assert prompts.MEMORY_HEADER in text
    assert "- Alex's mother was ill last spring" in text and "- Prefers texts over calls" in text
    assert prompts.MEMORY_HEADER not in _render(memory_hits=[])


def test_orchestrator_and_router_instructions() -> None:
    turn = TurnContext(user_id="u", session_id="s", locale="en", loaded={"person": PERSON})
    orchestrator = render_orchestrator_instruction(turn, "en")
    assert prompts.ORCHESTRATOR_RULES in orchestrator and "PERSON: Alex" in orchestrator
    router = render_router_instruction(None)
    assert prompts.ROUTER_INSTRUCTION in router and prompts.ROUTER_SUMMARY_HEADER not in router
    with_summary = render_router_instruction({"text": "They fought.", "covers_seq": 3})
    assert with_summary.endswith(f"{prompts.ROUTER_SUMMARY_HEADER}\nThey fought.")
    # Small on purpose: no persona, no profile, no history.
    assert prompts.PRODUCT_PERSONA not in router and len(router) < 1500
