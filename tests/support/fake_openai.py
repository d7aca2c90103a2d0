"""A local OpenAI-compatible chat-completions server (what LiteLLM's "openai/…" models call).

Usage::

    with FakeOpenAI() as server:
        server.enqueue(error(429), "Hello", tool_call("add", a=2, b=3))
        server.responder = lambda req: f"got {req.tool_results}"
        settings = Settings(model="litellm", litellm_model="openai/fake-model",
                            litellm_api_base=server.base_url + "/v1", litellm_api_key="sk-fake")
        server.requests[0].messages, .tools, .stream, .api_key

Endpoint: `POST /v1/chat/completions`, with `stream: true` answered as SSE
(`data: <chat.completion.chunk json>\\n\\n` … `data: [DONE]\\n\\n`) and otherwise as one
`chat.completion`. A step is a `Reply`, an `HttpError` or a `str`; with nothing scripted the
call fails with 400.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.fake_http import FakeHttpServer, split_text

_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}

_AUTO_ID = "auto"


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    # "auto": the server makes one up ("call_<n>"); None: the call carries no id at all.
    id: str | None = _AUTO_ID


@dataclass(frozen=True)
class Reply:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    chunks: int = 3
    finish_reason: str | None = None  # default: "tool_calls" with tool calls, else "stop"
    delay_s: float = 0.0
    chunk_delay_s: float = 0.0


@dataclass(frozen=True)
class HttpError:
    status: int = 503
    message: str = ""

    def body(self) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(self.status, "server_error")
        return {
            "error": {
                "message": self.message or f"fake openai: {kind}",
                "type": kind,
                "param": None,
                "code": None,
            }
        }


Step = Reply | HttpError | str

NOT_SCRIPTED = HttpError(400, "fake openai: no scripted response for this call")


def text(value: str, *, chunks: int = 3, **options: Any) -> Reply:
    return Reply(text=value, chunks=chunks, **options)


def tool_call(name: str, /, **args: Any) -> Reply:
    return Reply(tool_calls=(ToolCall(name, args),))


def error(status: int, message: str = "") -> HttpError:
    return HttpError(status, message)


@dataclass
class OpenAIRequest:
    path: str
    headers: dict[str, str]  # lower-case names
    body: dict[str, Any]

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def api_key(self) -> str | None:
        auth = self.headers.get("authorization", "")
        return auth.removeprefix("Bearer ").strip() or None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self.body.get("tools") or [])

    @property
    def function_names(self) -> list[str]:
        return [tool["function"]["name"] for tool in self.tools if "function" in tool]

    @property
    def last_message(self) -> dict[str, Any]:
        return self.messages[-1] if self.messages else {}

    @property
    def last_text(self) -> str:
        content = self.last_message.get("content")
        if isinstance(content, list):
            return "".join(item.get("text", "") for item in content if isinstance(item, dict))
        return content or ""

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """The trailing `role: tool` messages (the answers to the last tool calls)."""
        trailing: list[dict[str, Any]] = []
        for message in reversed(self.messages):
            if message.get("role") != "tool":
                break
            trailing.insert(0, message)
        return trailing


class FakeOpenAI(FakeHttpServer[OpenAIRequest, Step]):
    """OpenAI chat completions on 127.0.0.1; see the module docstring."""

    def __init__(self, responder: Callable[[OpenAIRequest], Step] | None = None) -> None:
        super().__init__(responder)
        self._ids = count(1)

    def build_app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self._handle, methods=["POST"])])

    async def _handle(self, request: Request) -> Response:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return JSONResponse(HttpError(400, "body is not JSON").body(), 400)
        recorded = OpenAIRequest(
            path=request.url.path,
            headers={name.lower(): value for name, value in request.headers.items()},
            body=body,
        )
        step = self._record_and_choose(recorded)
        if step is None:
            step = NOT_SCRIPTED
        if isinstance(step, str):
            step = Reply(text=step)
        if isinstance(step, HttpError):
            return JSONResponse(step.body(), status_code=step.status)
        if step.delay_s:
            await asyncio.sleep(step.delay_s)
        ids = [self._call_id(call) for call in step.tool_calls]
        completion_id = f"chatcmpl-{next(self._ids)}"
        if recorded.stream:
            return StreamingResponse(
                self._stream(recorded, step, ids, completion_id), media_type="text/event-stream"
            )
        message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
        if step.tool_calls:
            message["tool_calls"] = [
                self._tool_call_json(call, call_id)
                for call, call_id in zip(step.tool_calls, ids, strict=True)
            ]
        return JSONResponse(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": recorded.model,
                "choices": [{"index": 0, "message": message, "finish_reason": self._finish(step)}],
                "usage": self._usage(recorded, step),
            }
        )

    def _call_id(self, call: ToolCall) -> str | None:
        return f"call_{next(self._ids)}" if call.id == _AUTO_ID else call.id

    @staticmethod
    def _tool_call_json(call: ToolCall, call_id: str | None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.args)},
        }
        if call_id is not None:
            data["id"] = call_id
        return data

    @staticmethod
    def _finish(reply: Reply) -> str:
        return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

    @staticmethod
    def _usage(request: OpenAIRequest, reply: Reply) -> dict[str, int]:
        prompt = sum(len(str(message.get("content") or "").split()) for message in request.messages)
        answer = len(reply.text.split()) + len(reply.tool_calls)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": answer,
            "total_tokens": prompt + answer,
        }

    async def _stream(
        self, request: OpenAIRequest, reply: Reply, ids: list[str | None], completion_id: str
    ) -> AsyncIterator[bytes]:
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            payload = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": request.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(payload)}\n\n".encode()

        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        if reply.text:
            deltas += [{"content": piece} for piece in split_text(reply.text, reply.chunks)]
        for index, (call, call_id) in enumerate(zip(reply.tool_calls, ids, strict=True)):
            # Arguments arrive in two pieces, as real servers send them.
            arguments = json.dumps(call.args)
            half = len(arguments) // 2
            head: dict[str, Any] = {
                "index": index,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments[:half]},
            }
            if call_id is not None:
                head["id"] = call_id
            deltas.append({"tool_calls": [head]})
            deltas.append(
                {"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]}
            )
        for delta in deltas:
            yield chunk(delta)
            if reply.chunk_delay_s:
                await asyncio.sleep(reply.chunk_delay_s)
        yield chunk({}, self._finish(reply))
        if (request.body.get("stream_options") or {}).get("include_usage"):
            payload = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": request.model,
                "choices": [],
                "usage": self._usage(request, reply),
            }
            yield f"data: {json.dumps(payload)}\n\n".encode()
        yield b"data: [DONE]\n\n"


OpenAIResponder = Callable[[OpenAIRequest], Step]

__all__ = [
    "NOT_SCRIPTED",
    "FakeOpenAI",
    "HttpError",
    "OpenAIRequest",
    "OpenAIResponder",
    "Reply",
    "Step",
    "ToolCall",
    "error",
    "text",
    "tool_call",
]
