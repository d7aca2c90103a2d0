"""The tools a skill manifest may name, by name, built per request for one skill."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from google.adk.tools import BaseTool

from agents.protocols import tools as protocol_tools
from agents.skills import state_tools
from agents.skills.env import ToolEnv

ToolFactory = Callable[[ToolEnv], BaseTool]

TOOL_FACTORIES: dict[str, ToolFactory] = {
    "read_state": state_tools.ReadStateTool,
    "write_state": state_tools.WriteStateTool,
    "append_to_list": state_tools.AppendToListTool,
    "show_protocol_invitation": protocol_tools.ShowInvitationTool,
    "start_protocol": protocol_tools.StartProtocolTool,
    "advance_protocol_step": protocol_tools.AdvanceStepTool,
    "cancel_protocol": protocol_tools.CancelProtocolTool,
    "resume_protocol": protocol_tools.ResumeProtocolTool,
}
PROTOCOL_TOOLS = (
    "show_protocol_invitation",
    "start_protocol",
    "advance_protocol_step",
    "cancel_protocol",
    "resume_protocol",
)


def build_tools(names: Sequence[str], env: ToolEnv) -> list[BaseTool]:
    return [TOOL_FACTORIES[name](env) for name in names]
