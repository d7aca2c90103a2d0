"""What a tool may write into a skill's subtree, checked before anything is buffered.

Paths are dotted names of plain segments (`journal`, `progress.milestones`): a segment starts
with a letter and holds letters, digits and `_`, so no path can climb out of the skill's subtree
(`..`, `/`, empty segments) or reach `_meta`, and a few sections are the protocol engine's own
(RESERVED_SECTIONS). Values must be JSON-like, not too deep, with no list directly inside a
list (Firestore refuses nested arrays), and small (MAX_WRITE_BYTES per write); a skill's whole
subtree stays under MAX_SKILL_BYTES. Together with MAX_SKILLS these keep the profile document
far below Firestore's 1 MiB limit.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_WRITE_BYTES = 16_384
MAX_SKILL_BYTES = 96_000
MAX_SKILLS = 8
MAX_LIST_ITEMS = 100
MAX_PATH_DEPTH = 4
MAX_VALUE_DEPTH = 8
MAX_KEY_CHARS = 128
MAX_REPORT_CHARS = 16_000
# Written only by the protocol engine, never by the generic state tools.
RESERVED_SECTIONS = frozenset({"protocol", "paused_protocols", "reports"})

_SEGMENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")


class ProfileRuleError(ValueError):
    """A write the rules refuse; `code` and `field` tell the model what to fix."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field

    def to_result(self) -> dict[str, Any]:
        error = {"code": self.code, "message": self.message}
        if self.field:
            error["field"] = self.field
        return {"status": "error", "error": error}


def parse_path(path: Any, *, field: str = "path", allow_reserved: bool = False) -> tuple[str, ...]:
    """A validated relative path inside a skill's subtree."""
    if not isinstance(path, str) or not path.strip():
        raise ProfileRuleError("invalid_path", f"`{field}` must be a non-empty string", field)
    parts = tuple(path.strip().split("."))
    if len(parts) > MAX_PATH_DEPTH:
        raise ProfileRuleError(
            "invalid_path", f"`{field}` may have at most {MAX_PATH_DEPTH} segments", field
        )
    for part in parts:
        if not _SEGMENT.match(part):
            raise ProfileRuleError(
                "invalid_path",
                f"`{field}` segment {part!r} must start with a letter and hold only letters,"
                " digits and _ (no `_meta`, no `..`)",
                field,
            )
    if not allow_reserved and parts[0] in RESERVED_SECTIONS:
        raise ProfileRuleError(
            "reserved_section",
            f"`{parts[0]}` is kept by the protocol engine; use the protocol tools",
            field,
        )
    return parts


def encoded_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode())


def check_value(value: Any, *, field: str, limit: int = MAX_WRITE_BYTES) -> None:
    """JSON-like, bounded depth, no nested lists, string keys, at most `limit` bytes."""
    _check_node(value, field, depth=0, in_list=False)
    size = encoded_size(value)
    if size > limit:
        raise ProfileRuleError(
            "too_large", f"`{field}` is {size} bytes; at most {limit} per write", field
        )


def _check_node(value: Any, field: str, *, depth: int, in_list: bool) -> None:
    if depth > MAX_VALUE_DEPTH:
        raise ProfileRuleError(
            "too_deep", f"`{field}` nests deeper than {MAX_VALUE_DEPTH} levels", field
        )
    if isinstance(value, dict):
        for key, child in value.items():
            if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS:
                raise ProfileRuleError(
                    "invalid_key", f"keys in `{field}` must be 1-{MAX_KEY_CHARS} characters", field
                )
            if key.startswith("__") or key == "_meta":
                raise ProfileRuleError("invalid_key", f"key {key!r} is reserved", field)
            _check_node(child, field, depth=depth + 1, in_list=False)
    elif isinstance(value, list):
        if in_list:
            raise ProfileRuleError(
                "nested_list", f"`{field}` holds a list directly inside a list", field
            )
        for child in value:
            _check_node(child, field, depth=depth + 1, in_list=True)
    elif not (value is None or isinstance(value, str | int | float | bool)):
        raise ProfileRuleError("invalid_value", f"`{field}` holds a {type(value).__name__}", field)
