"""The relationship engine's tree, built per request from the turn's route.

- runner: the orchestrator (may call update_profile) transfers to exactly one specialist.
- pipe_analyze_strategist / pipe_strategist_writer: a SequentialAgent of two specialists; the
  first one's full output reaches the second's instruction through `output_key` (a `temp:` key),
  both stream, both land in the session, and the turn commits once.
- direct (strategy endpoints): one specialist answers.
"""

from __future__ import annotations

from google.adk.agents import BaseAgent, LlmAgent, SequentialAgent
from google.genai import types

from agents.deps import AgentDeps, TurnContext
from agents.relationship import roles, state_keys
from agents.relationship.instructions import OrchestratorInstruction, SpecialistInstruction
from agents.relationship.router import model_for
from agents.relationship.tools import UpdateProfileTool

APP_NAME = "relationship"


def build_specialist(
    role: str, deps: AgentDeps, turn: TurnContext, *, output_key: str | None = None
) -> LlmAgent:
    max_tokens = turn.options.get("max_tokens")
    config = types.GenerateContentConfig(max_output_tokens=max_tokens) if max_tokens else None
    return LlmAgent(
        name=role,
        description=roles.SPECIALIST_DESCRIPTIONS[role],
        model=model_for(deps, role, turn),
        instruction=SpecialistInstruction(role, turn),
        generate_content_config=config,
        output_key=output_key,
        # Each turn starts at the root again (router → orchestrator), never stays with a
        # specialist: the route is decided per message.
        disallow_transfer_to_parent=True,
        disallow_transfer_to_peers=True,
    )


def build_orchestrator(deps: AgentDeps, turn: TurnContext) -> LlmAgent:
    return LlmAgent(
        name=roles.ORCHESTRATOR,
        description="Routes the message to one specialist (and saves profile facts on request).",
        model=model_for(deps, roles.ORCHESTRATOR, turn),
        instruction=OrchestratorInstruction(turn),
        tools=[UpdateProfileTool(deps.relationship, turn.options.get("person_id"))],
        sub_agents=[build_specialist(role, deps, turn) for role in roles.SPECIALISTS],
    )


def build_pipeline(mode: str, deps: AgentDeps, turn: TurnContext) -> SequentialAgent:
    first, second = roles.PIPELINES[mode]
    return SequentialAgent(
        name=mode,
        description=f"{first} then {second}, in one reply.",
        sub_agents=[
            build_specialist(first, deps, turn, output_key=state_keys.PIPELINE_OUTPUT),
            build_specialist(second, deps, turn),
        ],
    )


def build_relationship_root(deps: AgentDeps, turn: TurnContext) -> BaseAgent:
    """A fresh tree for one request (agents are never shared between requests)."""
    route = turn.loaded.get(state_keys.ROUTE) or {"mode": roles.RUNNER}
    mode = route.get("mode")
    if mode == roles.DIRECT:
        return build_specialist(route["agent"], deps, turn)
    if mode in roles.PIPELINES:
        return build_pipeline(mode, deps, turn)
    return build_orchestrator(deps, turn)
