"""Fault injection through the real server (issue 14, item 3): the model failing in each way a
user can meet — 5xx on every attempt, a timeout, a stream that stops mid-reply — and the process
killed mid-stream. Each case: the user gets a clear `error` part, nothing is stored twice or half,
and the same session takes the next turn."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.conftest import Server, base_env, start_server, stop_server
from tests.support.emulators import free_port
from tests.support.fake_gemini import FakeGemini, GeminiRequest, Reply, Step, error, text
from tests.support.sse import of_type, parse_frames, streamed_text

USER = {"X-User-Id": "fault-user"}


def _server(tmp_path, gemini: FakeGemini, **env: str) -> Server:  # type: ignore[no-untyped-def]
    port = free_port()
    settings = base_env(
        PORT=str(port),
        CONFIDANT_SQLITE_PATH=str(tmp_path / "faults.db"),
        CONFIDANT_MODEL="gemini",
        CONFIDANT_GEMINI_BASE_URL=gemini.base_url,
        CONFIDANT_RETRY_DELAYS="[0.05, 0.05]",
        CONFIDANT_MODEL_TIMEOUT_S="1.5",
        GOOGLE_API_KEY="test-key",
        **env,
    )
    return start_server([sys.executable, "-m", "confidant.local_server"], settings, port)


FAULTS = {
    "fault-5xx": error(503),  # on every attempt
    "fault-timeout": Reply(text="too late", delay_s=5.0),  # past the model timeout, each attempt
    "fault-cut": Reply(text="I hear you and I", chunks=4, fail_after_chunks=2),  # dies mid-reply
}
SLOW = Reply(text="one two three four five six", chunks=6, chunk_delay_s=1.0)


def _coach(request: GeminiRequest) -> Step:
    """The model, faulty on cue: the coach's replies by the user's words; the post-turn
    extractors (which call the same model) get an empty answer."""
    if "CONFIDANT_EXTRACTOR" in request.system_instruction:
        return text("{}")
    said = request.last_text
    if said.startswith("slow"):
        return SLOW
    return FAULTS.get(said.split(" ")[0], text(f"reply to {said}"))


@pytest.fixture
def gemini() -> Iterator[FakeGemini]:
    with FakeGemini(responder=_coach) as fake:
        yield fake


def _chat(server: Server, session_id: str, message: str) -> tuple[int, list[dict]]:
    response = httpx.post(
        f"{server.base_url}/v1/chat",
        json={"message": message, "session_id": session_id},
        headers=USER,
        timeout=30,
    )
    parts, _ = parse_frames(response.text) if response.status_code == 200 else ([], False)
    return response.status_code, parts


def stored_texts(server: Server, session_id: str, headers: dict[str, str] = USER) -> list[str]:
    """The text parts of every stored event of the session, in order (GET /v1/sessions/{id})."""
    response = httpx.get(f"{server.base_url}/v1/sessions/{session_id}", headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    return [
        part["text"]
        for event in response.json()["events"]
        for part in (event.get("content") or {}).get("parts") or []
        if "text" in part
    ]


def test_model_faults_give_a_clear_error_and_the_session_takes_the_next_turn(
    tmp_path, gemini: FakeGemini
) -> None:
    server = _server(tmp_path, gemini)
    try:
        outcomes = {}
        for n, fault in enumerate(FAULTS):
            status, parts = _chat(server, "faulty", f"{fault} {n}")
            outcomes[fault] = (status, [p["errorText"] for p in of_type(parts, "error")])
            status, parts = _chat(server, "faulty", f"after {n}")
            assert status == 200 and streamed_text(parts) == f"reply to after {n}", parts
            assert not of_type(parts, "error")
        stored = stored_texts(server, "faulty")
    finally:
        stop_server(server)
    for fault, (status, errors) in outcomes.items():
        assert status == 200, fault  # the stream had begun: the error is a part
        assert len(errors) == 1 and "not saved; please send it again" in errors[0], (fault, errors)
    assert "503" in outcomes["fault-5xx"][1][0]
    assert "Timeout" in outcomes["fault-timeout"][1][0]
    # Nothing of a failed turn is stored; every recovered turn exactly once.
    assert stored == [t for n in range(3) for t in (f"after {n}", f"reply to after {n}")]
    coach = [r.last_text.split(" ")[0] for r in gemini.requests if r.last_text.startswith("fault")]
    # Retried before anything streamed; a reply cut mid-stream is never retried (no repeat).
    assert coach.count("fault-5xx") == 3 and coach.count("fault-timeout") == 3
    assert coach.count("fault-cut") == 1


def test_a_process_killed_mid_stream_leaves_the_session_to_another_process(
    tmp_path, gemini: FakeGemini
) -> None:
    env = {"CONFIDANT_LEASE_TTL_S": "2"}
    first = _server(tmp_path, gemini, **env)
    try:
        with httpx.stream(
            "POST",
            f"{first.base_url}/v1/chat",
            json={"message": "slow please", "session_id": "killed"},
            headers=USER,
            timeout=30,
        ) as response:
            seen = ""
            for line in response.iter_lines():
                seen += line
                if '"text-delta"' in line:
                    os.killpg(first.process.pid, signal.SIGKILL)  # mid-reply, before the commit
                    break
        first.process.wait(timeout=10)
    finally:
        stop_server(first)
    assert '"text-delta"' in seen

    second = _server(tmp_path, gemini, **env)
    try:
        status, parts = _chat(second, "killed", "after the crash")
        if status == 409:  # the dead process's lease has not expired yet: a clear, retryable 409
            time.sleep(2.5)
            status, parts = _chat(second, "killed", "after the crash")
        stored = stored_texts(second, "killed")
    finally:
        stop_server(second)
    assert status == 200 and streamed_text(parts) == "reply to after the crash", parts
    # The killed turn committed nothing; the next one is stored once.
    assert stored == ["after the crash", "reply to after the crash"]
