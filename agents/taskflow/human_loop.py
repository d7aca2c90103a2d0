"""Taskflow's pauses as UI parts, and the human's answer as the function response that resumes.

Stream parts (AI SDK data parts, so `useChat` shows them in `message.parts`):

* `data-human-input-needed` `{callId, question, missing, feedback}` — details are missing;
* `data-human-confirmation-needed` `{callId, kind: "classification" | "final", summary,
  classification?, task?}` — approve or reject.

The answer is the chat body field `human_response: {call_id?, approved?, answer?}` (see
`schemas.HumanResponse`); without it the message text answers the pending call, and a
confirmation reads "yes / approve / ok / 确认 / 同意" or "no / reject / cancel / 取消 / 不" from it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from google.genai import types
from pydantic import BaseModel

from agents.deps import TurnContext
from agents.human_loop import HumanLoop, HumanLoopError, PendingCall
from agents.taskflow import state_keys
from agents.taskflow.tools import (
    ASK_FOR_DETAILS,
    CONFIRM_CLASSIFICATION,
    CONFIRMATION_PAUSES,
    INPUT_PAUSES,
)

HUMAN_INPUT_NEEDED = "human-input-needed"
HUMAN_CONFIRMATION_NEEDED = "human-confirmation-needed"


class HumanInputNeeded(BaseModel):
    callId: str | None
    question: str
    missing: list[Any]
    feedback: str


class HumanConfirmationNeeded(BaseModel):
    callId: str | None
    kind: Literal["classification", "final"]
    summary: str
    classification: dict[str, Any] | None
    task: dict[str, Any] | None = None
    review: dict[str, Any] | None = None


# The stream parts a paused run ends with (AppSpec.data_parts).
DATA_PARTS = {
    HUMAN_INPUT_NEEDED: HumanInputNeeded,
    HUMAN_CONFIRMATION_NEEDED: HumanConfirmationNeeded,
}
HUMAN_RESPONSE_FIELD = "human_response"

_YES = re.compile(
    r"^\s*(yes|y|ok|okay|approve[sd]?|confirm(ed)?|looks good|correct|sure|"
    r"是|好|可以|确认|同意|没问题)\b",
    re.IGNORECASE,
)
_NO = re.compile(r"^\s*(no|n|reject(ed)?|cancel|stop|don'?t|wrong|不|取消|拒绝|错)", re.IGNORECASE)


def pause_part(call: PendingCall, state: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    if call.name in INPUT_PAUSES:
        critique = state.get(state_keys.CRITIQUE) or {}
        return HUMAN_INPUT_NEEDED, {
            "callId": call.id,
            "question": call.args.get("question", ""),
            "missing": call.args.get("missing") or critique.get("missing") or [],
            "feedback": call.args.get("feedback") or critique.get("feedback", ""),
        }
    if call.name in CONFIRMATION_PAUSES:
        is_classification = call.name == CONFIRM_CLASSIFICATION
        data: dict[str, Any] = {
            "callId": call.id,
            "kind": "classification" if is_classification else "final",
            "summary": call.args.get("summary", ""),
            "classification": state.get(state_keys.CLASSIFICATION),
        }
        if not is_classification:
            data["task"] = state.get(state_keys.DETAILS)
            data["review"] = state.get(state_keys.REVIEW)
        return HUMAN_CONFIRMATION_NEEDED, data
    return None


def read_yes_no(text: str) -> bool | None:
    if _NO.match(text):
        return False
    if _YES.match(text):
        return True
    return None


def answer(
    turn: TurnContext, pending: Sequence[PendingCall]
) -> list[types.FunctionResponse] | None:
    human = turn.options.get(HUMAN_RESPONSE_FIELD)
    ours = [call for call in pending if call.name in INPUT_PAUSES | CONFIRMATION_PAUSES]
    if not ours:
        if human is not None:
            raise HumanLoopError("`human_response` was sent but nothing is waiting for an answer")
        return None
    human = dict(human or {})
    call_id = human.get("call_id")
    if call_id is None:
        call = ours[-1]
    else:
        matches = [call for call in ours if call.id == call_id]
        if not matches:
            waiting = ", ".join(call.id for call in ours)
            raise HumanLoopError(f"no pending call {call_id!r}; waiting for: {waiting}")
        call = matches[0]
    text = str(human.get("answer") or turn.message).strip()
    if call.name == ASK_FOR_DETAILS:
        response: dict[str, Any] = {"answer": text}
    else:
        approved = human.get("approved")
        if approved is None:
            approved = read_yes_no(text)
        # Neither yes nor no: a correction, i.e. not approved as proposed.
        response = {"approved": bool(approved), "answer": text}
    return [types.FunctionResponse(id=call.id, name=call.name, response=response)]


HUMAN_LOOP = HumanLoop(part=pause_part, answer=answer)
