"""Post-turn jobs end to end: the chat server publishes a turn's jobs to the Pub/Sub emulator,
push subscriptions deliver them to the `jobs` target running in its own functions-framework
process, and the results appear in the Firestore emulator. Also: a poison delivery, and Pub/Sub
down during a turn (the turn succeeds; the `sweep` target publishes the jobs later)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore

from tests.e2e.conftest import Server, base_env, start_server, stop_server
from tests.support.emulators import free_port
from tests.support.fault_proxy import FaultProxy
from tests.support.push import create_job_topics, functions_command
from tests.support.sse import parse_frames

KINDS = ("emotion", "summary", "memory")


@pytest.fixture
def prefix() -> str:
    return f"e2e{uuid.uuid4().hex[:8]}"


@pytest.fixture
def project() -> str:
    """A project of this test's own on both emulators: the sweep republishes the oldest pending
    entries of the whole outbox, so other tests' stale entries must not share it."""
    return f"jobs-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def job_server(
    firestore_emulator: str, pubsub_emulator: str, token_issuer: Any, prefix: str, project: str
) -> Iterator[Callable[[str], Server]]:
    """`start(target)`: a functions-framework server of the `jobs` or `sweep` target."""
    servers: list[Server] = []

    def start(target: str, **overrides: str) -> Server:
        port = free_port()
        env = base_env(
            CONFIDANT_STORE="firestore",
            CONFIDANT_JOBS="pubsub",
            CONFIDANT_AUTH="firebase",
            CONFIDANT_FIREBASE_PROJECT_ID=token_issuer.project_id,
            CONFIDANT_PROJECT_ID=project,
            CONFIDANT_PUBSUB_TOPIC_PREFIX=prefix,
            CONFIDANT_MODEL="offline",
            CONFIDANT_SWEEP_GRACE_S="0",
            FIRESTORE_EMULATOR_HOST=firestore_emulator,
            PUBSUB_EMULATOR_HOST=pubsub_emulator,
        )
        env.update(overrides)
        server = start_server(functions_command(target, port), env, port)
        servers.append(server)
        return server

    yield start
    for server in servers:
        stop_server(server)


def _push_to(server: Server, project: str, prefix: str) -> None:
    create_job_topics(project, prefix, KINDS, push_to=server.base_url)


def _db(project: str) -> firestore.Client:
    return firestore.Client(project=project, credentials=AnonymousCredentials())


