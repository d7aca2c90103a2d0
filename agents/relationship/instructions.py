"""Instruction providers of the relationship engine: each section rendered from the turn.

`render_specialist_instruction` is pure (a `SpecialistView` in, text out), so every section is
tested on the rendered text with and without its data; `SpecialistInstruction` builds the view
from the turn's context and the session on every model call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.events import Event

from agents.deps import TurnContext
from agents.relationship import prompts, roles, state_keys
from agents.safety import LOCALE_STATE_KEY
from agents.safety.detector import normalise_locale

# Context sources this app reads (names agreed in HELPERS.md; `summary`, `emotions` and
# `memory_hits` are produced by the post-turn jobs issue and render only when loaded).
PERSON = "person"
SELF_PROFILE = "self_profile"
SUMMARY = "summary"
EMOTIONS = "emotions"
MEMORY_HITS = "memory_hits"

DEFAULT_LANGUAGE = "en"
MAX_EXCERPTS = 4
EXCERPT_CHARS = 120
MAX_EMOTIONS = 5
MAX_MEMORY_HITS = 5
MEMORY_HIT_CHARS = 240
PERSON_FIELDS = ("relationship", "tags", "status", "notes")
SELF_PROFILE_FIELDS = ("about", "communication_style", "attachment_style", "values", "goals")


@dataclass(frozen=True)
class SpecialistView:
    """Everything one specialist's instruction depends on."""

    role: str
    language: str = DEFAULT_LANGUAGE
    person: Mapping[str, Any] | None = None
    self_profile: Mapping[str, Any] | None = None
    follow_up: bool = False
    max_tokens: int | None = None
    pipeline_output: str | None = None
    summary: Mapping[str, Any] | None = None
    excerpts: Sequence[str] = field(default_factory=tuple)
    emotions: Sequence[Mapping[str, Any]] = field(default_factory=tuple)
    memory_hits: Sequence[Any] = field(default_factory=tuple)


