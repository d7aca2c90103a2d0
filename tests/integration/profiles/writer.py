"""One concurrent profile writer, run as its own process by the concurrency test.

Usage: python -m tests.integration.profiles.writer STORE USER NAME TURNS [SQLITE_PATH]
Each turn leases its own session of USER, reads the profile, buffers an append to the shared
journal and a merge into the writer's own section, and commits them with the turn on the version
it read (a changed profile is read again in a transaction); a lost session race is retried.
"""

from __future__ import annotations

import asyncio
import sys

from confidant.errors import SessionBusyError, StaleTurnError
from confidant.profiles import AppendOp, MergeOp
from confidant.sessions.records import SessionKey
from confidant.sessions.service import ConfidantSessionService
from confidant.sessions.sqlite_store import SqliteSessionStore
from tests.support.stores import emulator_client

SKILL = ("skills", "lifecoach")


async def main(backend: str, user: str, name: str, turns: int, path: str | None) -> None:
    if backend == "firestore":
        from confidant.sessions.firestore_store import FirestoreSessionStore

        store = FirestoreSessionStore(emulator_client())
    else:
        store = SqliteSessionStore(path or "")
    service = ConfidantSessionService(store)
    for n in range(turns):
        ops = [
            AppendOp((*SKILL, "journal"), {"writer": name, "n": n}, 100),
            MergeOp((*SKILL, f"section_{name}"), {f"k{n}": n}),
        ]
        key = SessionKey(user, "lifecoach", f"{name}-{n}")
        for _ in range(20):
            try:
                # As a chat turn does: the profile is read alongside the lease, and the commit
                # writes on that version (retrying in a transaction when it changed).
                async with service.turn(key, ttl_s=30) as turn:
                    version = await store.load_profile_version(user)
                    await turn.commit(profile_ops=ops, profile_version=version)
                break
            except (SessionBusyError, StaleTurnError):
                await asyncio.sleep(0.05)
        else:
            raise SystemExit(f"{name}: turn {n} never committed")
    await store.close()


if __name__ == "__main__":
    backend, user, name, turns = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    asyncio.run(main(backend, user, name, turns, sys.argv[5] if len(sys.argv) > 5 else None))
