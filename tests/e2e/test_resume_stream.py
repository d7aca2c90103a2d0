"""Resumable streams across processes, with the AI SDK's own client.

Two server processes share one store (a SQLite file, or the Firestore emulator). A Node script
drives the `ai` package's chat (AbstractChat + DefaultChatTransport, what useChat runs): it sends
a message to server A, loses the connection after the first words, and resumes on server B,
which tails the turn A is still running. The slow model is a local server speaking Gemini's wire
format, which counts the calls.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.e2e.conftest import REPO, Server, base_env, start_server, stop_server
from tests.support.emulators import free_port
from tests.support.fake_gemini import FakeGemini, text
from tests.support.sse import parse_frames, streamed_text

CLIENT_DIR = REPO / "tests/e2e/ai_client"
REPLY = (
    "It sounds like part of you wants to finish the thesis and another part is afraid of what "
    "finishing would mean. Both of them are trying to protect you. Which one is louder today, "
    "and what does it need from you before you open the draft again?"
)
APP = "onemind"
Headers = dict[str, str]


def _node() -> str:
    node = shutil.which("node")
    installed = (CLIENT_DIR / "node_modules/ai/package.json").exists()
    if node is None or not installed:
        message = "Node.js and tests/e2e/ai_client/node_modules (run `make test-tools`)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"missing {message}")
        pytest.skip(f"missing {message}")
    return node


def _is_chat_call(request) -> bool:  # type: ignore[no-untyped-def]
    return "CONFIDANT_EXTRACTOR" not in request.system_instruction


@pytest.fixture
def slow_model() -> Iterator[FakeGemini]:
    # ~3 s of streaming: long enough to drop mid-reply and resume on the other server.
    with FakeGemini(scripted_for=_is_chat_call) as gemini:
        gemini.enqueue(text(REPLY, chunks=20, chunk_delay_s=0.15))
        yield gemini


def _model_env(gemini: FakeGemini) -> dict[str, str]:
    return {
        "CONFIDANT_MODEL": "gemini",
        "CONFIDANT_GEMINI_BASE_URL": gemini.base_url,
        "GOOGLE_API_KEY": "test-key",
        "CONFIDANT_STREAM_POLL_S": "0.1",
        "CONFIDANT_STREAM_FLUSH_S": "0.1",
        # A fresh process's first Firestore calls on a shared, loaded emulator can be slow;
        # this test is about resuming, not about the store's 503 (tests/e2e/test_store_faults).
        "CONFIDANT_STORE_TIMEOUT_S": "60",
    }


@pytest.fixture(params=["sqlite", "firestore"])
def two_servers(request, tmp_path, slow_model) -> Iterator[tuple[Server, Server, Headers, Headers]]:  # type: ignore[no-untyped-def]
    """(server A, server B, the caller's headers, another user's headers) on one store."""
    env = _model_env(slow_model)
    if request.param == "firestore":
        start: Callable[..., Server] = request.getfixturevalue("cloud_server")
        issuer = request.getfixturevalue("token_issuer")
        a, b = start(**env), start(**env)
        owner, stranger = (issuer.issue(f"{who}-{uuid.uuid4().hex[:6]}") for who in "ab")
        yield a, b, {"Authorization": f"Bearer {owner}"}, {"Authorization": f"Bearer {stranger}"}
        return
    servers = []
    for _ in range(2):
        port = free_port()
        local = base_env(PORT=str(port), CONFIDANT_SQLITE_PATH=str(tmp_path / "one.db"), **env)
        servers.append(start_server([sys.executable, "-m", "confidant.local_server"], local, port))
    try:
        yield servers[0], servers[1], {"X-User-Id": "resume-user"}, {"X-User-Id": "stranger"}
    finally:
        for server in servers:
            stop_server(server)


def _run_client(node: str, **config: object) -> dict:
    done = subprocess.run(
        [node, str(CLIENT_DIR / "resume.mjs"), json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=CLIENT_DIR,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_dropped_reply_resumes_on_another_server_without_a_second_model_call(
    two_servers, slow_model
) -> None:  # type: ignore[no-untyped-def]
    node = _node()
    a, b, headers, stranger_headers = two_servers
    session_id = f"resume-{uuid.uuid4().hex[:8]}"
    common = {"headers": headers, "sessionId": session_id, "app": APP}

    dropped = _run_client(
        node,
        a=a.base_url,
        b=b.base_url,
        message="I keep putting off my thesis",
        mode="drop",
        **common,
    )

    # The chat lost its connection after the first words, as the user would have seen them ...
    assert dropped["afterDrop"]["status"] == "error", dropped
    assert "network" in dropped["afterDrop"]["error"], dropped
    assert dropped["textBeforeDrop"] and REPLY.startswith(dropped["textBeforeDrop"])
    assert len(dropped["textBeforeDrop"]) < len(REPLY)
    # ... and after resuming on B it holds the whole reply, once, in one message.
    assert dropped["status"] == "ready" and dropped["error"] is None, dropped
    assert dropped["text"] == REPLY
    assert dropped["roles"] == ["user", "assistant"] and dropped["textParts"] == 1
    # B tailed the turn A was still running: the model streams for >= 2.85 s after its first
    # chunk (19 pauses of 0.15 s), and the resume began right after that chunk.
    assert dropped["resumeMs"] > 1000, dropped

    # A page reloaded on B after the turn committed: the finished message, replayed.
    reloaded = _run_client(node, a=a.base_url, b=b.base_url, mode="reload", **common)
    assert reloaded["text"] == REPLY and reloaded["roles"] == ["assistant"], reloaded

    # One model call for the reply; the turn committed once (on A).
    assert len([r for r in slow_model.requests if _is_chat_call(r)]) == 1
    with httpx.Client(base_url=b.base_url, headers=headers, timeout=30) as client:
        session = client.get(f"/v1/sessions/{session_id}", params={"app": APP}).json()
        replay = client.get(f"/v1/chat/{session_id}/stream", params={"app": APP})
        stranger = client.get(
            f"/v1/chat/{session_id}/stream", params={"app": APP}, headers=stranger_headers
        )
    model_texts = [
        "".join(p.get("text", "") for p in e["content"]["parts"])
        for e in session["events"]
        if e.get("author") != "user" and e.get("content")
    ]
    assert model_texts == [REPLY]
    parts, done = parse_frames(replay.text)
    assert replay.status_code == 200 and done and streamed_text(parts) == REPLY
    assert replay.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert stranger.status_code == 404 and REPLY[:20] not in stranger.text
