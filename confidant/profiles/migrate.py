"""Migrate legacy profiles to the unified layout (seed 002 §6, phase 2).

    skill_data.{skill}                    → skills.{skill}
    life_context._paths.{skill}.content   → skills.{skill}

Stored new-format data wins over legacy data on conflicts (a rerun never undoes later writes),
so the migration is idempotent: a migrated profile has no legacy keys and is left alone. It is
resumable: users are processed in id order, each in its own compare-and-set write, and the
last finished id is printed so `--after` can continue an interrupted run. `--dry-run` prints
what would change and writes nothing.

    confidant-migrate [--dry-run] [--after UID] [--batch 200]     (store from CONFIDANT_* settings)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

from confidant.profiles.model import META, SKILLS
from confidant.profiles.ops import deep_merge
from confidant.profiles.store import ProfileStore

SKILL_DATA = "skill_data"
LIFE_CONTEXT = "life_context"
PATHS = "_paths"
CONTENT = "content"
BAR_WIDTH = 30


def migrate_profile(stored: dict[str, Any], now: str) -> tuple[dict[str, Any], list[str]]:
    """The unified form of `stored`, and one line per move (empty when nothing changes)."""
    moves: list[str] = []
    profile = {k: v for k, v in stored.items() if k not in (SKILL_DATA, LIFE_CONTEXT)}
    skills: dict[str, Any] = dict(profile.get(SKILLS) or {})
    legacy: list[tuple[str, str, Any, Any]] = []
    for skill, value in (stored.get(SKILL_DATA) or {}).items():
        legacy.append((skill, f"{SKILL_DATA}.{skill}", value, None))
    life_context = dict(stored.get(LIFE_CONTEXT) or {})
    for skill, entry in (life_context.pop(PATHS, None) or {}).items():
        if isinstance(entry, dict):
            source = f"{LIFE_CONTEXT}.{PATHS}.{skill}.{CONTENT}"
            legacy.append((skill, source, entry.get(CONTENT) or {}, entry.get("updated_at")))
    for skill, source, value, updated_at in legacy:
        if not isinstance(value, dict):
            value = {"value": value}  # a bare legacy value keeps a home
        merged = deep_merge(value, skills.get(skill) or {})  # stored new data wins
        meta = dict(merged.get(META) or {})
        meta.setdefault("updated_at", updated_at or now)
        meta["migrated_from"] = sorted({*meta.get("migrated_from", []), source})
        skills[skill] = {**merged, META: meta}
        moves.append(f"{source} → {SKILLS}.{skill}")
    if SKILL_DATA in stored and not stored[SKILL_DATA]:
        moves.append(f"drop empty {SKILL_DATA}")
    if life_context:
        profile[LIFE_CONTEXT] = life_context  # fields other than _paths are not ours to drop
    elif LIFE_CONTEXT in stored and not legacy:
        moves.append(f"drop empty {LIFE_CONTEXT}")
    if skills:
        profile[SKILLS] = skills
    return profile, moves


@dataclass
class MigrationReport:
    scanned: int = 0
    migrated: int = 0
    unchanged: int = 0
    conflicts: list[str] = field(default_factory=list)
    last_user: str | None = None


def _bar(done: int, total: int, out: TextIO) -> None:
    filled = BAR_WIDTH * done // total if total else BAR_WIDTH
    out.write(f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} users")
    out.flush()


async def _all_users(store: ProfileStore, after: str | None, batch: int) -> list[str]:
    users: list[str] = []
    cursor = after
    while page := await store.list_profile_users(after=cursor, limit=batch):
        users += page
        cursor = page[-1]
    return users


async def migrate_profiles(
    store: ProfileStore,
    *,
    dry_run: bool = False,
    after: str | None = None,
    batch: int = 200,
    out: TextIO = sys.stdout,
    progress: TextIO | None = sys.stderr,
) -> MigrationReport:
    """Migrate every profile after `after` (by user id); see the module docstring."""
    report = MigrationReport()
    users = await _all_users(store, after, batch)
    now = datetime.now(UTC).isoformat()
    for done, user in enumerate(users, start=1):
        for _attempt in range(3):
            stored = await store.load_profile(user)
            migrated, moves = migrate_profile(stored, now)
            if not moves:
                report.unchanged += 1
                break
            if dry_run:
                out.write("".join(f"{user}: {move}\n" for move in moves))
                report.migrated += 1
                break
            if await store.replace_profile(user, migrated, expected=stored):
                report.migrated += 1
                break
        else:
            report.conflicts.append(user)  # written to concurrently three times: rerun later
        report.scanned += 1
        report.last_user = user
        if progress is not None:
            _bar(done, len(users), progress)
    if progress is not None:
        progress.write("\n")
    verb = "would migrate" if dry_run else "migrated"
    out.write(
        f"{report.scanned} scanned, {verb} {report.migrated}, unchanged {report.unchanged}, "
        f"conflicts {len(report.conflicts)}; last user: {report.last_user or '-'}\n"
    )
    return report


def parser() -> argparse.ArgumentParser:
    """The command line of `confidant-migrate` (and of `confidant migrate`)."""
    parser = argparse.ArgumentParser(prog="confidant-migrate", description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print changes, write nothing")
    parser.add_argument("--after", help="resume after this user id (printed by a previous run)")
    parser.add_argument("--batch", type=int, default=200, help="user ids listed per page")
    return parser


async def run_migration(args: argparse.Namespace) -> MigrationReport:
    """Migrate the configured store's profiles (the adapter the server would pick)."""
    from confidant.bootstrap import _store
    from confidant.settings import Settings

    store = _store(Settings())
    try:
        return await migrate_profiles(
            store, dry_run=args.dry_run, after=args.after, batch=args.batch
        )
    finally:
        await store.close()


def main(argv: Sequence[str] | None = None) -> int:
    report = asyncio.run(run_migration(parser().parse_args(argv)))
    return 1 if report.conflicts else 0


if __name__ == "__main__":
    raise SystemExit(main())