def _flat(text: object, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _value(value: object) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    return str(value)


def role_section(role: str, language: str) -> str:
    return prompts.ROLE_TEMPLATE.format(
        marker=prompts.AGENT_MARKER,
        role=role,
        language_marker=prompts.LANGUAGE_MARKER,
        language=language,
    )


def person_section(person: Mapping[str, Any] | None) -> str | None:
    if not person or not person.get("name"):
        return None
    lines = [prompts.PERSON_HEADER, f"{prompts.PERSON_MARKER}: {_flat(person['name'], 80)}"]
    for name in PERSON_FIELDS:
        value = person.get(name)
        if value:
            lines.append(f"{name.replace('_', ' ').capitalize()}: {_value(value)}")
    return "\n".join(lines)


def self_profile_section(profile: Mapping[str, Any] | None) -> str | None:
    lines = [
        f"{name.replace('_', ' ').capitalize()}: {_value(profile[name])}"
        for name in SELF_PROFILE_FIELDS
        if profile and profile.get(name)
    ]
    return "\n".join([prompts.SELF_PROFILE_HEADER, *lines]) if lines else None


def follow_up_section(follow_up: bool) -> str | None:
    return prompts.FOLLOW_UP_INSTRUCTION if follow_up else None


def language_section(language: str) -> str:
    name = prompts.LANGUAGE_NAMES.get(language, prompts.LANGUAGE_NAMES[DEFAULT_LANGUAGE])
    return prompts.LANGUAGE_INSTRUCTION.format(language_name=name)


def budget_section(max_tokens: int | None) -> str | None:
    return prompts.BUDGET_INSTRUCTION.format(max_tokens=max_tokens) if max_tokens else None


def pipeline_section(role: str, pipeline_output: str | None) -> str | None:
    preamble = prompts.PIPELINE_PREAMBLES.get(role)
    if not preamble or not pipeline_output or not pipeline_output.strip():
        return None
    return "\n".join(
        [preamble, prompts.PIPELINE_BEGIN, pipeline_output.strip(), prompts.PIPELINE_END]
    )


def recent_section(summary: Mapping[str, Any] | None, excerpts: Sequence[str]) -> str | None:
    """The rolling summary when there is one, else the conversation's first messages."""
    text = str(summary.get("text") or "").strip() if summary else ""
    if text:
        return f"{prompts.RECENT_SUMMARY_HEADER}\n{text}"
    if excerpts:
        return "\n".join([prompts.RECENT_EXCERPTS_HEADER, *(f"- {e}" for e in excerpts)])
    return None


def emotions_section(emotions: Sequence[Mapping[str, Any]]) -> str | None:
    lines = []
    for snapshot in list(emotions)[-MAX_EMOTIONS:]:
        tags = _value(snapshot.get("tags") or [])
        line = (
            f"- user: {snapshot.get('user_mood') or '?'}; other: "
            f"{snapshot.get('other_mood') or '?'}; trend: {snapshot.get('trend') or '?'}"
        )
        lines.append(line + (f"; tags: {tags}" if tags else ""))
    return "\n".join([prompts.EMOTIONS_HEADER, *lines]) if lines else None


def _memory_text(hit: Any) -> str:
    text = hit.get("text") if isinstance(hit, Mapping) else getattr(hit, "text", "")
    return _flat(text or "", MEMORY_HIT_CHARS)


def memory_section(hits: Sequence[Any]) -> str | None:
    lines = [f"- {text}" for text in map(_memory_text, list(hits)[:MAX_MEMORY_HITS]) if text]
    return "\n".join([prompts.MEMORY_HEADER, *lines]) if lines else None


def render_specialist_instruction(view: SpecialistView) -> str:
    sections = [
        prompts.PRODUCT_PERSONA,
        role_section(view.role, view.language),
        prompts.FRAMEWORKS[view.role],
        person_section(view.person),
        self_profile_section(view.self_profile),
        pipeline_section(view.role, view.pipeline_output),
        recent_section(view.summary, view.excerpts),
        emotions_section(view.emotions),
        memory_section(view.memory_hits),
        follow_up_section(view.follow_up),
        budget_section(view.max_tokens),
        language_section(view.language),
    ]
    return "\n\n".join(section for section in sections if section)


def render_orchestrator_instruction(turn: TurnContext, language: str) -> str:
    sections = [
        prompts.PRODUCT_PERSONA,
        role_section(roles.ORCHESTRATOR, language),
        prompts.ORCHESTRATOR_RULES,
        person_section(turn.loaded.get(PERSON)),
        self_profile_section(turn.loaded.get(SELF_PROFILE)),
    ]
    return "\n\n".join(section for section in sections if section)


def render_router_instruction(summary: Mapping[str, Any] | None) -> str:
    """Kept small on purpose: the router is an extra call on every turn."""
    sections = [prompts.ROUTER_INSTRUCTION, f"{prompts.AGENT_MARKER}: {roles.ROUTER}"]
    text = str(summary.get("text") or "").strip() if summary else ""
    if text:
        sections.append(f"{prompts.ROUTER_SUMMARY_HEADER}\n{text}")
    return "\n\n".join(sections)


def conversation_language(state: Mapping[str, Any], turn: TurnContext) -> str:
    return (
        normalise_locale(state.get(LOCALE_STATE_KEY))
        or normalise_locale(turn.locale)
        or DEFAULT_LANGUAGE
    )


def _event_text(event: Event) -> str:
    if not event.content or not event.content.parts:
        return ""
    return "".join(p.text for p in event.content.parts if p.text and not p.thought)


def prior_excerpts(prior: Sequence[Event]) -> list[str]:
    """The conversation's first messages, each cut to EXCERPT_CHARS."""
    excerpts: list[str] = []
    for event in prior:
        text = _event_text(event)
        if event.partial or not text:
            continue
        speaker = "user" if event.author == "user" else event.author
        excerpts.append(f"{speaker}: {_flat(text, EXCERPT_CHARS)}")
        if len(excerpts) == MAX_EXCERPTS:
            break
    return excerpts


def is_follow_up(prior: Sequence[Event]) -> bool:
    """A specialist already answered in this session."""
    return any(e.author in roles.SPECIALISTS and _event_text(e) for e in prior)


def specialist_view(
    role: str, turn: TurnContext, state: Mapping[str, Any], prior: Sequence[Event]
) -> SpecialistView:
    loaded = turn.loaded
    return SpecialistView(
        role=role,
        language=conversation_language(state, turn),
        person=loaded.get(PERSON),
        self_profile=loaded.get(SELF_PROFILE),
        follow_up=is_follow_up(prior),
        max_tokens=turn.options.get("max_tokens"),
        pipeline_output=state.get(state_keys.PIPELINE_OUTPUT),
        summary=loaded.get(SUMMARY),
        excerpts=prior_excerpts(prior),
        emotions=loaded.get(EMOTIONS) or (),
        memory_hits=loaded.get(MEMORY_HITS) or (),
    )


def _prior_events(context: ReadonlyContext) -> list[Event]:
    current = context.invocation_id
    return [e for e in context.session.events if e.invocation_id != current]


class SpecialistInstruction:
    """InstructionProvider of one specialist, bound to the turn."""

    def __init__(self, role: str, turn: TurnContext) -> None:
        self._role = role
        self._turn = turn

    async def __call__(self, context: ReadonlyContext) -> str:
        view = specialist_view(self._role, self._turn, context.state, _prior_events(context))
        return render_specialist_instruction(view)


class OrchestratorInstruction:
    def __init__(self, turn: TurnContext) -> None:
        self._turn = turn

    async def __call__(self, context: ReadonlyContext) -> str:
        return render_orchestrator_instruction(
            self._turn, conversation_language(context.state, self._turn)
        )
