"""The offline script of the taskflow team: every role, deterministic, no network.

The orchestrator's next call follows from the last function response in the history (or
from the user's text when there is none); the critic, classifier and expert answer JSON from
the run's state, which their instruction carries on its `taskflow-state:` line. Rules:

* details: the title follows "add a task"; `YYYY-MM-DD` is the due date; a due date in words
  ("due friday") is passed as is, so the format check rejects it and the script retries
  without it (the malformed-call path); "it's / it is / this is about", "because", "so that",
  "done means / when …", or a longer answer to a question, is the description; `#words` are
  tags.
* the critic wants a title, a description of at least 15 characters and a due date.
* the classifier reads keywords and applies corrections such as "priority high".
* the expert has concerns when the description is thin or a high priority has no due date.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.models import LlmRequest
from google.genai import types

from agents.offline.onemind_model import _instruction_text
from agents.offline.scripts import ScriptedTurn, register_script
from agents.taskflow import prompts, state_keys
from agents.taskflow.tools import (
    ASK_FOR_DETAILS,
    CONFIRM_CLASSIFICATION,
    DETAIL_CRITIC,
    PLAN_WORKFLOW,
    RECORD_DETAILS,
    REQUEST_FINAL_CONFIRMATION,
    STATUS_ERROR,
    TASK_CLASSIFIER,
    TASK_EXPERT,
    WRITE_TASK,
)

SCRIPT_NAME = "taskflow"
MIN_DESCRIPTION = 15
_ROLE_RE = re.compile(rf"^{prompts.ROLE_MARKER}:\s*(\S+)\s*$", re.MULTILINE)
_STATE_RE = re.compile(rf"^{prompts.STATE_MARKER}:\s*(.*)$", re.MULTILINE)
_TITLE_RE = re.compile(
    r"\b(?:add|create|new|record|file|log|make)\s+(?:a\s+|an\s+)?(?:new\s+)?"
    r"(?:task|todo|to-do|ticket)\s*(?:to\s+|:|-|for\s+)?\s*(.+?)(?:[.,;!?\n]|$)",
    re.IGNORECASE,
)
_ISO_DATE_RE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_WORD_DATE_RE = re.compile(
    r"\bdue\s+(?:on\s+|by\s+)?((?:next\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day|tomorrow)",
    re.IGNORECASE,
)
_DESCRIPTION_RE = re.compile(
    r"(?:description:|details:|(?:it|this)(?:'s| is) about|because|so that|done (?:means|when))"
    r"\s*(.+?)(?:\n|$)",
    re.IGNORECASE,
)
_TAG_RE = re.compile(r"#(\w[\w-]*)")
_CORRECTION_RE = {
    "priority": re.compile(
        r"priority\s+(?:should\s+be\s+|to\s+|is\s+|=\s*)?(low|medium|high|urgent)", re.IGNORECASE
    ),
    "task_type": re.compile(
        r"type\s+(?:should\s+be\s+|to\s+|is\s+|=\s*)?([\w ]+?)(?:[,.;]|$)", re.IGNORECASE
    ),
    "area": re.compile(
        r"area\s+(?:should\s+be\s+|to\s+|is\s+|=\s*)?([\w ]+?)(?:[,.;]|$)", re.IGNORECASE
    ),
}
_TYPES = (
    (("refactor", "clean up", "cleanup", "tech debt"), "Technical debt"),
    (("bug", "fix", "broken", "crash"), "Bug"),
    (("meeting", "call with", "sync"), "Meeting"),
    (("invoice", "expense", "form", "renew"), "Admin"),
)
_AREAS = (
    (("billing", "invoice", "payment", "finance", "expense"), "Finance"),
    (("code", "api", "deploy", "refactor", "bug", "module", "service"), "Engineering"),
)
_QUESTIONS = {
    "title": "What should the task be called?",
    "description": 'What exactly has to be done, and what does "done" look like?',
    "due_date": "When is it due (YYYY-MM-DD)?",
}


# -- reading the request ------------------------------------------------------------------------


def _state(instruction: str) -> dict[str, Any]:
    match = _STATE_RE.search(instruction)
    return json.loads(match.group(1)) if match else {}


def _last_user_text(contents: Sequence[types.Content]) -> str:
    for content in reversed(contents):
        if content.role == "user":
            texts = [p.text for p in content.parts or [] if p.text and not p.thought]
            if texts:
                return " ".join(texts)
    return ""


def _last_response(contents: Sequence[types.Content]) -> types.FunctionResponse | None:
    parts = (contents[-1].parts or []) if contents else []
    responses = [p.function_response for p in parts if p.function_response]
    return responses[-1] if responses else None


def _last_call_args(contents: Sequence[types.Content], name: str) -> dict[str, Any]:
    for content in reversed(contents):
        for part in content.parts or []:
            if part.function_call and part.function_call.name == name:
                return dict(part.function_call.args or {})
    return {}


def extract_details(text: str, *, answering: bool = False) -> dict[str, Any]:
    """Task fields found in the user's words (see the module docstring for the rules)."""
    details: dict[str, Any] = {}
    if title := _TITLE_RE.search(text):
        details["title"] = title.group(1).strip()[:120]
    if iso := _ISO_DATE_RE.search(text):
        details["due_date"] = iso.group(1)
    elif word := _WORD_DATE_RE.search(text):
        details["due_date"] = word.group(1)  # not a date: the format check will say so
    if described := _DESCRIPTION_RE.search(text):
        details["description"] = described.group(1).strip()
    elif answering:
        rest = _ISO_DATE_RE.sub("", text).strip(" ,.;")
        if len(rest) >= MIN_DESCRIPTION:
            details["description"] = rest
    if tags := _TAG_RE.findall(text):
        details["tags"] = tags
    return details


