"""A user message is stored at most once, however often the client sends it (issue 14, item 3).

When a commit's outcome is unknown (the store did not answer in time, or failed in a way that
does not say whether the write was applied), the client is told so and may resend. The key is
the client's own id of the message — the AI SDK sends `messages[].id`, the simple body can
carry `message_id` — recorded in the committed turn itself, in the user event's
`custom_metadata`. Why there, and not in a table of keys beside the session:

- it commits atomically with the turn (same document write), so "key stored" and "turn stored"
  can never disagree, on either backend, with no extra write per turn;
- a resend takes the session's lease like any turn, so it cannot race the original: while the
  original runs the resend is busy (409, or waits), and once the lease is free the session
  document read with the lease says for certain whether the message is there;
- the inline tail always holds the last `window` events (40 by default, several turns), which is
  where a resend finds its message: a client resends within seconds or minutes, not after
  dozens of later turns. An id older than the tail is treated as a new message.

A resend of a committed message gets the committed reply, streamed again as an ordinary reply
(`data-replay` marks it) with the pause parts of what the session waits for now (a paused run's
questions: the original's client may never have seen them), without a model call, without a
second copy, and without counting against the daily quota (the original turn was counted; a
resend past the quota is still replayed, found by one session read without the lease: a
committed turn no longer changes).
A resend whose id matches a stored message with other text is refused (400): ids name one
message. (An answer that resumed a paused run is stored as the call's function response, in the
app's shape: its resend is recognised by the id alone.)
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from google.adk.events import Event
from opentelemetry import trace
from opentelemetry.trace import Span

from confidant.errors import BadRequestError
from confidant.sessions.records import StoredEvent
from confidant.sessions.service import OpenTurn
from confidant.streaming.ui_stream import UIPart, data_part

if TYPE_CHECKING:
    from confidant.chat.service import TurnResult

MESSAGE_ID_KEY = "confidant_message_id"  # in the user event's custom_metadata
REPLAY_PART = "replay"


def mark_message(turn: OpenTurn, message_id: str | None) -> None:
    """Record the client's message id on the turn's user event, before the turn commits."""
    if message_id is None:
        return
    for event in turn.events:
        if event.author == "user":
            event.custom_metadata = {**(event.custom_metadata or {}), MESSAGE_ID_KEY: message_id}
            return


@dataclass(frozen=True)
class CommittedReply:
    # The user's text as stored; None when the message was stored as something else: an answer
    # that resumed a paused run is the call's function response, shaped by the app.
    message: str | None
    reply: str  # the visible text of the turn's replies, in order


def _text(event: Event) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    return "".join(p.text for p in parts if p.text and not p.thought)


def committed_reply(tail: list[StoredEvent], message_id: str) -> CommittedReply | None:
    """The stored turn of `message_id` in the session's inline tail, or None."""
    events: list[Event] = []
    invocation: str | None = None
    for stored in tail:
        if invocation is None and message_id not in stored["json"]:
            continue  # most events: no need to parse
        event = Event.model_validate_json(stored["json"])
        if invocation is None:
            if (
                event.author == "user"
                and (event.custom_metadata or {}).get(MESSAGE_ID_KEY) == message_id
            ):
                invocation = event.invocation_id
                events.append(event)
        elif event.invocation_id == invocation:
            events.append(event)
    if not events:
        return None
    stored = events[0]
    is_text = not stored.get_function_responses()
    return CommittedReply(
        message=_text(stored) if is_text else None,
        reply="".join(_text(e) for e in events[1:] if not e.partial),
    )


def replay_of(
    tail: list[StoredEvent], message: str, message_id: str | None
) -> CommittedReply | None:
    """The committed turn a resend names in the session's tail, or None for a new message.

    Raises BadRequestError when the id names a stored message with other text."""
    if message_id is None:
        return None
    found = committed_reply(tail, message_id)
    if found is not None and found.message is not None and found.message.strip() != message:
        raise BadRequestError(
            f"message_id {message_id!r} was already used for another message in this session"
        )
    return found


class ReplayedTurn:
    """The already committed reply of a resent message, as a turn's stream (no model call)."""

    def __init__(
        self, result: TurnResult, app: str, message_id: str, found: CommittedReply
    ) -> None:
        self.session_id = result.session_id
        self._app = app
        self._message_id = message_id
        self._found = found
        self.result = result
        self._span: Span = trace.INVALID_SPAN

    def trace_with(self, span: Span) -> None:
        self._span = span
        span.set_attribute("confidant.replayed", True)

    async def stream(self) -> AsyncIterator[UIPart]:
        try:
            for part in self._parts():
                yield part
        finally:
            self._span.end()

    def _parts(self) -> list[UIPart]:
        text_id = f"txt-{uuid.uuid4().hex}"
        parts: list[UIPart] = [
            {"type": "start", "messageId": f"msg-{uuid.uuid4().hex}"},
            data_part("session", {"sessionId": self.session_id, "app": self._app}),
            data_part(REPLAY_PART, {"messageId": self._message_id}),
        ]
        if self._found.reply:
            parts += [
                {"type": "text-start", "id": text_id},
                {"type": "text-delta", "id": text_id, "delta": self._found.reply},
                {"type": "text-end", "id": text_id},
            ]
        # What the session waits for (a paused run's questions), as after the original turn.
        return [*parts, *self.result.pauses, {"type": "finish"}]
