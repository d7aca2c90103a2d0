"""A local server speaking the Gemini REST wire format, for contract tests without a real key.

Usage (in-process; the server runs in a daemon thread, so a subprocess can use it too)::

    with FakeGemini() as gemini:
        gemini.enqueue(error(429), "Hello there", function_call("lookup", q="x"))
        gemini.responder = lambda req: f"you said {req.last_text}"   # when the queue is empty
        settings = Settings(model="gemini", GOOGLE_API_KEY="fake-key",
                            gemini_base_url=gemini.base_url)
        # or, for a server in a subprocess: env CONFIDANT_GEMINI_BASE_URL=gemini.base_url,
        # GOOGLE_API_KEY=anything, CONFIDANT_MODEL=gemini
        ...
        gemini.requests[0].contents, .system_instruction, .tools, .api_key, .stream

Manual runs: `python -m tests.support.fake_gemini` serves echo replies and prints its URL.

Endpoints: `POST …/models/{model}:generateContent` and `…:streamGenerateContent?alt=sse` under
any version prefix (`/v1beta/models/…`, Vertex's `/v1beta1/projects/…/models/…`). A stream is
sent as SSE events `data: <GenerateContentResponse json>\\r\\n\\r\\n`, text cut into `chunks`
pieces, the finish reason and usage on the last event.

A step is a `Reply`, an `HttpError` or a plain `str` (a text reply). With nothing queued and no
responder, the call fails with 400 INVALID_ARGUMENT (loud, and never retried).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.fake_http import FakeHttpServer, split_text

RPC_STATUS: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

_PATH = re.compile(r"models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$")


@dataclass(frozen=True)
class FunctionCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None  # the Gemini Developer API sends none; ADK then makes its own

    def to_part(self) -> dict[str, Any]:
        call: dict[str, Any] = {"name": self.name, "args": self.args}
        if self.id is not None:
            call["id"] = self.id
        return {"functionCall": call}


@dataclass(frozen=True)
class Reply:
    """A successful answer: text and/or function calls."""

    text: str = ""
    function_calls: tuple[FunctionCall, ...] = ()
    chunks: int = 3  # streamed text is cut into this many SSE events
    finish_reason: str = "STOP"
    delay_s: float = 0.0  # before the response starts
    # Held until the next request arrives (a client that timed out and retried), at most
    # HOLD_LIMIT_S: a client timeout is exercised without a sleep racing it.
    held: bool = False
    chunk_delay_s: float = 0.0  # between SSE events
    # Streaming only: send this many events, then an in-stream error event (status `fail_status`).
    fail_after_chunks: int | None = None
    fail_status: int = 500


@dataclass(frozen=True)
class HttpError:
    """An error answer: HTTP status with a google.rpc-style body."""

    status: int = 503
    message: str = ""
    retry_delay_s: float | None = None  # adds a google.rpc.RetryInfo detail

    def body(self) -> dict[str, Any]:
        name = RPC_STATUS.get(self.status, "UNKNOWN")
        error: dict[str, Any] = {
            "code": self.status,
            "message": self.message or f"fake gemini: {name}",
            "status": name,
        }
        if self.retry_delay_s is not None:
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": f"{self.retry_delay_s:g}s",
                }
            ]
        return {"error": error}


Step = Reply | HttpError | str

NOT_SCRIPTED = HttpError(400, "fake gemini: no scripted response for this call")
# How long a held reply waits for the next request: far past any timeout a test sets, so a
# client that never gives up gets the held reply (and its test fails) instead of hanging.
HOLD_LIMIT_S = 30.0


def text(value: str, *, chunks: int = 3, **options: Any) -> Reply:
    return Reply(text=value, chunks=chunks, **options)


def function_call(name: str, /, **args: Any) -> Reply:
    return Reply(function_calls=(FunctionCall(name, args),))


def error(status: int, message: str = "", *, retry_delay_s: float | None = None) -> HttpError:
    return HttpError(status, message, retry_delay_s)


@dataclass
class GeminiRequest:
    """One request as the server received it."""

    model: str
    method: str  # "generateContent" or "streamGenerateContent"
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: dict[str, Any]

    @property
    def stream(self) -> bool:
        return self.method == "streamGenerateContent"

    @property
    def api_key(self) -> str | None:
        return self.headers.get("x-goog-api-key") or self.query.get("key")

    @property
    def contents(self) -> list[dict[str, Any]]:
        return list(self.body.get("contents") or [])

    @property
    def system_instruction(self) -> str:
        """The system instruction's text parts, joined."""
        instruction = self.body.get("systemInstruction") or {}
        return "".join(part.get("text", "") for part in instruction.get("parts") or [])

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self.body.get("tools") or [])

    @property
    def function_names(self) -> list[str]:
        return [
            declaration["name"]
            for tool in self.tools
            for declaration in tool.get("functionDeclarations") or []
        ]

    @property
    def last_content(self) -> dict[str, Any]:
        return self.contents[-1] if self.contents else {}

    @property
    def last_text(self) -> str:
        return "".join(part.get("text", "") for part in self.last_content.get("parts") or [])

    @property
    def function_responses(self) -> list[dict[str, Any]]:
        """The functionResponse objects of the last content ({"name", "response", ...})."""
        return [
            part["functionResponse"]
            for part in self.last_content.get("parts") or []
            if "functionResponse" in part
        ]


