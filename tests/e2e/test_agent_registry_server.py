"""The agent registry on running servers: an admin changes an app's config over HTTP and the
next turn uses it, on the instance that took the change at once and on another instance once
its cache expires. Two functions-framework processes on the Firestore emulator, Firebase ID
tokens (the admin claim), the real google-genai client talking to a local Gemini wire server.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import TEST_PROJECT
from tests.e2e.conftest import Server, base_env, start_server, stop_server
from tests.support.emulators import free_port
from tests.support.fake_gemini import FakeGemini, GeminiRequest
from tests.support.sse import parse_frames, streamed_text
from tests.support.tokens import TokenIssuer

RULE = "Answer in one sentence; mention {nothing} else."
MODELS = '{"selectable": {"pro": {"provider": "gemini", "model": "gemini-2.5-pro"}}}'


@pytest.fixture
def gemini() -> Iterator[FakeGemini]:
    with FakeGemini(responder=lambda request: f"reply to {request.last_text}") as server:
        yield server


def _start(gemini: FakeGemini, issuer: TokenIssuer, emulator: str, database: str) -> Server:
    port = free_port()
    env = base_env(
        # A database of its own: the stored config must not reach other tests' onemind turns.
        CONFIDANT_FIRESTORE_DATABASE=database,
        CONFIDANT_STORE="firestore",
        CONFIDANT_AUTH="firebase",
        CONFIDANT_FIREBASE_PROJECT_ID=issuer.project_id,
        CONFIDANT_JWKS_URL=issuer.jwks_url,
        CONFIDANT_PROJECT_ID=TEST_PROJECT,
        FIRESTORE_EMULATOR_HOST=emulator,
        CONFIDANT_MODEL="gemini",
        CONFIDANT_GEMINI_BASE_URL=gemini.base_url,
        CONFIDANT_AGENT_MODELS=MODELS,
        CONFIDANT_AGENT_CONFIG_TTL_S="1",
        GOOGLE_API_KEY="test-key",
    )
    # The chat function under functions-framework, as Cloud Run runs it.
    command = [sys.executable, "-m", "functions_framework", "--asgi", "--target=chat"]
    command += ["--source=functions/main.py", "--host=127.0.0.1", f"--port={port}"]
    return start_server(command, env, port)


def _turn(server: Server, token: str, text: str) -> str:
    response = httpx.post(
        f"{server.base_url}/v1/chat",
        json={"message": text},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done and parts[-1]["type"] == "finish", parts
    return streamed_text(parts)


def _answering(requests: list[GeminiRequest], text: str) -> list[GeminiRequest]:
    """The coach's requests for `text` (post-turn job extractors read the same words after)."""
    return [
        r
        for r in requests
        if text in r.last_text and "CONFIDANT_EXTRACTOR" not in r.system_instruction
    ]


def test_a_config_change_reaches_the_next_turn_on_every_instance(
    gemini, token_issuer, firestore_emulator
) -> None:  # type: ignore[no-untyped-def]
    database = f"registry-{uuid.uuid4().hex[:8]}"
    first = _start(gemini, token_issuer, firestore_emulator, database)
    second = _start(gemini, token_issuer, firestore_emulator, database)
    admin = token_issuer.issue("ops-admin", admin=True)
    user = token_issuer.issue("registry-user")
    config_url = f"{first.base_url}/v1/admin/apps/onemind/config"
    try:
        # Both instances serve a turn before the change (and so cache "no config").
        _turn(first, user, "before on one")
        _turn(second, user, "before on two")

        denied = httpx.put(
            config_url, json={}, headers={"Authorization": f"Bearer {user}"}, timeout=10
        )
        assert denied.status_code == 403
        rejected = httpx.put(
            config_url,
            json={"agents": {"onemind_coach": {"model": "gemini-9-ultra"}}},
            headers={"Authorization": f"Bearer {admin}"},
            timeout=10,
        )
        assert rejected.status_code == 400
        assert "not an allowed model" in rejected.json()["error"]["message"]

        changed = httpx.put(
            config_url,
            json={
                "agents": {
                    "onemind_coach": {
                        "model": "pro",
                        "instruction": {"text": RULE},
                        "enabled_tools": ["advance_stage"],
                    }
                }
            },
            headers={"Authorization": f"Bearer {admin}"},
            timeout=10,
        )
        assert changed.status_code == 200, changed.text
        assert changed.json()["version"] >= 1

        assert _turn(first, user, "after on one") == "reply to after on one"
        time.sleep(1.2)  # the other instance's cache TTL
        _turn(second, user, "after on two")
    finally:
        stop_server(first)
        stop_server(second)

    requests = list(gemini.requests)
    for text in ("before on one", "before on two"):
        (before,) = _answering(requests, text)
        assert before.model == "gemini-2.5-flash"
        assert RULE not in before.system_instruction
        assert {"advance_stage", "retrieve_wisdom", "save_crystal"} <= set(before.function_names)
    for text in ("after on one", "after on two"):
        (after,) = _answering(requests, text)
        assert after.model == "gemini-2.5-pro"
        assert RULE in after.system_instruction
        assert set(after.function_names) == {"advance_stage"}
