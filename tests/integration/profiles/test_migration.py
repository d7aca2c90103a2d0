"""The migration command on legacy fixtures: Firestore emulator and the embedded store."""

from __future__ import annotations

import io
import subprocess
import sys
import uuid
from pathlib import Path

from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore

from confidant.profiles.migrate import migrate_profiles
from confidant.sessions.firestore_store import FirestoreSessionStore
from confidant.sessions.sqlite_store import SqliteSessionStore
from tests.support.stores import EMULATOR_PROJECT, emulator_client

REPO = Path(__file__).resolve().parents[3]


def _legacy(n: int) -> dict:
    return {
        "account": {"display_name": f"user {n}"},
        "skill_data": {"bazi": {"chart": {"n": n}}},
        "life_context": {
            "_paths": {"lifecoach": {"content": {"goals": {"year": f"g{n}"}}, "version": 1}}
        },
    }


async def test_dry_run_then_migrate_then_rerun_on_the_emulator(firestore_emulator) -> None:
    prefix = f"mig-{uuid.uuid4().hex[:6]}"
    users = [f"{prefix}-{n}" for n in range(3)]
    sync = firestore.Client(project=EMULATOR_PROJECT, credentials=AnonymousCredentials())
    for n, user in enumerate(users):
        sync.collection("users").document(user).set(_legacy(n))
    sync.collection("users").document(users[0]).collection("apps").document("x").set({"k": 1})
    store = FirestoreSessionStore(emulator_client())

    out, bar = io.StringIO(), io.StringIO()
    dry = await migrate_profiles(store, dry_run=True, out=out, progress=bar)
    assert f"{users[1]}: skill_data.bazi → skills.bazi" in out.getvalue()
    assert "/" in bar.getvalue() and "users" in bar.getvalue()
    assert dry.migrated >= 3
    assert "skill_data" in sync.collection("users").document(users[1]).get().to_dict()

    # Resumable: a run that starts after the first user leaves it for later.
    await migrate_profiles(store, after=users[0], out=io.StringIO(), progress=None)
    assert "skill_data" in sync.collection("users").document(users[0]).get().to_dict()
    assert "skill_data" not in sync.collection("users").document(users[1]).get().to_dict()
    report = await migrate_profiles(store, out=io.StringIO(), progress=None)
    assert report.conflicts == []
    for n, user in enumerate(users):
        doc = sync.collection("users").document(user).get().to_dict()
        assert set(doc) == {"account", "skills"}
        assert doc["skills"]["lifecoach"]["goals"] == {"year": f"g{n}"}
        assert doc["skills"]["bazi"]["chart"] == {"n": n}
    # The user's sessions under the document are untouched.
    assert sync.collection("users").document(users[0]).collection("apps").document("x").get().exists

    again = await migrate_profiles(store, out=io.StringIO(), progress=None)
    assert again.migrated == 0  # idempotent


async def test_the_console_script_migrates_the_embedded_store(tmp_path) -> None:
    path = str(tmp_path / "legacy.db")
    store = SqliteSessionStore(path)
    assert await store.replace_profile("u1", _legacy(1), expected={})
    await store.close()
    env = {"CONFIDANT_STORE": "sqlite", "CONFIDANT_SQLITE_PATH": path, "PATH": "/usr/bin:/bin"}
    dry = subprocess.run(
        [str(REPO / ".venv/bin/confidant-migrate"), "--dry-run"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "u1: life_context._paths.lifecoach.content → skills.lifecoach" in dry.stdout
    assert "1/1 users" in dry.stderr
    done = subprocess.run(
        [sys.executable, "-m", "confidant.profiles.migrate"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "migrated 1" in done.stdout
    store = SqliteSessionStore(path)
    profile = await store.load_profile("u1")
    await store.close()
    assert "skill_data" not in profile and profile["skills"]["bazi"]["chart"] == {"n": 1}
