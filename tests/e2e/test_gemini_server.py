"""The chat server on the Gemini path: functions-framework in a subprocess, the real google-genai
client inside it, a local server speaking Gemini's REST wire format (streamGenerateContent SSE)."""

from __future__ import annotations

import sys

import httpx

from tests.e2e.conftest import base_env, start_server, stop_server
from tests.support.emulators import free_port
from tests.support.fake_gemini import FakeGemini, error, function_call, text
from tests.support.sse import of_type, parse_frames, streamed_text


def test_function_call_turn_and_retries_through_gemini_wire_format(tmp_path) -> None:
    with FakeGemini() as gemini:
        gemini.enqueue(
            error(429, "quota"),
            function_call("advance_stage", next_stage="stage_2_integration", summary="fear"),
            text("Both parts of you want to be safe. What do they share?", chunks=4),
        )
        port = free_port()
        env = base_env(
            PORT=str(port),
            CONFIDANT_SQLITE_PATH=str(tmp_path / "gemini.db"),
            CONFIDANT_MODEL="gemini",
            CONFIDANT_GEMINI_BASE_URL=gemini.base_url,
            CONFIDANT_RETRY_DELAYS="[0.05, 0.1]",
            GOOGLE_API_KEY="test-key",
        )
        server = start_server([sys.executable, "-m", "confidant.local_server"], env, port)
        try:
            response = httpx.post(
                f"{server.base_url}/v1/chat",
                json={"message": "I am scared my work is never enough", "session_id": "g1"},
                headers={"X-User-Id": "gemini-user"},
                timeout=30,
            )
        finally:
            stop_server(server)
        # The post-turn jobs' extractors call the same model after the reply: not the coach's.
        requests = [r for r in gemini.requests if "CONFIDANT_EXTRACTOR" not in r.system_instruction]

    assert response.status_code == 200
    parts, done = parse_frames(response.text)
    assert done and parts[-1]["type"] == "finish", parts
    retry = of_type(parts, "data-retry")
    assert [r["data"]["status_code"] for r in retry] == [429]
    calls = of_type(parts, "tool-input-available")
    assert [c["toolName"] for c in calls] == ["advance_stage"]
    assert of_type(parts, "tool-output-available")[0]["output"]["current_stage"] == (
        "stage_2_integration"
    )
    assert of_type(parts, "data-protocol-progress")[0]["data"]["step"] == 2
    assert streamed_text(parts) == "Both parts of you want to be safe. What do they share?"
    assert len(of_type(parts, "text-delta")) >= 2  # streamed, not one block

    assert len(requests) == 3  # the 429, the call, the answer to the function response
    assert all(r.stream for r in requests)
    assert requests[0].api_key == "test-key"
    assert "CURRENT_STAGE: stage_1_awareness" in requests[1].system_instruction
    assert {"advance_stage", "retrieve_wisdom", "save_crystal"} <= set(requests[1].function_names)
    answered = requests[2].function_responses
    assert answered and answered[0]["name"] == "advance_stage"