# -- the orchestrator ---------------------------------------------------------------------------


def _after_record(contents: Sequence[types.Content], result: Mapping[str, Any]) -> ScriptedTurn:
    if result.get("status") == STATUS_ERROR:
        # Correct the malformed call: leave out the fields the format check named.
        bad = {str(p.get("field", "")).split(".")[0] for p in result.get("problems") or []}
        args = {k: v for k, v in _last_call_args(contents, RECORD_DETAILS).items() if k not in bad}
        if args and bad:
            return ScriptedTurn(call_name=RECORD_DETAILS, call_args=args)
    details = result.get("details") or {}
    return ScriptedTurn(
        call_name=DETAIL_CRITIC, call_args={"request": json.dumps(details, ensure_ascii=False)}
    )


def _after_critic(state: Mapping[str, Any], result: Mapping[str, Any]) -> ScriptedTurn:
    critique = result.get("critique") or {}
    if result.get("limit_reached"):
        return ScriptedTurn(
            text=f"I could not collect enough details ({critique.get('feedback', '')}). "
            "Nothing was filed; start again whenever you like."
        )
    if critique.get("status") == "incomplete":
        missing = list(critique.get("missing") or [])
        question = " ".join(_QUESTIONS.get(field, f"What is the {field}?") for field in missing)
        return ScriptedTurn(
            text=question,
            call_name=ASK_FOR_DETAILS,
            call_args={
                "question": question,
                "missing": missing,
                "feedback": critique.get("feedback", ""),
            },
        )
    details = state.get(state_keys.DETAILS) or {}
    return ScriptedTurn(
        call_name=TASK_CLASSIFIER, call_args={"request": json.dumps(details, ensure_ascii=False)}
    )


def _summary(state: Mapping[str, Any], classification: Mapping[str, Any]) -> str:
    details = state.get(state_keys.DETAILS) or {}
    return (
        f'"{details.get("title", "")}" due {details.get("due_date", "unset")}: '
        f"{classification.get('task_type')}, priority {classification.get('priority')}, "
        f"area {classification.get('area')}."
    )


def _confirm(
    pause: str, state: Mapping[str, Any], classification: Mapping[str, Any], note: str, ask: str
) -> ScriptedTurn:
    """A text that shows the summary, then the pause that asks the human about it."""
    summary = f"{_summary(state, classification)} {note}"
    return ScriptedTurn(text=f"{summary} {ask}", call_name=pause, call_args={"summary": summary})


