"""The LiteLLM path over HTTP: build_model → ADK Runner → litellm → a fake OpenAI-style server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from confidant.errors import TransientModelError
from confidant.models import RetryingLlm, RetryNotice, build_model, retry_listener
from confidant.settings import Settings
from tests.integration.models.adk_run import INSTRUCTION, QUOTES, TOOL_LOG, run_turn
from tests.support.fake_http import split_text
from tests.support.fake_openai import (
    FakeOpenAI,
    OpenAIRequest,
    Reply,
    ToolCall,
    error,
    text,
    tool_call,
)

DELAYS = [0.01, 0.02]
API_KEY = "sk-fake-openai"


def build(server: FakeOpenAI, **overrides: Any) -> RetryingLlm:
    values: dict[str, Any] = {
        "model": "litellm",
        "litellm_model": "openai/fake-coach",
        "litellm_api_base": f"{server.base_url}/v1",
        "litellm_api_key": API_KEY,
        "retry_delays": DELAYS,
        "model_timeout_s": 10.0,
    } | overrides
    model = build_model(Settings(**values))
    assert isinstance(model, RetryingLlm)
    return model


@pytest.fixture(autouse=True)
def _reset_tool_log() -> None:
    TOOL_LOG.calls.clear()


async def test_streamed_text_arrives_as_partials_then_one_final(openai_server: FakeOpenAI) -> None:
    answer = "One small step is still a step."
    openai_server.enqueue(text(answer, chunks=3))
    turn = await run_turn(build(openai_server), "I am stuck")

    assert [t for t in turn.partial_texts if t] == split_text(answer, 3)
    assert turn.final_text == answer
    [request] = openai_server.requests
    assert request.stream
    assert request.model == "fake-coach"
    assert request.api_key == API_KEY
    assert request.messages[0]["role"] == "system"
    assert INSTRUCTION in str(request.messages[0]["content"])
    assert request.function_names == ["lookup_quote"]
    assert request.last_text == "I am stuck"


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "unary"])
@pytest.mark.parametrize("server_ids", [True, False], ids=["server-ids", "no-ids"])
async def test_tool_call_turn_pairs_the_result_with_its_call(
    openai_server: FakeOpenAI, stream: bool, server_ids: bool
) -> None:
    def answer(request: OpenAIRequest) -> Reply:
        [result] = request.tool_results
        return text(f"Here is one: {json.loads(result['content'])['quote']}")

    call = ToolCall("lookup_quote", {"topic": "courage"}, **({} if server_ids else {"id": None}))
    openai_server.enqueue(Reply(tool_calls=(call,)))
    openai_server.responder = answer
    turn = await run_turn(build(openai_server), "A quote about courage?", stream=stream)

    assert TOOL_LOG.calls == [{"topic": "courage"}]
    assert turn.final_text == f"Here is one: {QUOTES['courage']}"
    first, second = openai_server.requests
    assert first.stream is stream
    assistant = second.messages[-2]
    [sent_call] = assistant["tool_calls"]
    assert sent_call["function"]["name"] == "lookup_quote"
    [result] = second.tool_results
    # OpenAI-style APIs pair a result with its call by id: it must survive the replay even
    # through the retry wrapper (ADK strips only its own "adk-" ids, which litellm never leaves).
    assert sent_call["id"] and result["tool_call_id"] == sent_call["id"]


async def test_rate_limit_is_retried_and_reported(openai_server: FakeOpenAI) -> None:
    openai_server.enqueue(error(429), tool_call("lookup_quote", topic="courage"), "Done.")
    notices: list[RetryNotice] = []
    with retry_listener(notices.append):
        turn = await run_turn(build(openai_server), "hello")

    assert turn.final_text == "Done."
    assert len(openai_server.requests) == 3
    [notice] = notices
    assert (notice.attempt, notice.delay_s, notice.status_code) == (1, DELAYS[0], 429)
    assert notice.reason == "429 RateLimitError"


async def test_always_unavailable_exhausts_the_retries(openai_server: FakeOpenAI) -> None:
    openai_server.responder = lambda request: error(503)
    with pytest.raises(TransientModelError):
        await run_turn(build(openai_server), "hello")
    assert len(openai_server.requests) == len(DELAYS) + 1


async def test_bad_request_is_not_retried(openai_server: FakeOpenAI) -> None:
    import litellm

    openai_server.enqueue(error(400, "bad messages"), "never")
    with pytest.raises(litellm.BadRequestError):
        await run_turn(build(openai_server), "hello")
    assert len(openai_server.requests) == 1
