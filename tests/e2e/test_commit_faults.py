"""Firestore failing mid-turn and at the commit, and the process SIGKILLed at its commit (issue 14,
item 3), through the real server on a Firestore emulator of this module's own (never the
session's). A TCP proxy (tests/support/fault_proxy.py) fails the connection at exact moments —
the commit is the only request that carries the user's message text, so the proxy knows it by
that text; one test stops and restarts the emulator process itself.

Each test proves what the user sees (a clear `error` part, `commit_outcome_unknown` when the
commit's fate is unknown), that nothing is stored twice or half, that resending the same
message id never stores a second copy (nor calls the model for a committed message), and that
the session takes the next turn.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore

from tests.conftest import TEST_PROJECT
from tests.e2e.conftest import Server, base_env, start_server, stop_server
from tests.e2e.test_faults import stored_texts
from tests.support import emulators
from tests.support.emulators import free_port
from tests.support.fake_gemini import FakeGemini, GeminiRequest, Reply, Step, text
from tests.support.fault_proxy import FaultProxy
from tests.support.sse import of_type, parse_frames, streamed_text
from tests.support.tokens import TokenIssuer

KINDS = ("emotion", "summary", "memory")  # onemind's post-turn jobs, written by its commit
SLOW = Reply(text="one two three four five six seven eight", chunks=8, chunk_delay_s=0.5)
# Long enough to export and stop an emulator on a loaded machine before the commit.
SLOWER = Reply(text="a b c d e f g h i j k l m n o p", chunks=16, chunk_delay_s=1.0)


def _coach(request: GeminiRequest) -> Step:
    if "CONFIDANT_EXTRACTOR" in request.system_instruction:
        return text("{}")  # the post-turn extractors
    said = request.last_text
    if said.startswith("slower"):
        return SLOWER
    return SLOW if said.startswith("slow") else text(f"reply to {said}")


def _coach_calls(gemini: FakeGemini, message: str) -> int:
    return sum(
        1
        for r in gemini.requests
        if "CONFIDANT_EXTRACTOR" not in r.system_instruction and r.last_text == message
    )


@pytest.fixture(scope="module")
def fault_firestore() -> Iterator[emulators.Emulator]:
    """This module's own emulator: its connections are failed on purpose."""
    with emulators.running(emulators.start_firestore) as emulator:
        yield emulator


@pytest.fixture
def proxy(fault_firestore: emulators.Emulator) -> Iterator[FaultProxy]:
    with FaultProxy(fault_firestore.host) as fault_proxy:
        yield fault_proxy


@pytest.fixture
def gemini() -> Iterator[FakeGemini]:
    with FakeGemini(responder=_coach) as fake:
        yield fake


class Chat:
    """A user talking to one server through the HTTP API."""

    def __init__(self, server: Server, token: str) -> None:
        self.server = server
        self.headers = {"Authorization": f"Bearer {token}"}

    def send(
        self, session_id: str, message: str, message_id: str | None = None
    ) -> tuple[int, list[dict]]:
        body = {"message": message, "session_id": session_id}
        if message_id is not None:
            body["message_id"] = message_id
        response = httpx.post(
            f"{self.server.base_url}/v1/chat", json=body, headers=self.headers, timeout=60
        )
        if response.status_code != 200:
            return response.status_code, [response.json()]
        return 200, parse_frames(response.text)[0]

    def send_until_free(
        self, session_id: str, message: str, message_id: str | None = None, within_s: float = 60
    ) -> list[dict]:
        """Send until the session takes it: a dead turn's lease (409) expires after its TTL,
        and a store that was away answers 503 until the client has reconnected."""
        deadline = time.monotonic() + within_s
        while True:
            status, parts = self.send(session_id, message, message_id)
            if status == 200 or time.monotonic() > deadline:
                break
            assert status in (409, 503), (status, parts)
            time.sleep(0.5)
        assert status == 200, parts
        return parts

    def stored(self, session_id: str) -> list[str]:
        """Every stored text of the session, in order (GET /v1/sessions/{id})."""
        return stored_texts(self.server, session_id, self.headers)


