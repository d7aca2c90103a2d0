"""Protocol tools: invite, start, advance (schema-checked), cancel, resume after a timeout.

Each moves the skill's protocol through the turn's ProtocolRunner (profile writes commit with
the turn), records the progress payload in session state (streamed as `data-protocol-progress`
by the app's progress reader), and sends the invitation / completion cards through the turn's
UI channel (`data-protocol-invitation`, `data-protocol-completed`).
"""

from __future__ import annotations

from typing import Any

from google.adk.tools import ToolContext
from google.genai import types
from pydantic import BaseModel

from agents.protocols.engine import ProtocolRunner, error
from agents.protocols.progress import PROGRESS_STATE_KEY
from agents.skills.state_tools import SkillTool

INVITATION_PART = "protocol-invitation"
COMPLETED_PART = "protocol-completed"


class InvitationAction(BaseModel):
    label: str
    value: str


class ProtocolInvitation(BaseModel):
    """The `data-protocol-invitation` card."""

    protocol_id: str
    skill: str
    title: str
    description: str
    estimated_time: Any
    total_steps: int
    reason: str
    actions: list[InvitationAction]


class ProtocolCompleted(BaseModel):
    protocol_id: str | None
    skill: str
    summary: Any
    report_url: str


# The stream parts of an app that runs guided protocols (AppSpec.data_parts).
DATA_PARTS = {INVITATION_PART: ProtocolInvitation, COMPLETED_PART: ProtocolCompleted}
DEFAULT_ACTIONS = (
    {"label": "Start", "value": "start"},
    {"label": "Not now", "value": "later"},
)

_PROTOCOL_ID = types.Schema(type=types.Type.STRING, description="The protocol's id.")

SHOW_INVITATION = types.FunctionDeclaration(
    name="show_protocol_invitation",
    description=(
        "Show the user a card inviting them to start a guided protocol (title, description, "
        "estimated time, start / not now). Their choice arrives as their next message."
    ),
    parameters=types.Schema(
        type=types.Type.OBJECT,
        properties={
            "protocol_id": _PROTOCOL_ID,
            "reason": types.Schema(
                type=types.Type.STRING, description="One sentence: why it fits the user now."
            ),
        },
        required=["protocol_id"],
    ),
)
START_PROTOCOL = types.FunctionDeclaration(
    name="start_protocol",
    description=(
        "Start (or resume, if it was paused) a protocol the user accepted; another running "
        "protocol of this skill is paused."
    ),
    parameters=types.Schema(
        type=types.Type.OBJECT, properties={"protocol_id": _PROTOCOL_ID}, required=["protocol_id"]
    ),
)
ADVANCE_STEP = types.FunctionDeclaration(
    name="advance_protocol_step",
    description=(
        "Finish the current protocol step: save the data it collected (must match the step's "
        "schema) and move to the next step, or complete the protocol after the last one."
    ),
    parameters_json_schema={  # step_data is free-form here; the step's own schema checks it
        "type": "object",
        "properties": {
            "step_data": {
                "type": "object",
                "description": "The data of this step (PROTOCOL_STEP_SCHEMA).",
            },
            "step_summary": {
                "type": "string",
                "description": "A one-sentence summary of the user's answer.",
            },
        },
        "required": ["step_data", "step_summary"],
    },
)
CANCEL_PROTOCOL = types.FunctionDeclaration(
    name="cancel_protocol",
    description="Stop the protocol in progress (the user wants to stop).",
    parameters=types.Schema(
        type=types.Type.OBJECT,
        properties={"reason": types.Schema(type=types.Type.STRING, description="Why.")},
    ),
)
RESUME_PROTOCOL = types.FunctionDeclaration(
    name="resume_protocol",
    description="The user confirmed they want to continue the protocol they left a while ago.",
    parameters=types.Schema(type=types.Type.OBJECT, properties={}),
)


def record_progress(tool_context: ToolContext, payload: dict[str, Any] | None) -> None:
    if payload is not None:
        tool_context.state[PROGRESS_STATE_KEY] = payload


class _ProtocolTool(SkillTool):
    def runner(self) -> ProtocolRunner:
        assert self.env.protocols is not None  # the manifest loader requires protocols
        return self.env.protocols

    def run(self, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any]:
        result = self.act(args)
        if result.get("status") == "ok":
            record_progress(tool_context, result.get("progress"))
        return result

    def act(self, args: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError


class ShowInvitationTool(_ProtocolTool):
    declaration = SHOW_INVITATION

    def act(self, args: dict[str, Any]) -> dict[str, Any]:
        runner = self.runner()
        spec = runner.protocols.get(str(args.get("protocol_id") or ""))
        if spec is None:
            return error(
                "unknown_protocol",
                "no such protocol in this skill",
                available=sorted(runner.protocols),
            )
        card = {
            "protocol_id": spec.id,
            "skill": runner.skill_id,
            "title": spec.title,
            "description": spec.description,
            "estimated_time": spec.estimated_time,
            "total_steps": spec.total_steps,
            "reason": str(args.get("reason") or "")[:300],
            "actions": [dict(a) for a in DEFAULT_ACTIONS],
        }
        self.env.data_parts.send(INVITATION_PART, card)
        return {"status": "ok", "result": "shown", "invitation": card}


class StartProtocolTool(_ProtocolTool):
    declaration = START_PROTOCOL

    def act(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.runner().start(str(args.get("protocol_id") or ""))


class AdvanceStepTool(_ProtocolTool):
    declaration = ADVANCE_STEP

    def act(self, args: dict[str, Any]) -> dict[str, Any]:
        runner = self.runner()
        result = runner.advance(args.get("step_data"), args.get("step_summary"))
        if result.get("result") == "completed":
            state = runner.state() or {}
            self.env.data_parts.send(
                COMPLETED_PART,
                {
                    "protocol_id": state.get("id"),
                    "skill": runner.skill_id,
                    "summary": result.get("summary", ""),
                    "report_url": f"/v1/me/reports/{runner.skill_id}/{state.get('id')}",
                },
            )
        return result


class CancelProtocolTool(_ProtocolTool):
    declaration = CANCEL_PROTOCOL

    def act(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.runner().cancel(args.get("reason"))


class ResumeProtocolTool(_ProtocolTool):
    declaration = RESUME_PROTOCOL

    def act(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.runner().resume()
