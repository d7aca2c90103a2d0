"""The Gemini path end to end over HTTP: build_model → ADK Runner → google-genai → fake server."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from google.genai import errors as genai_errors

from confidant.errors import TransientModelError
from confidant.models import RetryingLlm, RetryNotice, build_model, retry_listener
from confidant.settings import Settings
from tests.integration.models.adk_run import INSTRUCTION, QUOTES, TOOL_LOG, run_turn
from tests.support.fake_gemini import (
    FakeGemini,
    GeminiRequest,
    Reply,
    error,
    function_call,
    text,
)
from tests.support.fake_http import split_text

DELAYS = [0.01, 0.02, 0.03]
API_KEY = "fake-gemini-key"


def settings_for(base_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "model": "gemini",
        "GOOGLE_API_KEY": API_KEY,
        "gemini_model": "gemini-2.5-flash",
        "gemini_base_url": base_url,
        "retry_delays": DELAYS,
        "model_timeout_s": 10.0,
    } | overrides
    return Settings(**values)


@pytest.fixture
async def model(gemini: FakeGemini) -> AsyncIterator[RetryingLlm]:
    built = build_model(settings_for(gemini.base_url))
    assert isinstance(built, RetryingLlm)
    yield built
    client = getattr(built.inner, "client", None)
    if client is not None:
        await client.aio.aclose()  # the aiohttp session of this loop


@pytest.fixture(autouse=True)
def _reset_tool_log() -> None:
    TOOL_LOG.calls.clear()


async def test_streamed_text_arrives_as_partials_then_one_final(
    gemini: FakeGemini, model: RetryingLlm
) -> None:
    answer = "Breathe in, and let the day settle."
    gemini.enqueue(text(answer, chunks=3))
    turn = await run_turn(model, "I feel tense")

    assert turn.partial_texts == split_text(answer, 3)
    assert len(turn.partial_texts) == 3
    assert turn.final_text == answer
    [request] = gemini.requests
    assert request.stream and request.query.get("alt") == "sse"
    assert request.model == "gemini-2.5-flash"
    assert request.api_key == API_KEY
    assert INSTRUCTION in request.system_instruction
    assert request.function_names == ["lookup_quote"]
    assert request.last_text == "I feel tense"


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "unary"])
async def test_function_call_turn_runs_the_tool_and_sends_its_result_back(
    gemini: FakeGemini, model: RetryingLlm, stream: bool
) -> None:
    def answer(request: GeminiRequest) -> Reply:
        [response] = request.function_responses
        return text(f"Here is one: {response['response']['quote']}")

    gemini.enqueue(function_call("lookup_quote", topic="courage"))
    gemini.responder = answer
    turn = await run_turn(model, "Give me a quote about courage", stream=stream)

    assert TOOL_LOG.calls == [{"topic": "courage"}]
    assert turn.final_text == f"Here is one: {QUOTES['courage']}"
    first, second = gemini.requests
    assert first.stream is stream and second.stream is stream
    # The second request replays the call and carries the tool's result.
    assert second.contents[-2]["role"] == "model"
    assert second.contents[-2]["parts"][0]["functionCall"]["name"] == "lookup_quote"
    assert second.function_responses[0]["name"] == "lookup_quote"
    assert second.function_responses[0]["response"]["quote"] == QUOTES["courage"]


async def test_rate_limited_twice_then_success_reports_two_retries(
    gemini: FakeGemini, model: RetryingLlm
) -> None:
    gemini.enqueue(
        error(429, "Quota exceeded", retry_delay_s=7),
        error(429, "Quota exceeded"),
        text("Still here with you."),
    )
    notices: list[RetryNotice] = []
    with retry_listener(notices.append):
        turn = await run_turn(model, "hello")

    assert turn.final_text == "Still here with you."
    assert len(gemini.requests) == 3
    assert [(n.attempt, n.delay_s, n.status_code) for n in notices] == [
        (1, DELAYS[0], 429),
        (2, DELAYS[1], 429),
    ]
    assert all(n.reason == "429 RESOURCE_EXHAUSTED" for n in notices)
    assert all(n.max_retries == len(DELAYS) for n in notices)
    # Each attempt sent the same conversation (no edits leaked from a failed attempt).
    assert len({str(r.body["contents"]) for r in gemini.requests}) == 1


async def test_always_unavailable_raises_transient_model_error_after_all_attempts(
    gemini: FakeGemini, model: RetryingLlm
) -> None:
    gemini.responder = lambda request: error(503)
    notices: list[RetryNotice] = []
    with retry_listener(notices.append), pytest.raises(TransientModelError) as raised:
        await run_turn(model, "hello")

    assert len(gemini.requests) == len(DELAYS) + 1
    assert [n.delay_s for n in notices] == DELAYS
    assert "503 UNAVAILABLE" in raised.value.message
    assert raised.value.status == 503 and raised.value.code == "model_unavailable"


async def test_bad_request_is_not_retried(gemini: FakeGemini, model: RetryingLlm) -> None:
    gemini.enqueue(error(400, "Invalid JSON payload"), text("never sent"))
    notices: list[RetryNotice] = []
    with retry_listener(notices.append), pytest.raises(genai_errors.ClientError) as raised:
        await run_turn(model, "hello")

    assert raised.value.code == 400
    assert len(gemini.requests) == 1
    assert notices == []
    assert gemini.pending == 1


async def test_error_in_the_middle_of_a_stream_is_not_retried(
    gemini: FakeGemini, model: RetryingLlm
) -> None:
    gemini.enqueue(Reply(text="one two three", chunks=3, fail_after_chunks=1), text("never"))
    notices: list[RetryNotice] = []
    with retry_listener(notices.append), pytest.raises(genai_errors.ServerError) as raised:
        await run_turn(model, "hello")

    assert raised.value.code == 500
    assert len(gemini.requests) == 1
    assert notices == []


async def test_request_timeout_is_transient(gemini: FakeGemini) -> None:
    # The first reply is held until the client has given up and retried, so no sleep races the
    # timeout; the timeout is also each attempt's whole budget, so it leaves the on-time reply
    # (a local stream of three events) a wide margin on a loaded machine.
    model = build_model(settings_for(gemini.base_url, model_timeout_s=2.0))
    gemini.enqueue(Reply(text="too late", held=True), text("on time"))
    notices: list[RetryNotice] = []
    try:
        with retry_listener(notices.append):
            turn = await run_turn(model, "hello")
    finally:
        await model.inner.client.aio.aclose()  # type: ignore[attr-defined]

    assert turn.final_text == "on time"
    assert len(notices) == 1 and "Timeout" in notices[0].reason
    assert len(gemini.requests) == 2


async def test_refused_connection_is_transient() -> None:
    # A port that was just free: nothing listens there.
    closed = FakeGemini().start()
    base_url = closed.base_url
    closed.stop()
    model = build_model(settings_for(base_url, retry_delays=[0.01]))
    notices: list[RetryNotice] = []
    try:
        with retry_listener(notices.append), pytest.raises(TransientModelError):
            await run_turn(model, "hello")
    finally:
        await model.inner.client.aio.aclose()  # type: ignore[attr-defined]
    assert len(notices) == 1


SUBPROCESS_SCRIPT = """
import asyncio
from google.adk.models import LlmRequest
from google.genai import types
from confidant.models import build_model
from confidant.settings import Settings

async def main() -> None:
    model = build_model(Settings())
    request = LlmRequest(model=model.model, contents=[types.UserContent("ping")])
    async for response in model.generate_content_async(request):
        print(type(model.inner).__name__, response.content.parts[0].text)

asyncio.run(main())
"""


async def test_a_server_in_a_subprocess_can_use_the_fake(gemini: FakeGemini) -> None:
    # What an end-to-end test does: point a separate process at the fake through its env.
    gemini.enqueue(text("pong"))
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CONFIDANT_", "GOOGLE_"))
    } | {
        "CONFIDANT_MODEL": "auto",
        "GOOGLE_API_KEY": API_KEY,
        "CONFIDANT_GEMINI_BASE_URL": gemini.base_url,
        "PYTHONPATH": os.getcwd(),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SUBPROCESS_SCRIPT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()
    assert stdout.decode().strip() == "Gemini pong"
    [request] = gemini.requests
    assert request.api_key == API_KEY and request.last_text == "ping"