def _server(firestore_host: str, issuer: TokenIssuer, gemini: FakeGemini, **env: str) -> Server:
    port = free_port()
    defaults = {
        "PORT": str(port),
        "CONFIDANT_AUTH": "firebase",
        "CONFIDANT_FIREBASE_PROJECT_ID": issuer.project_id,
        "CONFIDANT_JWKS_URL": issuer.jwks_url,
        "CONFIDANT_STORE": "firestore",
        "CONFIDANT_PROJECT_ID": TEST_PROJECT,
        "CONFIDANT_MODEL": "gemini",
        "CONFIDANT_GEMINI_BASE_URL": gemini.base_url,
        "GOOGLE_API_KEY": "test-key",
        "FIRESTORE_EMULATOR_HOST": firestore_host,
        "CONFIDANT_LEASE_TTL_S": "3",
        "CONFIDANT_STORE_TIMEOUT_S": "20",  # a cold first turn on a loaded machine
        "CONFIDANT_COMMIT_TIMEOUT_S": "2",
    }
    settings = base_env(**(defaults | env))
    return start_server([sys.executable, "-m", "confidant.local_server"], settings, port)


def _finished(parts: list[dict]) -> bool:
    return bool(parts) and parts[-1]["type"] == "finish" and not of_type(parts, "error")


def _outbox(firestore_host: str, user_id: str, session_id: str) -> list[str]:
    """The kinds of the session's jobs in the outbox (read straight from the emulator)."""
    previous = os.environ.get("FIRESTORE_EMULATOR_HOST")
    os.environ["FIRESTORE_EMULATOR_HOST"] = firestore_host
    try:
        db = firestore.Client(project=TEST_PROJECT, credentials=AnonymousCredentials())
        docs = db.collection("jobs").where("user_id", "==", user_id).stream()
        return sorted(d.get("kind") for d in docs if d.get("session_id") == session_id)
    finally:
        if previous is None:
            os.environ.pop("FIRESTORE_EMULATOR_HOST", None)
        else:
            os.environ["FIRESTORE_EMULATOR_HOST"] = previous


def _user(issuer: TokenIssuer) -> tuple[str, str]:
    uid = f"fault-{uuid.uuid4().hex[:8]}"
    return uid, issuer.issue(uid)


def test_firestore_lost_mid_turn_and_back_before_the_commit(
    proxy: FaultProxy, token_issuer: TokenIssuer, gemini: FakeGemini
) -> None:
    """The lease's renewals fail while the model streams; the store is back by the commit: the
    reply is stored once, the user sees an ordinary reply, and the session goes on."""
    server = _server(proxy.host, token_issuer, gemini, CONFIDANT_COMMIT_TIMEOUT_S="10")
    uid, token = _user(token_issuer)
    chat = Chat(server, token)
    try:
        assert _finished(chat.send_until_free("s", "hello"))  # a cold start may 503
        body = {"message": "slow mid-turn", "session_id": "s"}
        frames = ""
        with httpx.stream(
            "POST", f"{server.base_url}/v1/chat", json=body, headers=chat.headers, timeout=60
        ) as response:
            for line in response.iter_lines():
                if '"text-delta"' in line and not frames.count('"text-delta"'):
                    proxy.blackhole()  # Firestore stops answering while the reply streams
                    threading.Timer(2.5, proxy.restore).start()  # three renewal periods
                frames += line + "\n\n"
        parts, done = parse_frames(frames)
        assert done and _finished(parts), parts
        assert streamed_text(parts) == SLOW.text
        after = chat.send("s", "after")[1]
        assert _finished(after), after
        stored = chat.stored("s")
    finally:
        stop_server(server)
    log = Path(server.log_path).read_text(errors="replace")  # whole, once the server has exited
    assert "renewing the lease" in log  # the fault did hit the turn's lease mid-turn
    assert stored == [
        "hello",
        "reply to hello",
        "slow mid-turn",
        SLOW.text,
        "after",
        "reply to after",
    ]
    assert _outbox(proxy.upstream, uid, "s") == sorted(KINDS * 3)  # each turn's jobs, once


