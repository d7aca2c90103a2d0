"""README command one: `confidant-local` serves the chat endpoint on embedded defaults."""

from __future__ import annotations

import subprocess
import sys

import httpx

from tests.e2e.conftest import (
    REPO,
    base_env,
    leave_mid_reply,
    start_local_server,
    start_server,
    stop_server,
)
from tests.support.emulators import free_port
from tests.support.sse import parse_frames, streamed_text


def test_local_server_needs_no_account_key_or_arguments(tmp_path) -> None:
    port = free_port()
    env = base_env(PORT=str(port), CONFIDANT_SQLITE_PATH=str(tmp_path / "local.db"))
    server = start_server([str(REPO / ".venv/bin/confidant-local")], env, port)
    try:
        assert server.base_url == f"http://127.0.0.1:{port}"
        response = httpx.post(
            f"{server.base_url}/v1/chat",
            json={"message": "我最近总是拖延,很焦虑"},
            headers={"X-User-Id": "local-demo"},
            timeout=30,
        )
        assert response.status_code == 200
        parts, done = parse_frames(response.text)
        assert done and parts[-1]["type"] == "finish"
        reply = streamed_text(parts)
        assert any("\u4e00" <= ch <= "\u9fff" for ch in reply)  # answered in Chinese
        assert (tmp_path / "local.db").exists()  # a real database file
    finally:
        stop_server(server)


def test_header_identity_refuses_to_start_in_cloud_mode() -> None:
    for cloud in ({"CONFIDANT_STORE": "firestore"}, {"K_SERVICE": "chat"}):
        result = subprocess.run(
            [sys.executable, "-m", "confidant.local_server"],
            cwd=REPO,
            env=base_env(**cloud),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode != 0
        assert "refusing to start" in result.stderr
        assert "CONFIDANT_AUTH=firebase" in result.stderr


def test_a_client_that_leaves_mid_reply_loses_nothing(tmp_path) -> None:
    server = start_local_server(tmp_path / "leave.db", CONFIDANT_OFFLINE_CHUNK_DELAY_MS="300")
    headers = {"X-User-Id": "leaver"}
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            body = {"message": "I keep avoiding the hard email", "session_id": "gone"}
            got = leave_mid_reply(client, body, headers, "/v1/sessions/gone")
            events = got.json()["events"]
            assert [e["author"] for e in events] == ["user", "onemind_coach"]
            assert events[1]["content"]["parts"][0]["text"]
            # The session takes the next message at once.
            again = client.post(
                "/v1/chat", json={"message": "ok", "session_id": "gone"}, headers=headers
            )
            assert again.status_code == 200
    finally:
        stop_server(server)
