"""Applies an app's stored agent config (confidant/agentconfig) to its freshly built tree.

Generic over apps: the registry calls `apply_agent_config` on whatever `build_root` returned.
Agents are matched by name (`"*"`: every LLM agent); the tree is per request, so changing its
agents in place never touches another request.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterator, Sequence
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.utils.instructions_utils import inject_session_state
from google.genai import types

from agents.deps import AgentDeps, TurnContext
from confidant.agentconfig.config import AgentConfig, AgentOverride, ConfigVersion, Limits
from confidant.agentconfig.service import AGENT_CONFIG

logger = logging.getLogger(__name__)


def turn_config(turn: TurnContext) -> AgentConfig | None:
    """The app config the turn loaded (None: the app's defaults)."""
    version = turn.loaded.get(AGENT_CONFIG)
    return version.config if isinstance(version, ConfigVersion) else None


def turn_limits(turn: TurnContext) -> Limits:
    config = turn_config(turn)
    return config.limits if config else Limits()


def llm_agents(root: BaseAgent) -> Iterator[LlmAgent]:
    """Every LLM agent of the tree: sub-agents and agents wrapped as tools, depth first."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        agent = stack.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        if isinstance(agent, LlmAgent):
            yield agent
            stack.extend(t.agent for t in reversed(agent.tools) if isinstance(t, AgentTool))
        stack.extend(reversed(agent.sub_agents))


def apply_agent_config(
    root: BaseAgent,
    config: AgentConfig | None,
    deps: AgentDeps,
    toolsets: Sequence[BaseToolset] = (),
) -> BaseAgent:
    """Models, instructions, tool allow-lists and output limits per agent; `toolsets` (the
    config's MCP servers, connected by the caller) go to the first LLM agent (the root when it
    is one)."""
    agents = list(llm_agents(root))
    if config is not None:
        for agent in agents:
            override = config.override_for(agent.name)
            if override is not None:
                _apply(agent, override, deps)
    if toolsets and agents:
        agents[0].tools = [*agents[0].tools, *toolsets]
    return root


def _apply(agent: LlmAgent, override: AgentOverride, deps: AgentDeps) -> None:
    if override.model and deps.models is not None:
        try:
            agent.model = deps.models.for_agent(agent.name, override.model)
        except KeyError:
            # Validated when stored; the deployment's allow-list may have changed since.
            logger.warning("agent %s: model %r is no longer allowed", agent.name, override.model)
    if override.instruction is not None:
        wanted = override.instruction
        agent.instruction = AmendedInstruction(
            agent.instruction, wanted.text, replace=wanted.mode == "replace"
        )
    if override.enabled_tools is not None:
        enabled = set(override.enabled_tools)
        agent.tools = [t for t in agent.tools if _tool_name(t) is None or _tool_name(t) in enabled]
    if override.max_output_tokens is not None:
        base = agent.generate_content_config or types.GenerateContentConfig()
        agent.generate_content_config = base.model_copy(
            update={"max_output_tokens": override.max_output_tokens}
        )


def _tool_name(tool: Any) -> str | None:
    """A tool's name; None for toolsets (their own filters apply)."""
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, BaseToolset):
        return None
    return getattr(tool, "__name__", None)


class AmendedInstruction:
    """An agent's instruction with an admin's text after it (or instead of it).

    The admin's text is used verbatim: braces in it are never read as state placeholders. A
    string base instruction keeps its placeholders, filled as ADK fills them.
    """

    def __init__(self, base: Any, text: str, *, replace: bool = False) -> None:
        self.base = base
        self.text = text
        self.replace = replace

    async def __call__(self, context: ReadonlyContext) -> str:
        if self.replace:
            return self.text
        if isinstance(self.base, str):
            base = await inject_session_state(self.base, context) if self.base else ""
        else:
            base = self.base(context)
            if inspect.isawaitable(base):
                base = await base
        return f"{base}\n\n{self.text}" if base else self.text