def test_a_commit_that_never_reaches_firestore_is_unknown_then_a_resend_is_stored_once(
    proxy: FaultProxy, token_issuer: TokenIssuer, gemini: FakeGemini
) -> None:
    server = _server(proxy.host, token_issuer, gemini)
    uid, token = _user(token_issuer)
    chat = Chat(server, token)
    message = f"held {uuid.uuid4().hex}"  # only the commit carries this text to Firestore
    try:
        assert _finished(chat.send_until_free("s", "hello"))  # a cold start may 503
        proxy.hold_when(message)
        started = time.monotonic()
        status, parts = chat.send("s", message, "m-held")
        took = time.monotonic() - started
        assert proxy.triggered.is_set()
        assert status == 200 and streamed_text(parts) == f"reply to {message}"
        [error] = of_type(parts, "error")
        assert error["code"] == "commit_outcome_unknown", error
        assert "may not have been saved" in error["errorText"]
        assert parts[-1] == error  # no `finish`: the reply is not confirmed
        # The commit deadline (2 s) plus the bounded lease release (TTL/3), not minutes.
        assert took < 15, took

        proxy.restore()
        # Not stored, so the resend is answered afresh (once the dead lease has expired).
        resent = chat.send_until_free("s", message, "m-held")
        assert _finished(resent) and not of_type(resent, "data-replay"), resent
        # A second resend finds it committed: the same reply, no model call, no copy.
        again = chat.send("s", message, "m-held")[1]
        assert _finished(again) and of_type(again, "data-replay"), again
        assert streamed_text(again) == f"reply to {message}"
        assert _finished(chat.send("s", "next")[1])
        stored = chat.stored("s")
    finally:
        stop_server(server)
    assert _coach_calls(gemini, message) == 2  # the lost one and the stored one; not the replay
    assert stored == [
        "hello",
        "reply to hello",
        message,
        f"reply to {message}",
        "next",
        "reply to next",
    ]
    assert _outbox(proxy.upstream, uid, "s") == sorted(KINDS * 3)


def test_a_commit_applied_but_unanswered_is_unknown_and_a_resend_replays_it(
    proxy: FaultProxy, token_issuer: TokenIssuer, gemini: FakeGemini
) -> None:
    server = _server(proxy.host, token_issuer, gemini)
    uid, token = _user(token_issuer)
    chat = Chat(server, token)
    message = f"landed {uuid.uuid4().hex}"
    try:
        assert _finished(chat.send_until_free("warm", "hello"))  # a cold start may 503
        proxy.drop_reply_when(message)  # Firestore applies the commit; its answer is lost
        status, parts = chat.send("s", message, "m-landed")
        assert proxy.triggered.is_set()
        assert status == 200 and of_type(parts, "error")[0]["code"] == "commit_outcome_unknown"
        proxy.restore()
        assert chat.stored("s") == [message, f"reply to {message}"]  # it was committed

        # The resend (the client checked, or just retried) gets the committed reply: no
        # model call, no second copy; the session is free at once (the commit released it).
        resent = chat.send("s", message, "m-landed")[1]
        assert _finished(resent) and of_type(resent, "data-replay"), resent
        assert streamed_text(resent) == f"reply to {message}"
        # The same id with another text is refused: ids name one message.
        status, refused = chat.send("s", "something else", "m-landed")
        assert status == 400 and "already used" in refused[0]["error"]["message"]
        assert _finished(chat.send("s", "next")[1])
        stored = chat.stored("s")
    finally:
        stop_server(server)
    assert _coach_calls(gemini, message) == 1
    assert stored == [message, f"reply to {message}", "next", "reply to next"]
    assert _outbox(proxy.upstream, uid, "s") == sorted(KINDS * 2)


def test_a_commit_applied_whose_answer_is_lost_and_retried_is_an_ordinary_reply(
    proxy: FaultProxy, token_issuer: TokenIssuer, gemini: FakeGemini
) -> None:
    """Firestore applies the commit, the connection dies before its answer, the client library
    retries it and the retry fails its precondition on the turn's own write: the server sees
    the turn stored and finishes the reply normally (not "not saved"), stored once."""
    server = _server(proxy.host, token_issuer, gemini, CONFIDANT_COMMIT_TIMEOUT_S="20")
    _, token = _user(token_issuer)
    chat = Chat(server, token)
    message = f"retried {uuid.uuid4().hex}"
    try:
        assert _finished(chat.send_until_free("warm", "hello"))  # a cold start may 503
        proxy.reset_when(message)
        status, parts = chat.send("s", message)  # no message id: the server resolves it
        assert proxy.triggered.is_set()
        assert status == 200 and _finished(parts), parts
        assert _finished(chat.send("s", "next")[1])
        stored = chat.stored("s")
    finally:
        stop_server(server)
    log = Path(server.log_path).read_text(errors="replace")
    assert "applied by its own retried write" in log  # the retry did meet its own write
    assert stored == [message, f"reply to {message}", "next", "reply to next"]


