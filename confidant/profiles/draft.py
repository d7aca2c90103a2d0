"""A turn's view of the profile: what it loaded, plus the writes it has buffered.

The context source `profile` loads one per turn. Tools read through it (they see their own
writes) and buffer ops on it; the chat service hands the ops to the turn's commit, so a failed
turn writes nothing. It is a read-only Mapping of the current profile, so apps that only read
the profile can treat it as a dict.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from confidant.profiles.model import META, SKILLS
from confidant.profiles.ops import AppendOp, MergeOp, ProfileOp, SetOp, apply_ops, get_path
from confidant.profiles.rules import MAX_SKILL_BYTES, MAX_SKILLS, ProfileRuleError, encoded_size
from confidant.profiles.store import ProfileVersion


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat()


class ProfileDraft(Mapping[str, Any]):
    def __init__(
        self,
        stored: Mapping[str, Any] | None,
        *,
        clock: Callable[[], float] = time.time,
        version: ProfileVersion | None = None,
    ) -> None:
        self.version = version  # lets the commit skip re-reading the profile
        self._stored = dict(stored or {})
        self._ops: list[ProfileOp] = []
        self._view: dict[str, Any] | None = None
        self.clock = clock

    # -- reading ------------------------------------------------------------------------------

    @property
    def view(self) -> dict[str, Any]:
        if self._view is None:
            self._view = apply_ops(self._stored, self._ops)
        return self._view

    def __getitem__(self, key: str) -> Any:
        return self.view[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.view)

    def __len__(self) -> int:
        return len(self.view)

    def skill(self, skill_id: str) -> dict[str, Any]:
        value = get_path(self.view, (SKILLS, skill_id))
        return value if isinstance(value, dict) else {}

    @property
    def ops(self) -> list[ProfileOp]:
        return list(self._ops)

    # -- writing (buffered) -------------------------------------------------------------------

    def write_skill(self, skill_id: str, ops: list[ProfileOp]) -> None:
        """Buffer ops under `skills.{skill_id}` (paths relative to it), stamping `_meta`.

        Refused as a whole (nothing buffered) when the skill's subtree would pass its limit.
        """
        prefix = (SKILLS, skill_id)
        absolute: list[ProfileOp] = [_rebase(op, prefix) for op in ops]
        absolute.append(SetOp((*prefix, META, "updated_at"), iso(self.clock())))
        after = apply_ops(self.view, absolute)
        skills = after.get(SKILLS) or {}
        if skill_id not in self.view.get(SKILLS, {}) and len(skills) > MAX_SKILLS:
            raise ProfileRuleError("too_many_skills", f"at most {MAX_SKILLS} skills keep data")
        size = encoded_size(skills.get(skill_id))
        if size > MAX_SKILL_BYTES:
            raise ProfileRuleError(
                "skill_full",
                f"the {skill_id} data would be {size} bytes (limit {MAX_SKILL_BYTES}); "
                "shorten or delete older entries first",
            )
        self._ops.extend(absolute)
        self._view = after


def _rebase(op: ProfileOp, prefix: tuple[str, ...]) -> ProfileOp:
    path = (*prefix, *op.path)
    if isinstance(op, MergeOp):
        return MergeOp(path, op.data)
    if isinstance(op, AppendOp):
        return AppendOp(path, op.entry, op.max_items)
    return SetOp(path, op.value)
