"""The chat service's two hooks for apps that pause for a human (AppSpec.human_loop).

The pause parts are not sent through `TurnContext.data_parts` (agents/data_parts.py, what an
app emits while the run goes on): they say what the stored session waits for (calls of earlier
turns too), so they are read from it after the commit, announced only once the paused run is
safely stored, and listed as whole parts under `pauses` in a JSON response.

* `resume_message`: before the run, the app turns the request (body options, message) into
  the function responses that resume a paused run; an answer that fits nothing pending is a
  400, checked before anything is streamed.
* `pause_parts`: after the run, each call still pending becomes the app's data part
  (e.g. `data-human-input-needed`), so the client knows what the run waits for;
  `stored_pause_parts`, the same of a stored session, lets a reloaded page (`GET
  /v1/sessions/{id}`, `pauses`) and a resent message's replay ask again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from agents.deps import TurnContext
from agents.human_loop import HumanLoopError, pending_calls
from agents.human_loop import resume_message as _content
from agents.registry import AppSpec
from confidant.errors import BadRequestError
from confidant.sessions.records import SessionRecord, from_oldest_pending_call
from confidant.streaming.ui_stream import UIPart, data_part


def resume_message(spec: AppSpec, turn: TurnContext, session: Session) -> types.Content | None:
    """The message that resumes the session's paused run, or None for an ordinary message."""
    if spec.human_loop is None:
        return None
    try:
        responses = spec.human_loop.answer(turn, pending_calls(session.events))
    except HumanLoopError as exc:
        raise BadRequestError(str(exc)) from None
    return _content(responses) if responses else None


def pause_parts(spec: AppSpec, events: Sequence[Event], state: Mapping[str, Any]) -> list[UIPart]:
    """Data parts for the calls the run is left waiting on, from the session's events and state
    (the turn's session after its run, or a session read back, e.g. after a reload)."""
    if spec.human_loop is None:
        return []
    parts = []
    for call in pending_calls(events):
        announced = spec.human_loop.part(call, state)
        if announced is not None:
            name, data = announced
            parts.append(data_part(name, data))
    return parts


def stored_pause_parts(spec: AppSpec, record: SessionRecord) -> list[UIPart]:
    """`pause_parts` of a stored session (its tail keeps every pending call): only the events
    from the oldest pending call on are parsed, none when nothing waits."""
    if spec.human_loop is None:
        return []
    waiting = from_oldest_pending_call(record.tail)
    events = [Event.model_validate_json(stored["json"]) for stored in waiting]
    return pause_parts(spec, events, record.state)