def echo_responder(request: GeminiRequest) -> Step:
    """Answers "echo: <last text>" (handy default for end-to-end runs)."""
    return Reply(text=f"echo: {request.last_text}")


def _usage(request: GeminiRequest, reply: Reply) -> dict[str, int]:
    prompt = sum(
        len(part.get("text", "").split())
        for content in request.contents
        for part in content.get("parts") or []
    )
    answer = len(reply.text.split()) + len(reply.function_calls)
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": answer,
        "totalTokenCount": prompt + answer,
    }


def _response(
    model: str, parts: list[dict[str, Any]], *, finish: str | None, usage: dict[str, int] | None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    response: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
    if usage:
        response["usageMetadata"] = usage
    return response


def _sse(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\r\n\r\n".encode()


async def read_call(
    request: Request, path: re.Pattern[str]
) -> tuple[re.Match[str], dict[str, Any]] | Response:
    """The route match and JSON body of a Google API call, or the error answer (404, 400)."""
    match = path.search(request.url.path)
    if match is None:
        return JSONResponse(HttpError(404, f"no route {request.url.path}").body(), 404)
    try:
        body = await request.json()
    except json.JSONDecodeError:
        return JSONResponse(HttpError(400, "body is not JSON").body(), 400)
    return match, body


def lower_headers(request: Request) -> dict[str, str]:
    return {name.lower(): value for name, value in request.headers.items()}


class FakeGemini(FakeHttpServer[GeminiRequest, Step]):
    """The Gemini API on 127.0.0.1; see the module docstring."""

    def build_app(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self._handle, methods=["POST"])])

    async def _handle(self, request: Request) -> Response:
        call = await read_call(request, _PATH)
        if isinstance(call, Response):
            return call
        match, body = call
        recorded = GeminiRequest(
            model=match["model"],
            method=match["method"],
            path=request.url.path,
            query=dict(request.query_params),
            headers=lower_headers(request),
            body=body,
        )
        step = self._record_and_choose(recorded)
        if step is None:
            step = NOT_SCRIPTED
        if isinstance(step, str):
            step = Reply(text=step)
        if isinstance(step, HttpError):
            return JSONResponse(step.body(), status_code=step.status)
        if step.held:
            await self._hold_until_next_request()
        if step.delay_s:
            await asyncio.sleep(step.delay_s)
        if recorded.stream:
            return StreamingResponse(self._stream(recorded, step), media_type="text/event-stream")
        parts: list[dict[str, Any]] = [{"text": step.text}] if step.text else []
        parts += [call.to_part() for call in step.function_calls]
        return JSONResponse(
            _response(
                recorded.model, parts, finish=step.finish_reason, usage=_usage(recorded, step)
            )
        )

    async def _hold_until_next_request(self) -> None:
        seen = len(self.requests)
        deadline = asyncio.get_running_loop().time() + HOLD_LIMIT_S
        while len(self.requests) == seen and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)

    async def _stream(self, request: GeminiRequest, reply: Reply) -> AsyncIterator[bytes]:
        events: list[list[dict[str, Any]]] = []
        if reply.text:
            events += [[{"text": piece}] for piece in split_text(reply.text, reply.chunks)]
        if reply.function_calls:
            events.append([call.to_part() for call in reply.function_calls])
        if not events:
            events.append([{"text": ""}])
        for index, parts in enumerate(events):
            if reply.fail_after_chunks is not None and index >= reply.fail_after_chunks:
                yield _sse(HttpError(reply.fail_status, "fake gemini: failed mid-stream").body())
                return
            last = index == len(events) - 1
            yield _sse(
                _response(
                    request.model,
                    parts,
                    finish=reply.finish_reason if last else None,
                    usage=_usage(request, reply) if last else None,
                )
            )
            if reply.chunk_delay_s and not last:
                await asyncio.sleep(reply.chunk_delay_s)


GeminiResponder = Callable[[GeminiRequest], Step]


def main() -> None:
    """`python -m tests.support.fake_gemini`: an echoing fake for manual runs; prints its URL."""
    import time

    with FakeGemini(responder=echo_responder) as server:
        print(f"CONFIDANT_GEMINI_BASE_URL={server.base_url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

__all__ = [
    "NOT_SCRIPTED",
    "FakeGemini",
    "FunctionCall",
    "GeminiRequest",
    "GeminiResponder",
    "HttpError",
    "Reply",
    "Step",
    "echo_responder",
    "error",
    "function_call",
    "lower_headers",
    "read_call",
    "text",
]