def _eventually(
    read: Callable[[], Any], timeout_s: float = 30.0, explain: Callable[[], str] | None = None
) -> Any:
    """`read()` once it is truthy; past `timeout_s` a failure, with `explain()` when given."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = read()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("not visible in time" + (f": {explain()}" if explain else ""))


def _say(server: Server, token: str, session_id: str, text: str) -> list[dict]:
    response = httpx.post(
        f"{server.base_url}/v1/chat",
        json={"message": text, "session_id": session_id},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done and parts[-1]["type"] == "finish", parts
    return parts


def _emotions(db: firestore.Client, uid: str) -> list[dict]:
    return [d.to_dict() for d in db.collection(f"users/{uid}/emotions").stream()]


def _summary(db: firestore.Client, uid: str, sid: str) -> dict | None:
    snap = db.document(f"users/{uid}/apps/onemind/sessions/{sid}/meta/summary").get()
    return snap.to_dict() if snap.exists else None


def _facts(db: firestore.Client, uid: str) -> list[str]:
    docs = [d.to_dict() for d in db.collection(f"users/{uid}/memories").stream()]
    return sorted(d["text"] for d in docs if d["kind"] == "fact")


def test_a_turns_jobs_reach_the_job_server_through_push_subscriptions(
    cloud_server, job_server, token_issuer, prefix, project
) -> None:  # type: ignore[no-untyped-def]
    jobs = job_server("jobs")
    _push_to(jobs, project, prefix)
    chat = cloud_server(CONFIDANT_PUBSUB_TOPIC_PREFIX=prefix, CONFIDANT_PROJECT_ID=project)
    uid = f"jobs-{uuid.uuid4().hex[:8]}"
    token = token_issuer.issue(uid)
    _say(chat, token, "s1", "I am a teacher and I feel stuck with my thesis")

    db = _db(project)
    [snapshot] = _eventually(lambda: _emotions(db, uid))
    assert snapshot["user_mood"] == "stuck" and snapshot["session_id"] == "s1"
    summary = _eventually(lambda: _summary(db, uid, "s1"))
    assert "teacher" in summary["text"]
    assert _eventually(lambda: _facts(db, uid)) == [
        "I am a teacher and I feel stuck with my thesis"
    ]
    # The summary and the emotions through the API.
    headers = {"Authorization": f"Bearer {token}"}
    session = httpx.get(f"{chat.base_url}/v1/sessions/s1", headers=headers).json()
    assert session["session"]["summary"]["text"] == summary["text"]
    emotions = httpx.get(f"{chat.base_url}/v1/me/emotions?session_id=s1", headers=headers).json()
    assert [e["user_mood"] for e in emotions["emotions"]] == ["stuck"]

    # Each job was applied once and marked.
    marks = [d.to_dict() for d in db.collection("jobs").where("user_id", "==", uid).stream()]
    _eventually(
        lambda: all(
            d.to_dict()["status"] == "done"
            for d in db.collection("jobs").where("user_id", "==", uid).stream()
        )
    )
    assert sorted(m["kind"] for m in marks) == sorted(KINDS)

    # A poison delivery is acknowledged (200, so Pub/Sub stops) and recorded.
    poison = httpx.post(f"{jobs.base_url}/jobs/emotion", content=b'{"message": "nope"}')
    assert poison.status_code == 200 and poison.json()["outcome"] == "poison"
    failures = [d.to_dict() for d in db.collection("job_failures").stream()]
    assert any('{"message": "nope"}' in f["body"] for f in failures)


def test_pubsub_down_during_a_turn_then_the_sweep_publishes_the_jobs(
    cloud_server, job_server, token_issuer, prefix, project
) -> None:  # type: ignore[no-untyped-def]
    jobs = job_server("jobs")
    _push_to(jobs, project, prefix)
    dead = f"127.0.0.1:{free_port()}"  # nothing listens there: Pub/Sub is down
    chat = cloud_server(
        CONFIDANT_PUBSUB_TOPIC_PREFIX=prefix,
        CONFIDANT_PROJECT_ID=project,
        PUBSUB_EMULATOR_HOST=dead,
        CONFIDANT_JOB_PUBLISH_TIMEOUT_S="1",
    )
    uid = f"down-{uuid.uuid4().hex[:8]}"
    token = token_issuer.issue(uid)
    _say(chat, token, "s1", "I have a sister in Lyon")  # the turn succeeds

    db = _db(project)
    pending = [d.to_dict() for d in db.collection("jobs").where("user_id", "==", uid).stream()]
    assert sorted(p["kind"] for p in pending) == sorted(KINDS)
    assert {p["status"] for p in pending} == {"pending"}
    time.sleep(2)
    assert _emotions(db, uid) == []  # nothing was delivered

    sweep = job_server("sweep")
    response = httpx.post(f"{sweep.base_url}/", timeout=30)
    assert response.status_code == 200, response.text
    assert response.json()["republished"] >= 3
    assert _eventually(lambda: _facts(db, uid)) == ["I have a sister in Lyon"]
    assert _eventually(lambda: _emotions(db, uid))
    summary = _eventually(lambda: _summary(db, uid, "s1"))
    assert summary["covers_seq"] == 1 and "Lyon" in summary["text"]  # user + reply: seqs 0, 1


def _jobs(db: firestore.Client, uid: str) -> list[dict]:
    return [d.to_dict() for d in db.collection("jobs").where("user_id", "==", uid).stream()]


def _turn_jobs(db: firestore.Client, uid: str, turn: int) -> list[dict]:
    return [j for j in _jobs(db, uid) if f'"turn":{turn}' in j["job"]]


def test_pubsub_lost_at_publish_then_the_sweep_publishes_each_job_once(
    cloud_server, job_server, token_issuer, prefix, project, pubsub_emulator
) -> None:  # type: ignore[no-untyped-def]
    jobs = job_server("jobs")
    _push_to(jobs, project, prefix)
    db = _db(project)
    uid = f"publish-{uuid.uuid4().hex[:8]}"
    token = token_issuer.issue(uid)
    with FaultProxy(pubsub_emulator) as proxy:
        chat = cloud_server(
            CONFIDANT_PUBSUB_TOPIC_PREFIX=prefix,
            CONFIDANT_PROJECT_ID=project,
            PUBSUB_EMULATOR_HOST=proxy.host,
            CONFIDANT_JOB_PUBLISH_TIMEOUT_S="3",
            CONFIDANT_STORE_TIMEOUT_S="30",  # a cold first turn on a loaded machine
        )
        _say(chat, token, "s1", "I have a sister in Lyon")  # published: the connection is live
        _eventually(lambda: {j["status"] for j in _turn_jobs(db, uid, 1)} == {"done"})

        proxy.blackhole()  # Pub/Sub stops answering: the next publish hangs, then fails
        parts = _say(chat, token, "s1", "I have a brother in Oslo")  # reply and commit succeed
        assert parts[-1]["type"] == "finish"
        pending = _turn_jobs(db, uid, 2)
        assert sorted(j["kind"] for j in pending) == sorted(KINDS)  # in the outbox, committed
        time.sleep(4)  # past the publish timeout
        assert {j["status"] for j in _turn_jobs(db, uid, 2)} == {"pending"}
        assert len(_emotions(db, uid)) == 1  # nothing of the second turn was delivered
        # The instance goes away before Pub/Sub is back (as a scaled-in instance would): only
        # the sweep can publish the jobs now.
        stop_server(chat)

    # Pub/Sub is back (the sweep talks to the emulator itself).
    sweep = job_server("sweep")
    first = httpx.post(f"{sweep.base_url}/", timeout=60)
    assert first.status_code == 200 and first.json()["republished"] >= len(KINDS), first.text
    # A second sweep before the handlers finish republishes them again: still one effect.
    assert httpx.post(f"{sweep.base_url}/", timeout=60).status_code == 200
    _eventually(
        lambda: {j["status"] for j in _turn_jobs(db, uid, 2)} == {"done"},
        120,
        # A failure says which jobs are not done, and what the job server logged.
        lambda: f"{[(j['kind'], j['status']) for j in _turn_jobs(db, uid, 2)]}\n{jobs.log()}",
    )
    log = Path(chat.log_path).read_text(errors="replace")
    assert "publishing post-turn jobs failed" in log  # the fault did hit the publish
    # Exactly one effect per job: one emotion snapshot per turn, each fact once, the summary
    # covering both turns (every event of the session).
    assert len(_emotions(db, uid)) == 2
    facts = _facts(db, uid)
    assert "I have a brother in Oslo" in facts and len(set(facts)) == len(facts), facts
    session = db.document(f"users/{uid}/apps/onemind/sessions/s1").get()
    assert _summary(db, uid, "s1")["covers_seq"] == session.get("next_seq") - 1
    assert len(_jobs(db, uid)) == 2 * len(KINDS)
