"""The onemind coach's tools: stage transitions, wisdom retrieval and the integration crystal.

Each tool is a small `BaseTool` with a module-level `FunctionDeclaration`: building one per
request is a plain object construction, whereas per-request closures wrapped in `FunctionTool`
rebuild their declaration (~1 ms each). Dependencies (the wisdom index) are held by the tool;
everything per-session is read from `tool_context.state`.
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from typing import Any

from google.adk.memory.memory_entry import MemoryEntry
from google.adk.tools import BaseTool, ToolContext
from google.genai import types

from agents.onemind import state_keys
from agents.onemind.stages import LAST_STAGE, Stage, current_stage, next_stage, parse_stage
from agents.safety.detector import normalise_locale
from confidant.ports import WISDOM_TOPICS, WisdomIndex

logger = logging.getLogger(__name__)

ADVANCE_STAGE = "advance_stage"
RETRIEVE_WISDOM = "retrieve_wisdom"
SAVE_CRYSTAL = "save_crystal"

CRYSTAL_KIND = "integration_crystal"
STATUS_OK = "ok"
STATUS_ERROR = "error"
STATUS_NO_WISDOM = "no_wisdom"
# Said to the model whenever retrieval brings nothing back (none found, timeout, 429, outage).
NO_WISDOM_NOTE = (
    "No wisdom passage is available for this. Go on without one: do not quote, cite or invent"
    " any passage, saying, author or source."
)
MAX_SUMMARY_CHARS = 500
MAX_NAME_CHARS = 80
MAX_INSIGHT_CHARS = 1000
MAX_TOP_K = 5
# Crystal ids are derived from the session, so a retried save overwrites instead of duplicating.
_CRYSTAL_NAMESPACE = uuid.UUID("6f1d3c2e-5b8a-4e47-9a0c-2d6b1f0e9c41")

_STRING = types.Schema(type=types.Type.STRING)

ADVANCE_STAGE_DECLARATION = types.FunctionDeclaration(
    name=ADVANCE_STAGE,
    description=(
        "Move the conversation to the next stage of the protocol once the current stage's goal"
        " is reached. Only the immediately following stage is accepted."
    ),
    parameters=types.Schema(
        type=types.Type.OBJECT,
        properties={
            "next_stage": types.Schema(
                type=types.Type.STRING,
                enum=[stage.value for stage in Stage],
                description="The stage to move to: exactly the one after the current stage.",
            ),
            "summary": types.Schema(
                type=types.Type.STRING,
                description="One sentence: what the finished stage produced.",
            ),
        },
        required=["next_stage", "summary"],
    ),
)

RETRIEVE_WISDOM_DECLARATION = types.FunctionDeclaration(
    name=RETRIEVE_WISDOM,
    description=(
        "Retrieve short psychology / practical-wisdom passages that can help integrate the"
        " user's inner conflict. Only available in stage_2_integration."
    ),
    parameters=types.Schema(
        type=types.Type.OBJECT,
        properties={
            "query": types.Schema(
                type=types.Type.STRING, description="The inner conflict, in the user's words."
            ),
            "top_k": types.Schema(
                type=types.Type.INTEGER,
                description=f"How many passages to return (1-{MAX_TOP_K}, default 3).",
            ),
            "topic": types.Schema(
                type=types.Type.STRING,
                enum=list(WISDOM_TOPICS),
                description="Optional: only passages on this theme.",
            ),
        },
        required=["query"],
    ),
)

SAVE_CRYSTAL_DECLARATION = types.FunctionDeclaration(
    name=SAVE_CRYSTAL,
    description=(
        "Record this session's growth as an integration crystal in the user's long-term memory."
        " Only available in stage_4_solidification; call it once."
    ),
    parameters=types.Schema(
        type=types.Type.OBJECT,
        properties={
            "name": types.Schema(type=types.Type.STRING, description="A short name (2-6 words)."),
            "insight": types.Schema(
                type=types.Type.STRING, description="The insight, in the user's own words."
            ),
        },
        required=["name", "insight"],
    ),
)


def error_result(reason: str, **extra: Any) -> dict[str, Any]:
    return {"status": STATUS_ERROR, "reason": reason, **extra}


def _text_arg(args: dict[str, Any], key: str, limit: int) -> str:
    value = args.get(key)
    return value.strip()[:limit] if isinstance(value, str) else ""


def _wrong_stage(tool_name: str, required: Stage, current: Stage) -> dict[str, Any]:
    return error_result(
        f"{tool_name} is only available in {required.value}; the current stage is {current.value}.",
        current_stage=current.value,
    )


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


class AdvanceStageTool(BaseTool):
    """Moves `current_stage` forward by exactly one stage and files the finished stage's summary."""

    def __init__(self) -> None:
        super().__init__(
            name=ADVANCE_STAGE, description=ADVANCE_STAGE_DECLARATION.description or ""
        )

    def _get_declaration(self) -> types.FunctionDeclaration:
        return ADVANCE_STAGE_DECLARATION

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        current = current_stage(tool_context.state)
        expected = next_stage(current)
        requested = parse_stage(args.get("next_stage"))
        summary = _text_arg(args, "summary", MAX_SUMMARY_CHARS)
        if expected is None:
            return error_result(
                f"{current.value} is the last stage; there is no next stage.",
                current_stage=current.value,
            )
        if requested != expected:
            return error_result(
                f"From {current.value} the only allowed next stage is {expected.value}.",
                current_stage=current.value,
            )
        if not summary:
            return error_result("summary must be a non-empty string.", current_stage=current.value)
        # Copy before writing: assigning a new dict is what records the change in the delta.
        notes = dict(tool_context.state.get(state_keys.STAGE_NOTES) or {})
        notes[current.value] = summary
        tool_context.state[state_keys.STAGE_NOTES] = notes
        tool_context.state[state_keys.CURRENT_STAGE] = expected.value
        return {
            "status": STATUS_OK,
            "previous_stage": current.value,
            "current_stage": expected.value,
        }


