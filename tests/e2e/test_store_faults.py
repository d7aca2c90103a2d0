"""Firestore unavailable (issue 14, item 3): a private emulator, stopped and restarted in place
with its data (exported before the stop), under the real server. The user gets a clear error,
nothing is stored twice, and the session takes the next turn once Firestore is back."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import TEST_PROJECT
from tests.e2e.conftest import Server, base_env, start_server, stop_server
from tests.e2e.test_faults import stored_texts
from tests.support import emulators
from tests.support.emulators import free_port
from tests.support.sse import of_type, parse_frames, streamed_text
from tests.support.tokens import TokenIssuer

USER = {"X-User-Id": "store-fault-user"}


@pytest.fixture
def private_firestore(tmp_path) -> Iterator[list[emulators.Emulator]]:  # type: ignore[no-untyped-def]
    """A Firestore emulator of this test's own (never the session's), as a one-item list so a
    test can replace it with its restart."""
    held = [emulators.start_firestore()]
    try:
        yield held
    finally:
        held[-1].stop()


def _server(host: str, issuer: TokenIssuer, **env: str) -> Server:
    port = free_port()
    settings = base_env(
        PORT=str(port),
        CONFIDANT_AUTH="firebase",
        CONFIDANT_FIREBASE_PROJECT_ID=issuer.project_id,
        CONFIDANT_JWKS_URL=issuer.jwks_url,
        CONFIDANT_STORE="firestore",
        CONFIDANT_PROJECT_ID=TEST_PROJECT,
        CONFIDANT_MODEL="offline",
        FIRESTORE_EMULATOR_HOST=host,
        **env,
    )
    return start_server([sys.executable, "-m", "confidant.local_server"], settings, port)


def _chat(
    server: Server, token: str, session_id: str, message: str, timeout: float = 60
) -> httpx.Response:
    response = httpx.post(
        f"{server.base_url}/v1/chat",
        json={"message": message, "session_id": session_id},
        headers={"Authorization": f"Bearer {token}"},
        timeout=timeout,
    )
    return response


def test_firestore_down_before_the_lease_is_a_clear_503_and_the_session_goes_on(
    private_firestore, token_issuer, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    emulator = private_firestore[0]
    server = _server(emulator.host, token_issuer, CONFIDANT_STORE_TIMEOUT_S="6")
    token = token_issuer.issue("store-fault-user")
    try:
        first = _chat(server, token, "s", "first")
        # A cold first turn on a loaded machine (a fresh emulator's first queries) may pass the
        # store timeout: a clear 503 (or 409 while that attempt's lease lives) that stores nothing.
        deadline = time.monotonic() + 60
        while first.status_code in (409, 503) and time.monotonic() < deadline:
            time.sleep(1)
            first = _chat(server, token, "s", "first")
        assert first.status_code == 200, first.text
        parts, done = parse_frames(first.text)
        assert done and parts[-1]["type"] == "finish"
        reply = streamed_text(parts)

        # Firestore goes away (its data exported first, so the restart has it back).
        export = emulators.export_firestore(emulator.host, TEST_PROJECT, str(tmp_path / "export"))
        emulator.stop()
        # Answered within the store timeout (6 s), not after the client library's minutes of
        # retries: a hang would fail this request's read timeout.
        down = _chat(server, token, "s", "while down", timeout=30)
        assert down.status_code == 503, down.text
        assert down.json()["error"]["code"] == "store_unavailable", down.text

        private_firestore.append(emulators.start_firestore(emulator.host, import_data=export))
        # The client reconnects on its own backoff: until then the answer stays a clear 503.
        deadline = time.monotonic() + 60
        while True:
            again = _chat(server, token, "s", "after")
            if again.status_code != 503 or time.monotonic() > deadline:
                break
            assert again.json()["error"]["code"] == "store_unavailable"
            time.sleep(1)
        assert again.status_code == 200, again.text
        parts, done = parse_frames(again.text)
        assert done and not of_type(parts, "error"), parts
        stored = stored_texts(server, "s", {"Authorization": f"Bearer {token}"})
    finally:
        stop_server(server)
    # The refused message was never stored; the others exactly once.
    assert stored == ["first", reply, "after", streamed_text(parts)]
