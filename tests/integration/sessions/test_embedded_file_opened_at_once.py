"""Processes opening one new embedded session file at the same moment (several Cloud Run
instances, or `make run` beside a job worker, on one local disk): each must open it. The
columns added to older files were added without the write lock, so two openers both found one
missing and the second's ALTER failed ("duplicate column name")."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

OPENERS = 8
# Each process sleeps until the same moment, opens the store and reads through it.
_OPEN = """
import asyncio, sys, time
from confidant.sessions.sqlite_store import SqliteSessionStore

async def main() -> None:
    store = SqliteSessionStore(sys.argv[1])
    await store.load_profile("user-1")
    await store.close()

time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
asyncio.run(main())
"""


def test_processes_opening_one_new_file_at_once_all_open_it(tmp_path: Path) -> None:
    path = str(tmp_path / "sessions.db")
    start = time.time() + 3.0  # after every interpreter has started
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _OPEN, path, str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(OPENERS)
    ]
    errors = [p.communicate(timeout=60)[1] for p in procs]
    failed = [
        error.strip().splitlines()[-1]
        for p, error in zip(procs, errors, strict=True)
        if p.returncode
    ]
    assert failed == []
