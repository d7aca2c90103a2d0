"""ADK events → AI SDK UI message stream parts (`useChat`'s default protocol), as SSE frames."""

from __future__ import annotations

import json
import uuid
from typing import Any

from google.adk.events import Event

UIPart = dict[str, Any]

HEADERS = {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",  # proxies must not buffer a stream
}
DONE_FRAME = b"data: [DONE]\n\n"
# Between two text parts of one turn in the whole-reply text (JSON responses).
TEXT_PART_SEPARATOR = "\n\n"


def encode_part(part: UIPart) -> str:
    """A part as the JSON text of its SSE frame (one line: JSON escapes every newline)."""
    return json.dumps(part, ensure_ascii=False, separators=(",", ":"))


def sse_data(encoded: str) -> bytes:
    return f"data: {encoded}\n\n".encode()


def sse_frame(part: UIPart) -> bytes:
    return sse_data(encode_part(part))


def data_part(name: str, data: Any, *, transient: bool = False) -> UIPart:
    part: UIPart = {"type": f"data-{name}", "data": data}
    if transient:
        part["transient"] = True
    return part


def error_part(text: str, code: str | None = None) -> UIPart:
    """The AI SDK's error chunk; `code` (our stable error code) is an extra key, which its
    schema allows (a loose object), so a client can tell e.g. `commit_outcome_unknown` apart."""
    part: UIPart = {"type": "error", "errorText": text}
    if code is not None:
        part["code"] = code
    return part


def _visible_text(event: Event) -> str:
    if not event.content or not event.content.parts:
        return ""
    return "".join(p.text for p in event.content.parts if p.text and not p.thought)


class EventTranslator:
    """Turns one turn's ADK events into UI parts; keeps which text part is open.

    Streamed (partial) text becomes text-start/text-delta; the aggregated final event that ADK
    emits after the partials only closes the part (its text would duplicate the deltas). A final
    event that was never streamed (a plugin's reply, a non-streaming model) is sent whole.
    """

    def __init__(self) -> None:
        self._open_text: str | None = None
        self.text: list[str] = []  # the reply as the user saw it, for JSON responses

    def _close_text(self) -> list[UIPart]:
        if self._open_text is None:
            return []
        part = {"type": "text-end", "id": self._open_text}
        self._open_text = None
        return [part]

    def _delta(self, delta: str) -> list[UIPart]:
        parts: list[UIPart] = []
        if self._open_text is None:
            self._open_text = f"txt-{uuid.uuid4().hex[:12]}"
            parts.append({"type": "text-start", "id": self._open_text})
            if self.text:
                self.text.append(TEXT_PART_SEPARATOR)  # e.g. two specialists of one pipeline
        parts.append({"type": "text-delta", "id": self._open_text, "delta": delta})
        self.text.append(delta)
        return parts

    def translate(self, event: Event) -> list[UIPart]:
        if event.partial:
            if event.get_function_calls():
                return []  # partial call fragments: the aggregated event carries the call
            text = _visible_text(event)
            return self._delta(text) if text else []
        parts: list[UIPart] = []
        text = _visible_text(event)
        if text and self._open_text is None:
            parts += self._delta(text)
        parts += self._close_text()
        for call in event.get_function_calls():
            parts.append(
                {
                    "type": "tool-input-available",
                    "toolCallId": call.id,
                    "toolName": call.name,
                    "input": call.args or {},
                }
            )
        for response in event.get_function_responses():
            parts.append(
                {
                    "type": "tool-output-available",
                    "toolCallId": response.id,
                    "output": response.response,
                }
            )
        return parts

    def finish(self) -> list[UIPart]:
        return self._close_text()

    @property
    def reply(self) -> str:
        return "".join(self.text)
