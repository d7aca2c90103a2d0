"""Retries of transient model errors, reported to the current request as they happen.

`RetryingLlm` wraps the process-wide model. A transient failure (429, 5xx, timeout, refused
connection) that happens before the first response chunk is retried after each delay of a fixed
list; every retry is announced to the listeners installed with `retry_listener` in the current
context, so the chat service can tell the user ("busy, retrying in 2 s") instead of going silent.

Wrapping hides the inner model's type from ADK. What ADK 2.13 decides by type (checked against
the installed source):

* `capabilities` (output schema together with tools): delegated to the inner model here.
* `isinstance(model, Gemini) and model.use_interactions_api` (flows/llm_flows/context/_contents.py,
  _interactions.py): only matters for the Interactions API, which the factory never enables.
* `isinstance(model, LiteLlm)` (`_is_id_pairing_model` in context/_contents.py) tells ADK to keep
  its own `adk-…` function-call ids when replaying history (OpenAI-style APIs pair a tool result
  with its call by id). Through the wrapper it answers False, so `adk-…` ids would be stripped,
  but LiteLlm never produces them: litellm fills in an id for every tool call (a uuid, or the
  stream index) when the server sends none, so the ids pair either way (tested against the fake
  OpenAI server with id-less tool calls, streamed and not). Pydantic models ignore ABC
  `register`, so a virtual subclass is no way around it; subclassing LiteLlm would be.
* Context caching, built-in tools (google_search, code execution), streaming function-call
  aggregation and telemetry all go by the model *name* or happen inside `Gemini` itself, so they
  behave the same through the wrapper (`model` is kept equal to the inner model's name).
* Runner CFC (`support_cfc`) checks `type(model).connect is not BaseLlm.connect`; the wrapper
  overrides `connect` to delegate, so a model without live support fails at connect time instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import logging
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, aclosing
from contextvars import ContextVar
from typing import Any

from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.models._capabilities import LlmCapabilities
from google.adk.models.base_llm_connection import BaseLlmConnection
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, model_validator

from confidant.errors import TransientModelError

logger = logging.getLogger(__name__)

DEFAULT_RETRY_DELAYS: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)


class RetryNotice(BaseModel):
    """One retry about to happen, as told to the request that is waiting on the model."""

    model_config = ConfigDict(frozen=True)

    attempt: int  # 1-based number of this retry
    max_retries: int
    delay_s: float
    reason: str  # e.g. "429 RESOURCE_EXHAUSTED"
    status_code: int | None = None


RetryCallback = Callable[[RetryNotice], Awaitable[None] | None]

# A tuple (not a list) so nested listeners never mutate what an outer context sees.
_listeners: ContextVar[tuple[RetryCallback, ...]] = ContextVar(
    "confidant_retry_listeners", default=()
)


@contextlib.contextmanager
def retry_listener(callback: RetryCallback) -> Iterator[None]:
    """Installs `callback` for retries of model calls made in this context (and tasks it starts).

    Listeners nest: an inner listener is called in addition to the outer ones.
    """
    token = _listeners.set((*_listeners.get(), callback))
    try:
        yield
    finally:
        _listeners.reset(token)


async def _notify(notice: RetryNotice) -> None:
    for callback in _listeners.get():
        try:
            result = callback(notice)
            if inspect.isawaitable(result):
                await result
        except Exception:
            # Reporting must never turn a recoverable model error into a failed turn.
            logger.warning("retry listener failed", exc_info=True)


# --- Classifying errors ---------------------------------------------------------------------

_LITELLM_TRANSIENT_NAMES = (
    "RateLimitError",
    "ServiceUnavailableError",
    "Timeout",
    "APIConnectionError",
    "InternalServerError",
    "BadGatewayError",
)
# litellm hard-codes status 500 on this one although a response did arrive and then failed a
# client-side check: re-sending would not help (ADK's FallbackModel makes the same exception).
_LITELLM_NOT_TRANSIENT_NAMES = ("APIResponseValidationError",)


def _litellm_classes(names: Sequence[str]) -> tuple[type[BaseException], ...]:
    # Only consulted when litellm is already imported: nothing else can raise its errors, and
    # importing it costs seconds.
    exceptions = getattr(sys.modules.get("litellm"), "exceptions", None)
    if exceptions is None:
        return ()
    found = (getattr(exceptions, name, None) for name in names)
    return tuple(cls for cls in found if isinstance(cls, type))


def _network_classes() -> tuple[type[BaseException], ...]:
    import httpx

    classes: list[type[BaseException]] = [httpx.TimeoutException, httpx.ConnectError]
    # google-genai sends async requests through aiohttp when it is installed (it is, here).
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is not None:
        classes += [
            aiohttp.ClientConnectorError,
            aiohttp.ClientOSError,
            aiohttp.ServerDisconnectedError,
            aiohttp.ServerTimeoutError,
        ]
    return tuple(classes)


def _is_transient_status(code: int | None) -> bool:
    return code is not None and (code == 429 or code >= 500)


def status_code_of(error: BaseException) -> int | None:
    """The HTTP status an SDK error carries, if any (google-genai, litellm/openai, httpx)."""
    if isinstance(error, genai_errors.APIError):
        return int(error.code) if isinstance(error.code, int) else None
    if isinstance(error, _litellm_classes(_LITELLM_NOT_TRANSIENT_NAMES)):
        return None
    code = getattr(error, "status_code", None)
    if isinstance(code, int):
        return code
    code = getattr(getattr(error, "response", None), "status_code", None)
    return code if isinstance(code, int) else None


def is_transient(error: BaseException) -> bool:
    """Whether retrying the same request later may succeed."""
    if isinstance(error, TransientModelError):
        return True
    if isinstance(error, genai_errors.APIError):
        return _is_transient_status(status_code_of(error))
    if isinstance(error, _litellm_classes(_LITELLM_NOT_TRANSIENT_NAMES)):
        return False
    if isinstance(error, _litellm_classes(_LITELLM_TRANSIENT_NAMES)):
        return True
    if isinstance(error, TimeoutError):  # asyncio.TimeoutError is the same class on 3.11
        return True
    if isinstance(error, _network_classes()):
        return True
    return _is_transient_status(status_code_of(error))


def describe(error: BaseException) -> str:
    """A short reason for a notice or a log line, e.g. "429 RESOURCE_EXHAUSTED"."""
    if isinstance(error, genai_errors.APIError):
        return f"{error.code} {error.status or error.message or ''}".strip()
    if isinstance(error, TransientModelError):
        return error.message
    code = status_code_of(error)
    name = type(error).__name__
    if code is not None:
        return f"{code} {name}"
    text = str(error).strip()
    return f"{name}: {text}" if text else name


# --- Request snapshot -----------------------------------------------------------------------

# Models edit the request in place before sending it (appending a "continue" user turn, moving
# tools, adding headers); a retry must start from what the flow built, not from those edits.
_SNAPSHOT_PRIVATE = tuple(LlmRequest.__private_attributes__)


def _copy_contents(contents: list[types.Content]) -> list[types.Content]:
    # Content and Part copied, payloads shared: models replace parts or set a part's top-level
    # fields, never edit nested payloads in place (the contract ADK's own request copy relies on,
    # flows/llm_flows/context/_contents.py), and deep-copying long histories costs milliseconds.
    return [
        content.model_copy(update={"parts": [part.model_copy() for part in content.parts or []]})
        if content.parts
        else content.model_copy()
        for content in contents
    ]


class _Snapshot:
    def __init__(self, request: LlmRequest) -> None:
        self._contents = _copy_contents(request.contents)
        self._config = request.config.model_copy(deep=True)
        self._live = request.live_connect_config.model_copy(deep=True)
        self._model = request.model
        self._private = copy.deepcopy({name: getattr(request, name) for name in _SNAPSHOT_PRIVATE})

    def restore(self, request: LlmRequest) -> None:
        # Fresh copies each time: the restored objects are handed to the model, which edits them.
        request.contents = _copy_contents(self._contents)
        request.config = self._config.model_copy(deep=True)
        request.live_connect_config = self._live.model_copy(deep=True)
        request.model = self._model
        for name, value in copy.deepcopy(self._private).items():
            setattr(request, name, value)


# --- The wrapper ----------------------------------------------------------------------------


class RetryingLlm(BaseLlm):
    """Wraps a model; retries transient errors raised before the first chunk, reporting each."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str = ""  # always the inner model's name: ADK copies it into every request
    inner: BaseLlm
    delays: list[float] = Field(default_factory=lambda: list(DEFAULT_RETRY_DELAYS))
    max_delay: float = 30.0
    # Injected so tests never wait on the wall clock.
    sleep: Callable[[float], Awaitable[Any]] = Field(default=asyncio.sleep, exclude=True)

    @model_validator(mode="after")
    def _name_from_inner(self) -> RetryingLlm:
        self.model = self.inner.model
        return self

    @property
    def capabilities(self) -> LlmCapabilities:
        return self.inner.capabilities

    def connect(self, llm_request: LlmRequest) -> AbstractAsyncContextManager[BaseLlmConnection]:
        # Live sessions are not retried: a failure there belongs to the open connection.
        return self.inner.connect(llm_request)

    @property
    def max_retries(self) -> int:
        return len(self.delays)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        snapshot = _Snapshot(llm_request) if self.delays else None
        attempt = 0
        while True:
            yielded = False
            try:
                async with aclosing(self.inner.generate_content_async(llm_request, stream)) as gen:
                    async for response in gen:
                        yielded = True
                        yield response
                return
            except Exception as error:
                # After a chunk went out the turn belongs to this attempt: retrying would
                # splice a second answer onto the first.
                if yielded or not is_transient(error):
                    raise
                reason = describe(error)
                if attempt >= len(self.delays):
                    raise TransientModelError(
                        f"model {self.model} unavailable after {attempt + 1} attempts: {reason}"
                    ) from error
                delay = min(self.delays[attempt], self.max_delay)
                attempt += 1
                logger.warning(
                    "model %s: transient error (%s); retry %d/%d in %.1fs",
                    self.model,
                    reason,
                    attempt,
                    len(self.delays),
                    delay,
                )
                await _notify(
                    RetryNotice(
                        attempt=attempt,
                        max_retries=len(self.delays),
                        delay_s=delay,
                        reason=reason,
                        status_code=status_code_of(error),
                    )
                )
                await self.sleep(delay)
                if snapshot is not None:
                    snapshot.restore(llm_request)


__all__ = [
    "DEFAULT_RETRY_DELAYS",
    "RetryCallback",
    "RetryNotice",
    "RetryingLlm",
    "describe",
    "is_transient",
    "retry_listener",
    "status_code_of",
]