@pytest.mark.parametrize("applied", [False, True], ids=["killed-before-write", "killed-after"])
def test_a_process_killed_at_its_commit_leaves_the_turn_whole_or_absent(
    applied: bool, proxy: FaultProxy, token_issuer: TokenIssuer, gemini: FakeGemini
) -> None:
    """SIGKILL at the commit RPC: before the write leaves the process, or after Firestore
    applied it and before the process heard back. Another process then sees the whole turn
    (events and jobs) or none of it, a resend is never stored twice, and the session goes on."""
    first = _server(proxy.host, token_issuer, gemini)
    uid, token = _user(token_issuer)
    message = f"killed {uuid.uuid4().hex}"

    def kill() -> None:
        os.killpg(first.process.pid, signal.SIGKILL)

    try:
        assert _finished(Chat(first, token).send_until_free("warm", "hello"))
        (proxy.drop_reply_when if applied else proxy.hold_when)(message, kill)
        with pytest.raises(httpx.HTTPError):  # the connection dies with the process
            Chat(first, token).send("s", message, "m-killed")
        first.process.wait(timeout=10)
    finally:
        stop_server(first)
    assert proxy.triggered.is_set()
    proxy.restore()

    second = _server(proxy.host, token_issuer, gemini)
    chat = Chat(second, token)
    try:
        stored = chat.stored("s")
        outbox = _outbox(proxy.upstream, uid, "s")
        resent = chat.send_until_free("s", message, "m-killed")
        assert _finished(resent), resent
        assert streamed_text(resent) == f"reply to {message}"
        assert bool(of_type(resent, "data-replay")) == applied
        assert _finished(chat.send_until_free("s", "next"))
        final = chat.stored("s")
    finally:
        stop_server(second)
    # Whole or absent: the turn's events and its outbox jobs together, or neither.
    if applied:
        assert stored == [message, f"reply to {message}"] and outbox == sorted(KINDS)
    else:
        assert stored == [] and outbox == []
    assert _coach_calls(gemini, message) == (1 if applied else 2)
    assert final == [message, f"reply to {message}", "next", "reply to next"]


def test_firestore_stopped_mid_turn_and_restarted_after_the_commit(
    token_issuer: TokenIssuer, gemini: FakeGemini, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """The emulator process itself stopped while the reply streams (its data exported first)
    and started again with it: the commit's outcome is unknown, the resend is stored once."""
    held = [emulators.start_firestore()]
    try:
        emulator = held[0]
        server = _server(emulator.host, token_issuer, gemini, CONFIDANT_COMMIT_TIMEOUT_S="3")
        _, token = _user(token_issuer)
        chat = Chat(server, token)
        slow = "slower: the store restarts meanwhile"
        try:
            assert _finished(chat.send_until_free("s", "hello"))  # a cold start may 503
            body = {"message": slow, "session_id": "s", "message_id": "m-restart"}
            frames = ""
            with httpx.stream(
                "POST", f"{server.base_url}/v1/chat", json=body, headers=chat.headers, timeout=90
            ) as response:
                for line in response.iter_lines():
                    if '"text-delta"' in line and emulator.process.poll() is None:
                        export = emulators.export_firestore(
                            emulator.host, TEST_PROJECT, str(tmp_path / "export")
                        )
                        emulator.stop()
                    frames += line + "\n\n"
            parts, _ = parse_frames(frames)
            assert streamed_text(parts) == SLOWER.text
            [error] = of_type(parts, "error")
            assert error["code"] == "commit_outcome_unknown", parts

            held.append(emulators.start_firestore(emulator.host, import_data=export))
            resent = chat.send_until_free("s", slow, "m-restart")
            assert _finished(resent) and not of_type(resent, "data-replay"), resent
            assert _finished(chat.send("s", "after")[1])
            stored = chat.stored("s")
        finally:
            stop_server(server)
    finally:
        for item in held:
            item.stop()
    assert stored == ["hello", "reply to hello", slow, SLOWER.text, "after", "reply to after"]
