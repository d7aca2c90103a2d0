"""Taskflow's tools: plan, record details, the human pauses, and the exactly-once writer.

Stateless tools are module-level `FunctionTool`s (their declarations are built once per
process); the human pauses are `LongRunningFunctionTool`s that return None, which ends the run
with the call pending — the answer arrives in a later request as its function response. The
writer is a `BaseTool` holding the process's task writer and effect ledger.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Mapping
from typing import Any

from google.adk.tools import BaseTool, FunctionTool, LongRunningFunctionTool, ToolContext
from google.genai import types

from agents.taskflow import state_keys
from agents.taskflow.schemas import (
    Classification,
    HumanDecision,
    Step,
    TaskDetails,
    WorkflowPlan,
)
from confidant.effects import EffectLedger, perform_once
from confidant.tasks import TaskDraft, TaskRejectedError, TaskWriter

PLAN_WORKFLOW = "plan_workflow"
RECORD_DETAILS = "record_details"
ASK_FOR_DETAILS = "ask_for_details"
CONFIRM_CLASSIFICATION = "confirm_classification"
REQUEST_FINAL_CONFIRMATION = "request_final_confirmation"
WRITE_TASK = "write_task"
DETAIL_CRITIC = "detail_critic"
TASK_CLASSIFIER = "task_classifier"
TASK_EXPERT = "task_expert"

STATUS_OK = "ok"
STATUS_ERROR = "error"
ADD_TASK = "add_task"
# The fixed plan of the one known workflow (the seed's "record a Notion task").
ADD_TASK_PLAN = [Step.COLLECT, Step.CLASSIFY, Step.REVIEW, Step.CONFIRM, Step.WRITE]
_ADD_TASK_RE = re.compile(
    r"\b(add|create|new|record|file|log|make)\b.*\b(task|todo|to-do|ticket)\b|任务|待办",
    re.IGNORECASE | re.DOTALL,
)


def error(message: str, **extra: Any) -> dict[str, Any]:
    """The structured error every taskflow tool and callback answers with."""
    return {"status": STATUS_ERROR, "error": message, **extra}


def current_step(state: Mapping[str, Any]) -> Step | None:
    raw = state.get(state_keys.STEP)
    return Step(raw) if raw in Step._value2member_map_ else None


def run_finished(tool_context: ToolContext) -> bool:
    """No run, or the last one ended (written, cancelled, or its final summary rejected)."""
    step = current_step(tool_context.state)
    if step is None or step in (Step.DONE, Step.CANCELLED):
        return True
    if step is Step.CONFIRM:
        decision = decision_of(latest_answer(tool_context, REQUEST_FINAL_CONFIRMATION))
        return decision is not None and not decision.approved
    return False


def plan_workflow(request: str, tool_context: ToolContext) -> dict[str, Any]:
    """Turn the user's request into the structured plan of a known workflow.

    Args:
      request: the user's request, in their words.
    """
    state = tool_context.state
    if not run_finished(tool_context):
        return {"status": STATUS_OK, "plan": state.get(state_keys.PLAN), "resumed": True}
    if not _ADD_TASK_RE.search(request):
        return error("unsupported workflow; the supported workflow is: add a task")
    plan = WorkflowPlan(
        workflow=ADD_TASK, run_id=uuid.uuid4().hex, steps=ADD_TASK_PLAN, request=request
    )
    for key in state_keys.RUN_OUTPUTS:
        state[key] = None
    state[state_keys.PLAN] = plan.model_dump(mode="json")
    state[state_keys.STEP] = Step.COLLECT.value
    state[state_keys.DETAILS] = {}
    return {"status": STATUS_OK, "plan": state[state_keys.PLAN]}


def record_details(
    tool_context: ToolContext,
    title: str | None = None,
    description: str | None = None,
    due_date: str | None = None,
    tags: list[str] | None = None,
) -> dict[str, Any]:
    """Record task details the user gave (merged with what is already known).

    Args:
      title: a short title of the task.
      description: what has to be done and what "done" means.
      due_date: the due date as YYYY-MM-DD.
      tags: short labels.
    """
    # The arguments were validated against TaskDetails by the before-tool format check.
    given = TaskDetails.model_validate(
        {"title": title, "description": description, "due_date": due_date, "tags": tags}
    ).model_dump(mode="json", exclude_none=True)
    details = {**(tool_context.state.get(state_keys.DETAILS) or {}), **given}
    tool_context.state[state_keys.DETAILS] = details
    return {"status": STATUS_OK, "details": details}


def ask_for_details(question: str, missing: list[str], feedback: str) -> None:
    """Ask the user for what is missing; the run pauses until they answer.

    Args:
      question: one targeted question about the missing details.
      missing: the missing fields.
      feedback: the critic's feedback, shown to the user.
    """
    return None  # None pauses the run: the answer comes in a later request


def confirm_classification(summary: str) -> None:
    """Show the proposed classification with its reasons; the user confirms or corrects it.

    Args:
      summary: the classification and its reasons, in one or two sentences.
    """
    return None


def request_final_confirmation(summary: str) -> None:
    """Ask the user to approve or reject writing the reviewed task.

    Args:
      summary: what will be written, including the expert's notes.
    """
    return None


PLAN_WORKFLOW_TOOL = FunctionTool(plan_workflow)
RECORD_DETAILS_TOOL = FunctionTool(record_details)
ASK_FOR_DETAILS_TOOL = LongRunningFunctionTool(ask_for_details)
CONFIRM_CLASSIFICATION_TOOL = LongRunningFunctionTool(confirm_classification)
REQUEST_FINAL_CONFIRMATION_TOOL = LongRunningFunctionTool(request_final_confirmation)
# The pauses and what each one asks of the human (agents/taskflow/human_loop.py).
INPUT_PAUSES = frozenset({ASK_FOR_DETAILS})
CONFIRMATION_PAUSES = frozenset({CONFIRM_CLASSIFICATION, REQUEST_FINAL_CONFIRMATION})


def latest_answer(tool_context: ToolContext, call_name: str) -> dict[str, Any] | None:
    """The human's answer to this run's latest pause named `call_name`; None while it is
    unanswered or was never asked in this run (an earlier run's answer never counts)."""
    answers: dict[str, dict[str, Any]] = {}
    for event in reversed(tool_context.session.events):
        for response in event.get_function_responses():
            body = dict(response.response or {})
            if response.name == call_name and response.id:
                answers.setdefault(response.id, body)
            if response.name == PLAN_WORKFLOW and "plan" in body and not body.get("resumed"):
                return None  # the run's start: anything older belongs to an earlier run
        for call in event.get_function_calls():
            if call.name == call_name:
                return answers.get(call.id or "")
    return None


def task_draft(state: Mapping[str, Any]) -> TaskDraft:
    details = TaskDetails.model_validate(state.get(state_keys.DETAILS) or {})
    classification = Classification.model_validate(state.get(state_keys.CLASSIFICATION))
    return TaskDraft(
        title=details.title or "",
        description=details.description or "",
        due_date=details.due_date,
        tags=details.tags or [],
        priority=classification.priority,
        task_type=classification.task_type,
        area=classification.area,
    )


def effect_key(session_id: str, run_id: str) -> str:
    """The write's idempotency key: the approved run, never the model's (fresh) call id."""
    return f"taskflow/{session_id}/{run_id}/write_task"


WRITE_TASK_DECLARATION = types.FunctionDeclaration(
    name=WRITE_TASK,
    description=(
        "Write the reviewed, approved task to the user's task system. Takes no arguments: the"
        " task is read from the run's state. Only after the user approved the final summary."
    ),
)  # no parameters: an empty OBJECT schema is refused by some model APIs


class WriteTaskTool(BaseTool):
    """The writer: the run's one external effect, performed exactly once per approved run."""

    def __init__(self, writer: TaskWriter, ledger: EffectLedger) -> None:
        super().__init__(name=WRITE_TASK, description=WRITE_TASK_DECLARATION.description or "")
        self.writer = writer
        self.ledger = ledger

    def _get_declaration(self) -> types.FunctionDeclaration:
        return WRITE_TASK_DECLARATION

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        state = tool_context.state
        plan = WorkflowPlan.model_validate(state.get(state_keys.PLAN))
        draft = task_draft(state)
        key = effect_key(tool_context.session.id, plan.run_id)

        async def create() -> dict[str, Any]:
            written = await self.writer.create_task(draft, idempotency_key=key)
            return written.model_dump(mode="json")

        async def find() -> dict[str, Any] | None:
            found = await self.writer.find_task(key)
            return None if found is None else found.model_dump(mode="json")

        try:
            result, _ = await perform_once(
                self.ledger, tool_context.user_id, key, create, find, now=time.time
            )
        except TaskRejectedError as exc:
            return error(str(exc))
        state[state_keys.RESULT] = result
        state[state_keys.STEP] = Step.DONE.value
        artifact = await save_task_artifact(tool_context, plan, draft, result)
        return {"status": STATUS_OK, "task": result, "title": draft.title, "artifact": artifact}


def artifact_name(plan: WorkflowPlan) -> str:
    return f"task-{plan.run_id}.json"


async def save_task_artifact(
    tool_context: ToolContext, plan: WorkflowPlan, draft: TaskDraft, written: dict[str, Any]
) -> str | None:
    """The final task as a session artifact (downloadable by its owner), saved once per run."""
    name = artifact_name(plan)
    document = {"task": draft.model_dump(mode="json"), "written": written, "plan": plan.workflow}
    try:
        if await tool_context.load_artifact(name) is None:  # a resumed write saves no new version
            part = types.Part.from_bytes(
                data=json.dumps(document, ensure_ascii=False, indent=2).encode(),
                mime_type="application/json",
            )
            await tool_context.save_artifact(name, part)
    except ValueError:
        return None  # no artifact service configured
    return name


def decision_of(answer: Mapping[str, Any] | None) -> HumanDecision | None:
    if answer is None or not isinstance(answer.get("approved"), bool):
        return None
    return HumanDecision(approved=answer["approved"], answer=str(answer.get("answer") or ""))
