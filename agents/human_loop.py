"""Human-in-the-loop across stateless requests: the app-side contract shared code calls.

A run pauses on a long-running tool call (ADK returns no function response for it); the call
is stored with the turn, and the session store keeps it in the loaded window until answered
(confidant/sessions/records.py). An app that pauses declares an `AppSpec.human_loop`:

* `part(call, state)` — the UI data part announcing a paused call, e.g.
  `("human-input-needed", {...})`, streamed as `data-human-input-needed` when a turn ends
  paused;
* `answer(turn, pending)` — the function responses that resume the run, built from the
  request (its body options and message); None when the request is an ordinary message.
  It raises `HumanLoopError` (a 400) when the request answers nothing that is pending.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.events import Event
from google.genai import types

from agents.deps import TurnContext


@dataclass(frozen=True)
class PendingCall:
    """A long-running call that has no response yet."""

    id: str
    name: str
    args: Mapping[str, Any] = field(default_factory=dict)


class HumanLoopError(ValueError):
    """The request's answer does not fit what the run waits for."""


PausePart = Callable[[PendingCall, Mapping[str, Any]], tuple[str, dict[str, Any]] | None]
AnswerBuilder = Callable[[TurnContext, Sequence[PendingCall]], list[types.FunctionResponse] | None]


@dataclass(frozen=True)
class HumanLoop:
    part: PausePart
    answer: AnswerBuilder


def pending_calls(events: Sequence[Event]) -> list[PendingCall]:
    """Long-running calls in `events` without a response, oldest first."""
    pending: dict[str, PendingCall] = {}
    for event in events:
        long_running = event.long_running_tool_ids or set()
        for call in event.get_function_calls():
            if call.id and call.id in long_running:
                pending[call.id] = PendingCall(call.id, call.name or "", dict(call.args or {}))
        for response in event.get_function_responses():
            pending.pop(response.id or "", None)
    return list(pending.values())


def resume_message(responses: Sequence[types.FunctionResponse]) -> types.Content:
    return types.Content(
        role="user", parts=[types.Part(function_response=response) for response in responses]
    )
