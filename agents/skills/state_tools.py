"""Generic state tools shared by every skill: read_state, write_state, append_to_list.

They act on `skills.{skill}` of the unified profile through the turn's draft: reads see the
turn's own writes, and the writes commit with the turn (a failed turn writes nothing). Bad
arguments come back as `{"status": "error", "error": {"code", "message", "field"}}`, which the
model can act on; no argument can crash the turn.

Merge rule of write_state: nested maps merge, lists replace, an explicit null deletes the key.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.adk.tools import BaseTool, ToolContext
from google.genai import types

from agents.skills.env import ToolEnv
from confidant.profiles.ops import AppendOp, MergeOp, get_path
from confidant.profiles.rules import (
    MAX_LIST_ITEMS,
    RESERVED_SECTIONS,
    ProfileRuleError,
    check_value,
    parse_path,
)

CREATED_AT = "_created_at"

READ_STATE = types.FunctionDeclaration(
    name="read_state",
    description="Read what the current skill keeps about the user (all sections, or some).",
    parameters=types.Schema(
        type=types.Type.OBJECT,
        properties={
            "sections": types.Schema(
                type=types.Type.ARRAY,
                items=types.Schema(type=types.Type.STRING),
                description="Section names to read; omit to read everything.",
            )
        },
    ),
)
# Free-form objects (`data`, `entry`) are declared as JSON schema: Gemini refuses an OBJECT
# `Schema` without properties, and a JSON schema object with open properties is what we mean.
WRITE_STATE = types.FunctionDeclaration(
    name="write_state",
    description=(
        "Save data in one section of the current skill's state, deep-merged: nested objects "
        "merge, lists replace, a null value deletes that key."
    ),
    parameters_json_schema={
        "type": "object",
        "properties": {
            "section": {
                "type": "string",
                "description": 'Section name, e.g. "goals" or "north_star".',
            },
            "data": {"type": "object", "description": "The data to merge in."},
        },
        "required": ["section", "data"],
    },
)
APPEND_TO_LIST = types.FunctionDeclaration(
    name="append_to_list",
    description=(
        "Add an entry at the front of a list in the current skill's state (newest first), e.g. "
        'a journal entry at "journal" or a milestone at "progress.milestones".'
    ),
    parameters_json_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Dotted path of the list."},
            "entry": {"type": "object", "description": "The entry to add."},
            "max_items": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIST_ITEMS,
                "description": f"Keep at most this many entries (default {MAX_LIST_ITEMS}).",
            },
        },
        "required": ["path", "entry"],
    },
)


class SkillTool(BaseTool):
    """A tool with a module-level declaration, bound to one skill's ToolEnv."""

    declaration: types.FunctionDeclaration

    def __init__(self, env: ToolEnv) -> None:
        declaration = self.declaration
        super().__init__(name=declaration.name or "", description=declaration.description or "")
        self.env = env

    def _get_declaration(self) -> types.FunctionDeclaration:
        return self.declaration

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            return self.run(args, tool_context)
        except ProfileRuleError as exc:
            return exc.to_result()

    def run(self, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any]:
        raise NotImplementedError


class ReadStateTool(SkillTool):
    declaration = READ_STATE

    def run(self, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any]:
        data = {
            k: v
            for k, v in self.env.draft.skill(self.env.skill_id).items()
            if k not in RESERVED_SECTIONS
        }
        sections = args.get("sections")
        if sections is not None:
            if not isinstance(sections, list) or not all(isinstance(s, str) for s in sections):
                raise ProfileRuleError(
                    "invalid_sections", "`sections` must be a list of section names", "sections"
                )
            data = {k: v for k, v in data.items() if k in sections}
        if not data:
            return {"status": "empty", "skill_id": self.env.skill_id, "data": {}}
        return {"status": "ok", "skill_id": self.env.skill_id, "data": data}


class WriteStateTool(SkillTool):
    declaration = WRITE_STATE

    def run(self, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any]:
        path = parse_path(args.get("section"), field="section")
        data = args.get("data")
        if not isinstance(data, dict) or not data:
            raise ProfileRuleError("invalid_data", "`data` must be a non-empty object", "data")
        check_value(data, field="data")
        self.env.draft.write_skill(self.env.skill_id, [MergeOp(path, data)])
        saved = get_path(self.env.draft.skill(self.env.skill_id), path)
        return {
            "status": "ok",
            "skill_id": self.env.skill_id,
            "section": ".".join(path),
            "data": saved,
        }


class AppendToListTool(SkillTool):
    declaration = APPEND_TO_LIST

    def run(self, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any]:
        path = parse_path(args.get("path"))
        entry = args.get("entry")
        if not isinstance(entry, dict) or not entry:
            raise ProfileRuleError("invalid_entry", "`entry` must be a non-empty object", "entry")
        max_items = args.get("max_items", MAX_LIST_ITEMS)
        if isinstance(max_items, float) and max_items.is_integer():
            max_items = int(max_items)  # JSON numbers may arrive as floats
        if (
            not isinstance(max_items, int)
            or isinstance(max_items, bool)
            or not (1 <= max_items <= MAX_LIST_ITEMS)
        ):
            raise ProfileRuleError(
                "invalid_max_items", f"`max_items` must be 1-{MAX_LIST_ITEMS}", "max_items"
            )
        current = get_path(self.env.draft.skill(self.env.skill_id), path)
        if current is not None and not isinstance(current, list):
            raise ProfileRuleError(
                "not_a_list",
                f"`{'.'.join(path)}` holds a {type(current).__name__}, not a list",
                "path",
            )
        entry = {**entry, CREATED_AT: datetime.now(UTC).isoformat()}
        check_value(entry, field="entry")
        self.env.draft.write_skill(self.env.skill_id, [AppendOp(path, entry, max_items)])
        items = get_path(self.env.draft.skill(self.env.skill_id), path) or []
        return {
            "status": "ok",
            "skill_id": self.env.skill_id,
            "path": ".".join(path),
            "count": len(items),
            "entry": entry,
        }