def _no_wisdom(reason: str) -> dict[str, Any]:
    return {"status": STATUS_NO_WISDOM, "passages": [], "reason": reason, "note": NO_WISDOM_NOTE}


class RetrieveWisdomTool(BaseTool):
    """Searches the wisdom index (stage 2 only) in the conversation's language."""

    def __init__(self, wisdom: WisdomIndex, default_locale: str | None = None) -> None:
        super().__init__(
            name=RETRIEVE_WISDOM, description=RETRIEVE_WISDOM_DECLARATION.description or ""
        )
        self._wisdom = wisdom
        self._default_locale = normalise_locale(default_locale)

    def _get_declaration(self) -> types.FunctionDeclaration:
        return RETRIEVE_WISDOM_DECLARATION

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        current = current_stage(tool_context.state)
        if current is not Stage.INTEGRATION:
            return _wrong_stage(RETRIEVE_WISDOM, Stage.INTEGRATION, current)
        query = _text_arg(args, "query", MAX_INSIGHT_CHARS)
        if not query:
            return error_result("query must be a non-empty string.")
        raw_top_k = args.get("top_k", 3)
        top_k = raw_top_k if isinstance(raw_top_k, int) and not isinstance(raw_top_k, bool) else 3
        top_k = max(1, min(MAX_TOP_K, top_k))
        locale = normalise_locale(tool_context.state.get(state_keys.LOCALE)) or self._default_locale
        topic = args.get("topic") if args.get("topic") in WISDOM_TOPICS else None
        # Passed only when set, so WisdomIndex adapters without topics keep working.
        options = {"topic": topic} if topic else {}
        try:
            passages = await self._wisdom.search(query, top_k=top_k, locale=locale, **options)
        except Exception as exc:
            # A retrieval outage (timeout, 429, 5xx) must not abort the turn: the coach goes on
            # without wisdom, and is told plainly that there is none to quote.
            logger.warning("wisdom search failed: %s", exc, exc_info=True)
            return _no_wisdom("wisdom retrieval is unavailable right now.")
        if not passages:
            return _no_wisdom("no passage matched.")
        return {
            "status": STATUS_OK,
            "passages": [
                {
                    "id": passage.id,
                    "title": passage.title,
                    "text": passage.text,
                    "source": passage.source,
                    "score": round(passage.score, 4),
                }
                for passage in passages
            ],
        }


class SaveCrystalTool(BaseTool):
    """Writes the session's integration crystal to long-term memory (stage 4, once per session)."""

    def __init__(self) -> None:
        super().__init__(name=SAVE_CRYSTAL, description=SAVE_CRYSTAL_DECLARATION.description or "")

    def _get_declaration(self) -> types.FunctionDeclaration:
        return SAVE_CRYSTAL_DECLARATION

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        current = current_stage(tool_context.state)
        if current is not LAST_STAGE:
            return _wrong_stage(SAVE_CRYSTAL, LAST_STAGE, current)
        existing_ids = list(tool_context.state.get(state_keys.CRYSTAL_IDS) or [])
        if existing_ids:
            return {
                "status": STATUS_OK,
                "crystal_id": existing_ids[-1],
                "name": tool_context.state.get(state_keys.CRYSTAL_NAME, ""),
                "already_saved": True,
            }
        name = _text_arg(args, "name", MAX_NAME_CHARS)
        insight = _text_arg(args, "insight", MAX_INSIGHT_CHARS)
        if not name or not insight:
            return error_result("name and insight must be non-empty strings.")

        session = tool_context.session
        crystal_key = f"{session.app_name}/{session.user_id}/{session.id}"
        crystal_id = str(uuid.uuid5(_CRYSTAL_NAMESPACE, crystal_key))
        created_at = _iso(datetime.now(UTC))
        notes = dict(tool_context.state.get(state_keys.STAGE_NOTES) or {})
        notes[current.value] = insight
        metadata: dict[str, Any] = {
            "kind": CRYSTAL_KIND,
            "name": name,
            "insight": insight,
            "stages": notes,
            "session_id": session.id,
            "created_at": created_at,
        }
        if session.events:
            metadata["started_at"] = _iso(datetime.fromtimestamp(session.events[0].timestamp, UTC))
        entry = MemoryEntry(
            id=crystal_id,
            content=types.Content(role="user", parts=[types.Part(text=insight)]),
            author=tool_context.agent_name,
            timestamp=created_at,
            custom_metadata=metadata,
        )
        try:
            await tool_context.add_memory(memories=[entry])
        except Exception:
            # Nothing is recorded in state, so a later call can try again.
            logger.exception("saving integration crystal %s failed", crystal_id)
            return error_result("the crystal could not be saved right now.")
        tool_context.state[state_keys.STAGE_NOTES] = notes
        tool_context.state[state_keys.CRYSTAL_IDS] = [*existing_ids, crystal_id]
        tool_context.state[state_keys.CRYSTAL_NAME] = name
        return {"status": STATUS_OK, "crystal_id": crystal_id, "name": name, "already_saved": False}
