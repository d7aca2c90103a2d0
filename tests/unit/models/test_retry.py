"""RetryingLlm with a scripted inner model: what is retried, what is reported, what propagates."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Callable
from typing import Any

import httpx
import pytest
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.models._capabilities import LlmCapabilities
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import Field

from confidant.errors import TransientModelError
from confidant.models import RetryingLlm, RetryNotice, is_transient, retry_listener

# An inner step: a list of text chunks to stream (then a final aggregate), or an exception to
# raise before any chunk, or ("chunks-then-raise", chunks, error).
Step = list[str] | BaseException | tuple[list[str], BaseException]


def api_error(code: int, status: str) -> genai_errors.APIError:
    body = {"error": {"code": code, "message": "scripted", "status": status}}
    cls = genai_errors.ClientError if code < 500 else genai_errors.ServerError
    return cls(code, body)


class ScriptedLlm(BaseLlm):
    """Plays one step per call; records the contents each call received."""

    model: str = "scripted-1"
    steps: list[Any]
    calls: list[list[types.Content]] = Field(default_factory=list)
    mutate_request: bool = False

    @property
    def capabilities(self) -> LlmCapabilities:
        return LlmCapabilities(output_schema_and_tools=True)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.calls.append(list(llm_request.contents))
        if self.mutate_request:
            # What real models do before sending (e.g. appending a "continue" user turn).
            llm_request.contents.append(types.UserContent("edited by the model"))
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        chunks, late_error = (step, None) if isinstance(step, list) else step
        for chunk in chunks:
            yield LlmResponse(content=types.ModelContent(chunk), partial=True)
        if late_error is not None:
            raise late_error
        yield LlmResponse(content=types.ModelContent("".join(chunks)))


class SleepRecorder:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def wrap(
    steps: list[Any], delays: list[float] | None = None, **options: Any
) -> tuple[RetryingLlm, ScriptedLlm, SleepRecorder]:
    inner = ScriptedLlm(steps=steps, calls=[], **options)
    sleep = SleepRecorder()
    model = RetryingLlm(inner=inner, delays=delays or [1.0, 2.0, 4.0, 8.0], sleep=sleep)
    return model, inner, sleep


def request() -> LlmRequest:
    return LlmRequest(model="scripted-1", contents=[types.UserContent("hi")])


async def collect(model: BaseLlm, *, stream: bool = True) -> list[LlmResponse]:
    return [r async for r in model.generate_content_async(request(), stream=stream)]


def texts(responses: list[LlmResponse]) -> list[str]:
    return [r.content.parts[0].text or "" for r in responses if r.content and r.content.parts]


async def test_two_rate_limits_then_success_reports_two_notices() -> None:
    model, inner, sleep = wrap(
        [api_error(429, "RESOURCE_EXHAUSTED"), api_error(429, "RESOURCE_EXHAUSTED"), ["a", "b"]]
    )
    notices: list[RetryNotice] = []
    with retry_listener(notices.append):
        responses = await collect(model)
    assert texts(responses) == ["a", "b", "ab"]
    assert len(inner.calls) == 3
    assert sleep.delays == [1.0, 2.0]
    assert notices == [
        RetryNotice(
            attempt=1, max_retries=4, delay_s=1.0, reason="429 RESOURCE_EXHAUSTED", status_code=429
        ),
        RetryNotice(
            attempt=2, max_retries=4, delay_s=2.0, reason="429 RESOURCE_EXHAUSTED", status_code=429
        ),
    ]


async def test_exhaustion_raises_transient_model_error_with_last_reason() -> None:
    last = api_error(503, "UNAVAILABLE")
    model, inner, sleep = wrap([api_error(500, "INTERNAL"), api_error(503, "UNAVAILABLE"), last])
    model.delays = [0.5, 0.7]
    with pytest.raises(TransientModelError) as raised:
        await collect(model)
    assert len(inner.calls) == 3  # len(delays) + 1
    assert sleep.delays == [0.5, 0.7]
    assert "503 UNAVAILABLE" in raised.value.message
    assert "3 attempts" in raised.value.message
    assert raised.value.__cause__ is last


async def test_no_delays_means_one_attempt() -> None:
    model, inner, sleep = wrap([api_error(429, "RESOURCE_EXHAUSTED")])
    model.delays = []
    with pytest.raises(TransientModelError):
        await collect(model)
    assert len(inner.calls) == 1 and sleep.delays == []


@pytest.mark.parametrize(
    "error",
    [
        api_error(400, "INVALID_ARGUMENT"),
        api_error(403, "PERMISSION_DENIED"),
        api_error(404, "NOT_FOUND"),
        ValueError("a bug"),
    ],
    ids=["400", "403", "404", "ValueError"],
)
async def test_non_transient_errors_propagate_at_once(error: BaseException) -> None:
    model, inner, sleep = wrap([error, ["never"]])
    notices: list[RetryNotice] = []
    with retry_listener(notices.append), pytest.raises(type(error)) as raised:
        await collect(model)
    assert raised.value is error
    assert len(inner.calls) == 1 and sleep.delays == [] and notices == []


async def test_error_after_first_chunk_is_not_retried() -> None:
    late = api_error(503, "UNAVAILABLE")
    model, inner, sleep = wrap([(["par"], late), ["never"]])
    received: list[LlmResponse] = []
    with pytest.raises(genai_errors.ServerError) as raised:
        async for response in model.generate_content_async(request(), stream=True):
            received.append(response)
    assert raised.value is late
    assert texts(received) == ["par"]
    assert len(inner.calls) == 1 and sleep.delays == []


async def test_delay_is_capped_by_max_delay() -> None:
    model, _, sleep = wrap([TimeoutError(), ["ok"]], delays=[90.0])
    model.max_delay = 5.0
    notices: list[RetryNotice] = []
    with retry_listener(notices.append):
        await collect(model)
    assert sleep.delays == [5.0]
    assert notices[0].delay_s == 5.0
    assert notices[0].status_code is None
    assert notices[0].reason == "TimeoutError"


async def test_each_attempt_starts_from_the_request_the_flow_built() -> None:
    model, inner, _ = wrap([api_error(429, "RESOURCE_EXHAUSTED"), ["ok"]], mutate_request=True)
    await collect(model)
    # The first attempt's edit (an appended user turn) is not handed to the second attempt.
    assert [len(contents) for contents in inner.calls] == [1, 1]


async def test_async_listener_is_awaited_and_nested_listeners_all_hear() -> None:
    model, _, _ = wrap([api_error(503, "UNAVAILABLE"), ["ok"]])
    heard: list[str] = []

    async def outer(notice: RetryNotice) -> None:
        await asyncio.sleep(0)
        heard.append(f"outer {notice.attempt}")

    with retry_listener(outer):
        with retry_listener(lambda notice: heard.append(f"inner {notice.attempt}")):
            await collect(model)
        assert heard == ["outer 1", "inner 1"]
        # Leaving the inner block removes only the inner listener.
        model.inner.steps = [api_error(503, "UNAVAILABLE"), ["ok"]]  # type: ignore[attr-defined]
        await collect(model)
    assert heard == ["outer 1", "inner 1", "outer 1"]


async def test_failing_listener_does_not_fail_the_call() -> None:
    model, _, _ = wrap([api_error(503, "UNAVAILABLE"), ["ok"]])

    def broken(notice: RetryNotice) -> None:
        raise RuntimeError("listener bug")

    with retry_listener(broken):
        assert texts(await collect(model))[-1] == "ok"


async def test_listener_reaches_tasks_created_inside_and_not_outside() -> None:
    notices: list[RetryNotice] = []

    async def call() -> None:
        model, _, _ = wrap([api_error(429, "RESOURCE_EXHAUSTED"), ["ok"]])
        await collect(model)

    with retry_listener(notices.append):
        await asyncio.create_task(call())
    assert len(notices) == 1
    await asyncio.create_task(call())  # created outside the block: nobody listens
    assert len(notices) == 1


async def test_non_streaming_call_is_retried_too() -> None:
    model, inner, _ = wrap([api_error(500, "INTERNAL"), ["whole"]])
    responses = await collect(model, stream=False)
    assert texts(responses)[-1] == "whole" and len(inner.calls) == 2


def test_model_name_and_capabilities_come_from_inner() -> None:
    model, inner, _ = wrap([])
    assert model.model == "scripted-1"
    assert model.inner is inner
    assert model.capabilities.output_schema_and_tools is True


async def test_connect_delegates_to_inner() -> None:
    model, _, _ = wrap([])
    with pytest.raises(NotImplementedError, match="scripted-1"):
        model.connect(request())


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


def _litellm_errors() -> list[tuple[str, Callable[[], BaseException], bool]]:
    litellm = _litellm()
    args = {"message": "x", "llm_provider": "openai", "model": "m"}
    return [
        ("RateLimitError", lambda: litellm.RateLimitError(**args), True),
        ("ServiceUnavailableError", lambda: litellm.ServiceUnavailableError(**args), True),
        ("InternalServerError", lambda: litellm.InternalServerError(**args), True),
        ("Timeout", lambda: litellm.Timeout(**args), True),
        ("APIConnectionError", lambda: litellm.APIConnectionError(**args), True),
        ("BadRequestError", lambda: litellm.BadRequestError(**args), False),
        ("ContextWindowExceeded", lambda: litellm.ContextWindowExceededError(**args), False),
        ("AuthenticationError", lambda: litellm.AuthenticationError(**args), False),
        ("APIResponseValidationError", lambda: litellm.APIResponseValidationError(**args), False),
    ]


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (api_error(429, "RESOURCE_EXHAUSTED"), True),
        (api_error(500, "INTERNAL"), True),
        (api_error(503, "UNAVAILABLE"), True),
        (api_error(504, "DEADLINE_EXCEEDED"), True),
        (api_error(400, "INVALID_ARGUMENT"), False),
        (api_error(403, "PERMISSION_DENIED"), False),
        (httpx.ConnectTimeout("slow"), True),
        (httpx.ReadTimeout("slow"), True),
        (httpx.ConnectError("refused"), True),
        (TimeoutError(), True),
        (TransientModelError("offline model hiccup"), True),
        (ValueError("bug"), False),
        (RuntimeError("bug"), False),
    ],
)
def test_classification(error: BaseException, transient: bool) -> None:
    assert is_transient(error) is transient


def test_litellm_classification() -> None:
    for name, make, transient in _litellm_errors():
        assert is_transient(make()) is transient, name


def test_aiohttp_connection_errors_are_transient() -> None:
    import aiohttp

    assert is_transient(aiohttp.ServerDisconnectedError())
    assert is_transient(aiohttp.ClientOSError(111, "refused"))
