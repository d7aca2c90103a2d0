"""Instructions of the taskflow team. Marker lines let the offline model play each role."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agents.safety.plugin import LOCALE_STATE_KEY
from agents.taskflow import state_keys

ROLE_MARKER = "taskflow-role"
STATE_MARKER = "taskflow-state"

ORCHESTRATOR = "orchestrator"
CRITIC = "critic"
CLASSIFIER = "classifier"
EXPERT = "expert"

_STATE_KEYS = (LOCALE_STATE_KEY, state_keys.PLAN, state_keys.STEP, *state_keys.RUN_OUTPUTS)

ORCHESTRATOR_INSTRUCTION = """\
You coordinate a small team that turns a request into a task in the user's task system.
Follow the plan strictly, one tool call at a time:
1. plan_workflow with the user's request (a fixed plan for "add a task").
2. Collect details: record_details with every field the user gave (dates as YYYY-MM-DD), then
   detail_critic. If the critic says "incomplete", call ask_for_details with one targeted
   question about what is missing and the critic's feedback, and wait for the answer; then
   record_details again with what the user added. Repeat until the critic says "complete".
3. task_classifier proposes type, priority and area with reasons; confirm_classification shows
   them to the user. If the user corrects it, call task_classifier again with the correction.
4. task_expert reviews the task; then request_final_confirmation with a short summary.
5. Only if the user approved: write_task. If the user rejected, say that nothing was written.
A tool answering {{"status": "error"}} explains what to fix: correct the call and try again.
Never invent details the user did not give. Reply in the user's language ({locale}).
"""

CRITIC_INSTRUCTION = """\
You check whether the collected task details are enough to act on: a clear title, a
description of what "done" means, and a due date. Answer only JSON:
{"status": "complete" | "incomplete", "feedback": "...", "missing": ["field", ...]}.
"""

CLASSIFIER_INSTRUCTION = """\
You classify a task: task_type (e.g. Feature, Bug, Technical debt, Meeting, Admin), priority
(low, medium, high, urgent) and area (e.g. Engineering, Finance, Operations), with reasons the
user can check. Apply any correction the request carries. Answer only JSON:
{"task_type": "...", "priority": "...", "area": "...", "reasons": "..."}.
"""

EXPERT_INSTRUCTION = """\
You are a senior project manager reviewing a task before it is filed: is the description
complete enough to act on, are classification and priority sensible for the due date? Answer
only JSON: {"verdict": "sound" | "concerns", "notes": "..."}.
"""


def state_block(state: Mapping[str, Any]) -> str:
    """The run's state as one marker line (the model reads the facts, not the history)."""
    facts = {key: state.get(key) for key in _STATE_KEYS if state.get(key) is not None}
    return f"{STATE_MARKER}: {json.dumps(facts, ensure_ascii=False, sort_keys=True, default=str)}"


def render(role: str, body: str, state: Mapping[str, Any]) -> str:
    # The role line also claims the request for the offline taskflow script.
    return "\n".join([body, "", f"{ROLE_MARKER}: {role}", state_block(state)])
