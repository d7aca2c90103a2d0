"""The taskflow team (seed 003), built per request from ADK 2.13 constructs.

Constructs, and why:

* The orchestrator is the root `LlmAgent` (chat mode), as the seed recommends: it reads the
  plan and the run's state and decides the next call. Its loops (detail collection with a
  critic, classification with corrections) are driven by the model under step rules that the
  tool callbacks enforce, with loop limits from settings. Not `LoopAgent`/`SequentialAgent`:
  deprecated in 2.13. Not a `Workflow` graph: a workflow resumes by replaying its node history
  from the invocation's events, whereas a Confidant turn loads a bounded window of events; a
  run here can pause for days over many turns, so every step's output lives in session state
  (schemas in schemas.py), which every turn loads whole.
* The critic, the classifier and the expert are separate `LlmAgent`s with an `output_schema`,
  called through `AgentTool`: each runs on its own instruction and answers structured JSON
  that `after_tool_callback` validates before it is written to state (callbacks.py).
* The human pauses are `LongRunningFunctionTool`s that return None: the turn ends with the
  call pending, and a later request on any instance resumes the same invocation by sending
  the call's `FunctionResponse` (agents/taskflow/human_loop.py).
* The writer is a `BaseTool` that runs its effect through the exactly-once ledger.
"""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools import AgentTool, BaseTool

from agents.deps import AgentDeps, TurnContext
from agents.taskflow import prompts
from agents.taskflow.callbacks import FormatChecks
from agents.taskflow.schemas import Classification, Critique, ExpertReview
from agents.taskflow.tools import (
    ASK_FOR_DETAILS_TOOL,
    CONFIRM_CLASSIFICATION_TOOL,
    DETAIL_CRITIC,
    PLAN_WORKFLOW_TOOL,
    RECORD_DETAILS_TOOL,
    REQUEST_FINAL_CONFIRMATION_TOOL,
    TASK_CLASSIFIER,
    TASK_EXPERT,
    WriteTaskTool,
)

APP_NAME = "taskflow"
ROOT_AGENT_NAME = "taskflow_orchestrator"


def _specialist(
    name: str, role: str, body: str, schema: type, deps: AgentDeps, description: str
) -> AgentTool:
    def instruction(context: ReadonlyContext) -> str:
        return prompts.render(role, body, context.state)

    agent = LlmAgent(
        name=name,
        model=deps.model,
        description=description,
        instruction=instruction,
        output_schema=schema,
        disallow_transfer_to_parent=True,
        disallow_transfer_to_peers=True,
    )
    return AgentTool(agent)


def build_taskflow_root(deps: AgentDeps, turn: TurnContext) -> LlmAgent:
    checks = FormatChecks(deps.taskflow_limits)
    locale = turn.locale or "en"

    def instruction(context: ReadonlyContext) -> str:
        body = prompts.ORCHESTRATOR_INSTRUCTION.format(locale=locale)
        return prompts.render(prompts.ORCHESTRATOR, body, context.state)

    tools: list[BaseTool] = [
        PLAN_WORKFLOW_TOOL,
        RECORD_DETAILS_TOOL,
        _specialist(
            DETAIL_CRITIC,
            prompts.CRITIC,
            prompts.CRITIC_INSTRUCTION,
            Critique,
            deps,
            "Judge whether the collected task details are complete (status and feedback).",
        ),
        ASK_FOR_DETAILS_TOOL,
        _specialist(
            TASK_CLASSIFIER,
            prompts.CLASSIFIER,
            prompts.CLASSIFIER_INSTRUCTION,
            Classification,
            deps,
            "Classify the task (type, priority, area, reasons); pass any user correction.",
        ),
        CONFIRM_CLASSIFICATION_TOOL,
        _specialist(
            TASK_EXPERT,
            prompts.EXPERT,
            prompts.EXPERT_INSTRUCTION,
            ExpertReview,
            deps,
            "Expert review of the task's content and classification.",
        ),
        REQUEST_FINAL_CONFIRMATION_TOOL,
    ]
    if deps.tasks is not None and deps.effects is not None:
        tools.append(WriteTaskTool(deps.tasks, deps.effects))
    return LlmAgent(
        name=ROOT_AGENT_NAME,
        model=deps.model,
        description="Turns a request into a reviewed, approved task in the user's task system.",
        instruction=instruction,
        tools=tools,
        before_tool_callback=checks.before_tool,
        after_tool_callback=checks.after_tool,
        on_tool_error_callback=checks.on_tool_error,
    )
