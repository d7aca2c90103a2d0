"""The onemind app: one coach agent walking the user through the four-stage protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext

from agents.deps import AgentDeps, TurnContext
from agents.onemind import prompts, state_keys
from agents.onemind.stages import STAGE_ORDER, current_stage, stage_index
from agents.onemind.tools import (
    CRYSTAL_KIND,
    AdvanceStageTool,
    RetrieveWisdomTool,
    SaveCrystalTool,
)
from agents.safety import check_in_section
from agents.safety.detector import normalise_locale
from confidant.ports import MemoryRecord

APP_NAME = "onemind"
ROOT_AGENT_NAME = "onemind_coach"
DEFAULT_LOCALE = "en"
MAX_PAST_CRYSTALS = 3  # enough to build on without crowding the prompt
MAX_CRYSTAL_TEXT_CHARS = 200
MAX_MEMORY_HITS = 5
MAX_SUMMARY_CHARS = 1500
# Context sources onemind declares (AppSpec.context).
SUMMARY_SOURCE = "summary"
MEMORY_HITS_SOURCE = "memory_hits"


def conversation_locale(state: Mapping[str, Any], turn: TurnContext) -> str:
    """The session's `locale` when set, else the turn's, else English."""
    return (
        normalise_locale(state.get(state_keys.LOCALE))
        or normalise_locale(turn.locale)
        or DEFAULT_LOCALE
    )


def _one_line(text: str, limit: int = MAX_CRYSTAL_TEXT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def past_crystal_lines(memories: Sequence[MemoryRecord]) -> list[str]:
    """One "- name: insight" line per integration crystal in `memories` (newest first)."""
    lines: list[str] = []
    for record in memories:
        if record.kind != CRYSTAL_KIND:
            continue
        name = str(record.data.get("name") or "").strip() or "crystal"
        insight = str(record.data.get("insight") or record.text or "").strip()
        lines.append(f"- {_one_line(name, 80)}: {_one_line(insight)}")
        if len(lines) == MAX_PAST_CRYSTALS:
            break
    return lines


def _memory_hits(turn: TurnContext) -> list[MemoryRecord]:
    return list(turn.loaded.get(MEMORY_HITS_SOURCE) or ())


def past_crystals(turn: TurnContext) -> list[MemoryRecord]:
    """Crystals the turn loaded: recent ones (`memories`), then those among the memory hits."""
    seen: set[str] = set()
    crystals = []
    for record in [*turn.memories, *_memory_hits(turn)]:
        if record.kind == CRYSTAL_KIND and record.id not in seen:
            seen.add(record.id)
            crystals.append(record)
    return crystals


def memory_hit_lines(turn: TurnContext) -> list[str]:
    """One "- fact" line per non-crystal memory hit (most similar first)."""
    facts = [r for r in _memory_hits(turn) if r.kind != CRYSTAL_KIND]
    return [f"- {_one_line(r.text)}" for r in facts[:MAX_MEMORY_HITS]]


def rolling_summary(turn: TurnContext) -> str | None:
    summary = turn.loaded.get(SUMMARY_SOURCE)
    text = str(summary.get("text") or "").strip() if isinstance(summary, Mapping) else ""
    return _one_line(text, MAX_SUMMARY_CHARS) if text else None


def render_instruction(state: Mapping[str, Any], turn: TurnContext) -> str:
    """The full system instruction for the current stage (pure, so it is easy to test)."""
    stage = current_stage(state)
    language = conversation_locale(state, turn)
    sections = [
        prompts.IDENTITY_AND_MISSION,
        prompts.STATE_MARKERS_TEMPLATE.format(
            stage_marker=prompts.STAGE_MARKER,
            stage=stage.value,
            language_marker=prompts.LANGUAGE_MARKER,
            language=language,
            stage_number=stage_index(stage),
            language_name=prompts.LANGUAGE_NAMES[language],
        ),
        prompts.STAGE_RULES[stage],
        prompts.TOOL_RULES,
        prompts.ABSOLUTE_RULES,
    ]
    check_in = check_in_section(state)
    if check_in is not None:
        sections.insert(2, check_in)  # right after the session markers: it comes first
    notes = state.get(state_keys.STAGE_NOTES) or {}
    note_lines = [
        f"- {finished.value}: {_one_line(str(notes[finished.value]))}"
        for finished in STAGE_ORDER
        if finished.value in notes
    ]
    if note_lines:
        sections.append("\n".join([prompts.STAGE_NOTES_HEADER, *note_lines]))
    summary = rolling_summary(turn)
    if summary:
        sections.append("\n".join([prompts.ROLLING_SUMMARY_HEADER, summary]))
    fact_lines = memory_hit_lines(turn)
    if fact_lines:
        sections.append("\n".join([prompts.MEMORY_HITS_HEADER, *fact_lines]))
    crystal_lines = past_crystal_lines(past_crystals(turn))
    if crystal_lines:
        sections.append("\n".join([prompts.PAST_INTEGRATIONS_HEADER, *crystal_lines]))
    return "\n\n".join(sections)


class OneMindInstruction:
    """InstructionProvider bound to the turn; re-read on every model call, so a stage advanced
    by a tool is reflected in the very next call of the same turn."""

    def __init__(self, turn: TurnContext) -> None:
        self._turn = turn

    async def __call__(self, context: ReadonlyContext) -> str:
        return render_instruction(context.state, self._turn)


def build_onemind_root(deps: AgentDeps, turn: TurnContext) -> LlmAgent:
    """A fresh onemind tree for one request (agents are never shared between requests)."""
    coach = LlmAgent(
        name=ROOT_AGENT_NAME,
        description="OneMind inner-integration coach (four-stage protocol).",
        model=deps.model,
        instruction=OneMindInstruction(turn),
        tools=[
            AdvanceStageTool(),
            RetrieveWisdomTool(deps.wisdom, default_locale=turn.locale),
            SaveCrystalTool(),
        ],
        # A single agent: no transfer targets, so ADK uses the simpler single flow.
        disallow_transfer_to_parent=True,
        disallow_transfer_to_peers=True,
    )
    return coach
