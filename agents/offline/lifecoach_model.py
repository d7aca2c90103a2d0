"""The offline script of the lifecoach app: state tools and both protocols, deterministically.

It reads the marker lines the core agent's instruction carries (skill, protocol status, step,
the step's question and schema) and the conversation, and answers with one tool call or a
short text, so a demo or a test can walk a whole protocol through the HTTP stream.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.models import LlmRequest
from google.genai import types

from agents.lifecoach.prompts import SKILL_MARKER
from agents.offline.scripted import ScriptedTurn, instruction_text

_AFFIRM = re.compile(
    r"\b(yes|yeah|yep|sure|ok|okay|start|continue|go on|let'?s)\b|好|开始|继续|是的"
)
_DECLINE = re.compile(r"\b(no|nope|not now|later|stop|cancel|quit)\b|不要|停止|取消|以后")
_STOP = re.compile(r"\b(stop|cancel|quit)\b|停止|取消")


def snippet(text: str, limit_words: int = 12) -> str:
    """A short, single-line quote of the user's words."""
    words = " ".join(text.split()).split()
    return " ".join(words[:limit_words])


def _marker(instruction: str, name: str) -> str | None:
    found = re.search(rf"^{name}:\s*(.+?)\s*$", instruction, re.MULTILINE)
    return found.group(1) if found else None


def _available(instruction: str) -> list[tuple[str, str]]:
    """(id, title) of each protocol the skill offers."""
    listed = _marker(instruction, "AVAILABLE_PROTOCOLS") or ""
    pairs = re.findall(r"([a-z][a-z0-9_]*) \(([^,]+),", listed)
    return [(pid, title) for pid, title in pairs]


def fill_schema(schema: Mapping[str, Any], text: str) -> dict[str, Any]:
    """Step data that satisfies `schema`, made from the user's words."""
    data: dict[str, Any] = {}
    properties = schema.get("properties") or {}
    for name in schema.get("required") or []:
        kind = (properties.get(name) or {}).get("type")
        if kind == "array":
            data[name] = [text]
        elif kind in ("integer", "number"):
            data[name] = 1
        elif kind == "boolean":
            data[name] = True
        else:
            data[name] = text
    return data


def _history(contents: Sequence[types.Content]) -> tuple[list[str], list[types.FunctionCall]]:
    user_texts: list[str] = []
    calls: list[types.FunctionCall] = []
    for content in contents:
        for part in content.parts or []:
            if part.function_call:
                calls.append(part.function_call)
        if content.role == "user":
            texts = [p.text for p in content.parts or [] if p.text and not p.thought]
            if texts and not any(t.startswith("For context:") for t in texts):
                user_texts.append(" ".join(texts))
    return user_texts, calls


def _call(name: str, **args: Any) -> ScriptedTurn:
    return ScriptedTurn(call_name=name, call_args=args)


def _step_line(step: Mapping[str, Any], total: Any) -> str:
    return f"Step {step.get('number')} of {total}, {step.get('name')}: {step.get('question')}"


def _after_tool(response: types.FunctionResponse) -> ScriptedTurn:
    result: Mapping[str, Any] = response.response or {}
    if result.get("status") == "error":
        problem = result.get("error") or {}
        return ScriptedTurn(text=f"I could not do that: {problem.get('message', 'unknown error')}.")
    progress = result.get("progress") or {}
    step = result.get("current_step")
    name = response.name
    if name == "read_state":
        sections = sorted((result.get("data") or {}).keys())
        kept = ", ".join(sections) if sections else "nothing yet"
        return ScriptedTurn(text=f"Here is what I keep for you: {kept}. Where shall we start?")
    if name == "write_state":
        return ScriptedTurn(text=f"Saved your {result.get('section')}. What is the next step?")
    if name == "append_to_list":
        return ScriptedTurn(
            text=f"Added to your {result.get('path')} ({result.get('count')} entries so far)."
        )
    if name == "show_protocol_invitation":
        card = result.get("invitation") or {}
        return ScriptedTurn(
            text=f"Would you like to start {card.get('title')}? It takes "
            f"{card.get('estimated_time')}."
        )
    if name == "cancel_protocol":
        return ScriptedTurn(text="We stopped the protocol. Your answers so far are kept.")
    if result.get("result") == "completed":
        return ScriptedTurn(
            text=f"You completed {progress.get('protocol_id')}. In short: {result.get('summary')}"
        )
    if isinstance(step, Mapping):
        return ScriptedTurn(text=_step_line(step, progress.get("total_steps")))
    return ScriptedTurn(text="Done. What would you like to look at next?")


def plan_lifecoach_turn(llm_request: LlmRequest) -> ScriptedTurn | None:
    instruction = instruction_text(llm_request.config)
    if _marker(instruction, SKILL_MARKER) is None:
        return None  # not a lifecoach request
    contents = llm_request.contents or []
    last_parts = (contents[-1].parts or []) if contents else []
    responses = [p.function_response for p in last_parts if p.function_response]
    if responses:
        return _after_tool(responses[-1])
    user_texts, calls = _history(contents)
    text = user_texts[-1].strip() if user_texts else ""
    lowered = text.lower()
    status = _marker(instruction, "PROTOCOL_STATUS") or "none"
    if status == "awaiting_confirmation":
        if _DECLINE.search(lowered):
            return _call("cancel_protocol", reason=snippet(text))
        if _AFFIRM.search(lowered):
            return _call("resume_protocol")
        step = _marker(instruction, "PROTOCOL_STEP_NAME")
        return ScriptedTurn(
            text=f"Welcome back. We were at {step}. Would you like to continue where we left off?"
        )
    if status == "active" and _marker(instruction, "PROTOCOL_ACTION"):
        number = _marker(instruction, "PROTOCOL_STEP") or ""
        name = _marker(instruction, "PROTOCOL_STEP_NAME")
        question = _marker(instruction, "PROTOCOL_STEP_QUESTION")
        return ScriptedTurn(text=f"Step {number.replace('/', ' of ')}, {name}: {question}")
    if status == "active":
        if _STOP.search(lowered):
            return _call("cancel_protocol", reason=snippet(text))
        schema = json.loads(_marker(instruction, "PROTOCOL_STEP_SCHEMA") or "{}")
        return _call(
            "advance_protocol_step",
            step_data=fill_schema(schema, text),
            step_summary=snippet(text),
        )
    available = _available(instruction)
    last_call = calls[-1] if calls else None
    if (
        last_call is not None
        and last_call.name == "show_protocol_invitation"
        and _AFFIRM.search(lowered)
        and not _DECLINE.search(lowered)
    ):
        return _call("start_protocol", protocol_id=(last_call.args or {}).get("protocol_id"))
    for protocol_id, title in available:
        if (
            protocol_id in lowered
            or protocol_id.replace("_", " ") in lowered
            or (title.lower() in lowered)
        ):
            return _call(
                "show_protocol_invitation", protocol_id=protocol_id, reason="You asked for it."
            )
    if lowered.startswith("journal:"):
        return _call("append_to_list", path="journal", entry={"text": text[8:].strip()})
    if lowered.startswith("goal:"):
        return _call("write_state", section="goals", data={"main": text[5:].strip()})
    if "what do you know" in lowered or "my state" in lowered:
        return _call("read_state")
    return ScriptedTurn(
        text=f'You said "{snippet(text)}". What would make this week feel like progress?'
    )
