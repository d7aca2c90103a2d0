"""Profile writes as data: a turn buffers them and its commit applies them atomically.

Merge rule (`deep_merge`, used by `write_state` and `PATCH /v1/me/profile`): nested maps merge
key by key, lists replace the stored list whole, an explicit null deletes the key, any other
value replaces. Appends put the newest entry first and drop the oldest beyond `max_items`.

Every backend applies the same pure `apply_ops` to the profile it read inside its write
transaction, then writes back only the *units* the ops touched (`touched_units`): one top-level
section, or one section of one skill (`skills.{id}.{section}`). Two writers touching different
units never overwrite each other, and writers touching the same unit are serialised by the
transaction, so both appends survive.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from confidant.profiles.model import SKILLS

Path = tuple[str, ...]


@dataclass(frozen=True)
class MergeOp:
    path: Path  # where `data` is deep-merged (created when absent)
    data: dict[str, Any]


@dataclass(frozen=True)
class AppendOp:
    path: Path  # the list; a missing or non-list value starts a new list
    entry: Any
    max_items: int


@dataclass(frozen=True)
class SetOp:
    path: Path
    value: Any  # None deletes


ProfileOp = MergeOp | AppendOp | SetOp


def deep_merge(base: Any, patch: dict[str, Any]) -> dict[str, Any]:
    """`patch` merged into `base` (a new dict; the inputs are not changed)."""
    merged = copy.deepcopy(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict):
            merged[key] = deep_merge(merged.get(key), value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def get_path(tree: dict[str, Any], path: Sequence[str]) -> Any:
    node: Any = tree
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _parent(tree: dict[str, Any], path: Path) -> dict[str, Any]:
    node = tree
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    return node


def _apply(tree: dict[str, Any], op: ProfileOp) -> None:
    parent = _parent(tree, op.path)
    leaf = op.path[-1]
    if isinstance(op, MergeOp):
        merged = deep_merge(parent.get(leaf), op.data)
        parent[leaf] = merged
    elif isinstance(op, AppendOp):
        current = parent.get(leaf)
        items = current if isinstance(current, list) else []
        parent[leaf] = [copy.deepcopy(op.entry), *items][: op.max_items]
    elif op.value is None:
        parent.pop(leaf, None)
    else:
        parent[leaf] = copy.deepcopy(op.value)


def apply_ops(profile: dict[str, Any], ops: Iterable[ProfileOp]) -> dict[str, Any]:
    """The profile after `ops`, in order (a new dict)."""
    tree = copy.deepcopy(profile)
    for op in ops:
        _apply(tree, op)
    return tree


def unit_of(path: Path) -> Path:
    """The stored unit a path falls in: `skills.{id}.{section}`, else the top-level section."""
    return path[:3] if path[0] == SKILLS else path[:1]


def touched_units(ops: Iterable[ProfileOp]) -> list[Path]:
    units: list[Path] = []
    for op in ops:
        unit = unit_of(op.path)
        # A shorter path (e.g. a whole skill) covers the longer units below it.
        if any(unit[: len(u)] == u for u in units):
            continue
        units = [u for u in units if u[: len(unit)] != unit]
        units.append(unit)
    return units