def plan_orchestrator(llm_request: LlmRequest, state: Mapping[str, Any]) -> ScriptedTurn:
    contents = llm_request.contents
    response = _last_response(contents)
    if response is None:
        return ScriptedTurn(
            call_name=PLAN_WORKFLOW, call_args={"request": _last_user_text(contents)}
        )
    name, result = response.name, dict(response.response or {})
    if name == RECORD_DETAILS:
        return _after_record(contents, result)
    if result.get("status") == STATUS_ERROR and name != TASK_CLASSIFIER:
        return ScriptedTurn(text=f"I could not go on: {result.get('error', 'unknown error')}.")
    if name == PLAN_WORKFLOW:
        args = extract_details(_last_user_text(contents))
        return ScriptedTurn(call_name=RECORD_DETAILS, call_args=args)
    if name == ASK_FOR_DETAILS:
        args = extract_details(str(result.get("answer", "")), answering=True)
        return ScriptedTurn(call_name=RECORD_DETAILS, call_args=args)
    if name == DETAIL_CRITIC:
        return _after_critic(state, result)
    if name == TASK_CLASSIFIER:
        if result.get("status") == STATUS_ERROR:  # the correction limit: the last one stands
            return ScriptedTurn(call_name=TASK_EXPERT, call_args={"request": "review the task"})
        classification = result.get("classification") or {}
        why = f"Why: {classification.get('reasons')}"
        return _confirm(CONFIRM_CLASSIFICATION, state, classification, why, "Is that right?")
    if name == CONFIRM_CLASSIFICATION:
        if result.get("approved"):
            return ScriptedTurn(call_name=TASK_EXPERT, call_args={"request": "review the task"})
        correction = f"Correction from the user: {result.get('answer', '')}"
        return ScriptedTurn(call_name=TASK_CLASSIFIER, call_args={"request": correction})
    if name == TASK_EXPERT:
        notes = f"Expert: {(result.get('review') or {}).get('notes', '')}"
        classification = state.get(state_keys.CLASSIFICATION) or {}
        return _confirm(REQUEST_FINAL_CONFIRMATION, state, classification, notes, "Write it?")
    if name == REQUEST_FINAL_CONFIRMATION:
        if result.get("approved"):
            return ScriptedTurn(call_name=WRITE_TASK, call_args={})
        return ScriptedTurn(text="Understood: nothing was written. Tell me what to change.")
    if name == WRITE_TASK:
        task = result.get("task") or {}
        return ScriptedTurn(
            text=f'Done: "{result.get("title", "")}" is in your task list ({task.get("url")}).'
        )
    return ScriptedTurn(text="How can I help with your tasks?")


# -- the specialists ----------------------------------------------------------------------------


def critique(details: Mapping[str, Any]) -> dict[str, Any]:
    missing = [
        field
        for field, present in (
            ("title", bool(details.get("title"))),
            ("description", len(str(details.get("description") or "")) >= MIN_DESCRIPTION),
            ("due_date", bool(details.get("due_date"))),
        )
        if not present
    ]
    if not missing:
        return {"status": "complete", "feedback": "Title, description and due date are clear."}
    return {
        "status": "incomplete",
        "feedback": "Still needed: " + ", ".join(missing) + ".",
        "missing": missing,
    }


def _first(text: str, table: Sequence[tuple[tuple[str, ...], str]], default: str) -> str:
    lowered = text.lower()
    for words, label in table:
        if any(word in lowered for word in words):
            return label
    return default


def classify(details: Mapping[str, Any], request: str, previous: Mapping[str, Any] | None) -> dict:
    text = f"{details.get('title', '')} {details.get('description', '')}"
    result = dict(previous or {}) if "correction" in request.lower() else {}
    if not result:
        lowered = text.lower()
        result = {
            "task_type": _first(text, _TYPES, "Feature"),
            "priority": "urgent" if "urgent" in lowered or "asap" in lowered else "medium",
            "area": _first(text, _AREAS, "Operations"),
        }
        result["reasons"] = (
            f"From the wording, this reads as {result['task_type'].lower()} work in "
            f"{result['area']}; nothing marks it urgent, so priority {result['priority']}."
        )
    corrected = []
    for field, pattern in _CORRECTION_RE.items():
        if match := pattern.search(request):
            value = match.group(1).strip()
            result[field] = value.lower() if field == "priority" else value.title()
            corrected.append(f"{field.replace('_', ' ')} set to {result[field]} as you said")
    if corrected:
        result["reasons"] = "; ".join(corrected) + "."
    return result


def review(details: Mapping[str, Any], classification: Mapping[str, Any]) -> dict[str, Any]:
    notes = []
    if len(str(details.get("description") or "")) < 30:
        notes.append("the description is short: add how you will know it is done")
    if classification.get("priority") in ("high", "urgent") and not details.get("due_date"):
        notes.append("a high priority needs a due date")
    if notes:
        return {"verdict": "concerns", "notes": "; ".join(notes).capitalize() + "."}
    return {"verdict": "sound", "notes": "Clear scope; the priority fits the due date."}


def plan_taskflow(llm_request: LlmRequest) -> ScriptedTurn:
    instruction = _instruction_text(llm_request.config)
    role_match = _ROLE_RE.search(instruction)
    role = role_match.group(1) if role_match else prompts.ORCHESTRATOR
    state = _state(instruction)
    details = state.get(state_keys.DETAILS) or {}
    if role == prompts.CRITIC:
        answer: dict[str, Any] = critique(details)
    elif role == prompts.CLASSIFIER:
        answer = classify(
            details, _last_user_text(llm_request.contents), state.get(state_keys.CLASSIFICATION)
        )
    elif role == prompts.EXPERT:
        answer = review(details, state.get(state_keys.CLASSIFICATION) or {})
    else:
        return plan_orchestrator(llm_request, state)
    return ScriptedTurn(text=json.dumps(answer, ensure_ascii=False))


register_script(SCRIPT_NAME, plan_taskflow)
