"""Format checks as tool callbacks (seed 003), plus the run's step rules.

* `before_tool` validates a call's arguments against the schema of what the tool consumes and
  checks that the run is at the right step; a bad call gets a structured error the model can
  correct (`{"status": "error", "error", "problems", "hint"}`) and the tool does not run.
* `after_tool` validates what the specialists (critic, classifier, expert) answered against
  their schemas before it is written to session state; a malformed answer becomes a structured
  error instead of state.
* `on_tool_error` turns a format failure raised inside a tool (e.g. a specialist whose JSON did
  not parse) into the same structured error, never a failed turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.tools import BaseTool, ToolContext
from pydantic import BaseModel, ValidationError

from agents.deps import TaskflowLimits
from agents.taskflow import state_keys
from agents.taskflow.schemas import Classification, Critique, ExpertReview, Step, TaskDetails
from agents.taskflow.tools import (
    ASK_FOR_DETAILS,
    CONFIRM_CLASSIFICATION,
    DETAIL_CRITIC,
    RECORD_DETAILS,
    REQUEST_FINAL_CONFIRMATION,
    STATUS_ERROR,
    TASK_CLASSIFIER,
    TASK_EXPERT,
    WRITE_TASK,
    current_step,
    decision_of,
    error,
    latest_answer,
)

# What each tool consumes: its arguments must validate against this schema.
ARGUMENT_SCHEMAS: dict[str, type[BaseModel]] = {RECORD_DETAILS: TaskDetails}
# What each specialist produces, and the state key its validated output is stored under.
OUTPUT_SCHEMAS: dict[str, tuple[type[BaseModel], str]] = {
    DETAIL_CRITIC: (Critique, state_keys.CRITIQUE),
    TASK_CLASSIFIER: (Classification, state_keys.CLASSIFICATION),
    TASK_EXPERT: (ExpertReview, state_keys.REVIEW),
}


def problems_of(exc: ValidationError) -> list[dict[str, str]]:
    return [
        {"field": ".".join(str(p) for p in err["loc"]) or "arguments", "problem": err["msg"]}
        for err in exc.errors()
    ]


@dataclass(frozen=True)
class FormatChecks:
    """The orchestrator's tool callbacks, bound to the process's loop limits."""

    limits: TaskflowLimits

    def before_tool(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        schema = ARGUMENT_SCHEMAS.get(tool.name)
        if schema is not None:
            try:
                schema.model_validate({k: v for k, v in args.items() if v is not None})
            except ValidationError as exc:
                return error(
                    f"{tool.name} got malformed arguments",
                    problems=problems_of(exc),
                    hint="fix or leave out the listed fields and call again",
                )
        rule = _STEP_RULES.get(tool.name)
        refusal = rule(self, tool_context) if rule else None
        return error(refusal) if refusal else None

    def after_tool(
        self,
        tool: BaseTool,
        args: dict[str, Any],
        tool_context: ToolContext,
        tool_response: Any,
    ) -> dict[str, Any] | None:
        if isinstance(tool_response, Mapping) and tool_response.get("status") == STATUS_ERROR:
            return None  # already a structured error (also: a before_tool refusal)
        declared = OUTPUT_SCHEMAS.get(tool.name)
        if declared is None:
            return None
        schema, key = declared
        try:
            output = schema.model_validate(tool_response)
        except ValidationError as exc:
            return error(
                f"{tool.name} answered in the wrong format; ask it again",
                problems=problems_of(exc),
            )
        state = tool_context.state
        state[key] = output.model_dump(mode="json")
        if isinstance(output, Critique):
            return self._after_critique(output, state)
        if isinstance(output, Classification):
            rounds = int(state.get(state_keys.CLASSIFICATION_ROUNDS) or 0) + 1
            state[state_keys.CLASSIFICATION_ROUNDS] = rounds
            return {"status": "ok", "classification": state[key], "proposal": rounds}
        state[state_keys.STEP] = Step.CONFIRM.value  # the expert review is done
        return {"status": "ok", "review": state[key]}

    def _after_critique(self, critique: Critique, state: Any) -> dict[str, Any]:
        rounds = int(state.get(state_keys.DETAIL_ROUNDS) or 0) + 1
        state[state_keys.DETAIL_ROUNDS] = rounds
        result = {"status": "ok", "critique": critique.model_dump(mode="json"), "round": rounds}
        if critique.status == "complete":
            state[state_keys.STEP] = Step.CLASSIFY.value
        elif rounds >= self.limits.max_detail_rounds:
            state[state_keys.STEP] = Step.CANCELLED.value
            result["limit_reached"] = True
            result["hint"] = (
                f"the details are still incomplete after {rounds} rounds: tell the user the "
                "task was not filed and what is missing"
            )
        return result

    def on_tool_error(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, error_: Exception
    ) -> dict[str, Any] | None:
        if isinstance(error_, ValidationError):
            return error(f"{tool.name} produced malformed output", problems=problems_of(error_))
        if isinstance(error_, ValueError):
            return error(f"{tool.name} failed: {str(error_)[:300]}")
        return None  # anything else fails the turn (nothing is committed; the client re-sends)

    # -- the run's step rules (None: allowed; a string: why not) -----------------------------

    def _collecting(self, ctx: ToolContext) -> str | None:
        if current_step(ctx.state) is not Step.COLLECT:
            return f"not collecting details now (step: {ctx.state.get(state_keys.STEP)})"
        return None

    def _incomplete(self, ctx: ToolContext) -> str | None:
        critique = ctx.state.get(state_keys.CRITIQUE) or {}
        if current_step(ctx.state) is not Step.COLLECT or critique.get("status") != "incomplete":
            return "ask for details only after detail_critic found them incomplete"
        return None

    def _classifying(self, ctx: ToolContext) -> str | None:
        if current_step(ctx.state) is not Step.CLASSIFY:
            return f"classification is not the current step ({ctx.state.get(state_keys.STEP)})"
        rounds = int(ctx.state.get(state_keys.CLASSIFICATION_ROUNDS) or 0)
        if rounds > self.limits.max_classification_corrections:
            return (
                f"the classification was corrected {rounds - 1} times (the limit); keep the "
                "last one and continue with task_expert"
            )
        return None

    def _classified(self, ctx: ToolContext) -> str | None:
        if current_step(ctx.state) is not Step.CLASSIFY or not ctx.state.get(
            state_keys.CLASSIFICATION
        ):
            return "call task_classifier first"
        return None

    def _reviewed(self, ctx: ToolContext) -> str | None:
        if current_step(ctx.state) is not Step.CONFIRM:
            return "the task needs the expert review (task_expert) first"
        return None

    def _approved(self, ctx: ToolContext) -> str | None:
        if current_step(ctx.state) is not Step.CONFIRM:
            return f"nothing to write at this step ({ctx.state.get(state_keys.STEP)})"
        decision = decision_of(latest_answer(ctx, REQUEST_FINAL_CONFIRMATION))
        if decision is None or not decision.approved:
            return "the user has not approved the final summary; nothing was written"
        return None


_STEP_RULES: dict[str, Callable[[FormatChecks, ToolContext], str | None]] = {
    RECORD_DETAILS: FormatChecks._collecting,
    DETAIL_CRITIC: FormatChecks._collecting,
    ASK_FOR_DETAILS: FormatChecks._incomplete,
    TASK_CLASSIFIER: FormatChecks._classifying,
    CONFIRM_CLASSIFICATION: FormatChecks._classified,
    TASK_EXPERT: FormatChecks._classified,
    REQUEST_FINAL_CONFIRMATION: FormatChecks._reviewed,
    WRITE_TASK: FormatChecks._approved,
}
