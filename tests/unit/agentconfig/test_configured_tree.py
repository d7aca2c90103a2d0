"""Applying a stored agent config to any app's fresh tree (agents/configured.py), generically."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from google.adk.agents import LlmAgent

from agents import build_app
from agents.configured import AmendedInstruction, llm_agents
from agents.deps import AgentDeps, TurnContext
from agents.offline import OfflineModel
from agents.safety import CrisisDetector
from confidant.agentconfig import AGENT_CONFIG, AgentConfig, ConfigVersion, parse_agent_config
from confidant.errors import BadRequestError
from confidant.mcptools import CircuitBreaker, McpToolsetPool
from confidant.models.factory import ModelCatalog
from confidant.settings import Settings
from confidant.wisdom import LocalWisdomIndex

SETTINGS = Settings(model="offline", agent_models={"selectable": {"alt": {"provider": "offline"}}})
DEFAULT = OfflineModel()
DEPS = AgentDeps(
    crisis_detector=CrisisDetector(),
    model=DEFAULT,
    wisdom=LocalWisdomIndex(),
    models=ModelCatalog(SETTINGS, DEFAULT),
)


def _turn(config: dict, *, app: str = "onemind", user: str = "u") -> TurnContext:
    version = ConfigVersion(
        app=app,
        version=1,
        config=AgentConfig.model_validate(config),
        author="root",
        created_at=datetime.now(UTC),
    )
    return TurnContext(
        user_id=user, session_id="s", locale="en", app=app, loaded={AGENT_CONFIG: version}
    )


def test_star_applies_to_every_agent_and_a_named_entry_wins() -> None:
    turn = _turn(
        {
            "agents": {
                "*": {"model": "alt", "max_output_tokens": 99},
                "orchestrator": {"instruction": {"text": "Be brief."}},
            }
        },
        app="relationship",
    )
    root = build_app("relationship", DEPS, turn).root_agent
    agents = list(llm_agents(root))
    assert agents[0] is root and root.name == "orchestrator"
    assert len(agents) > 1  # the specialists under it
    for agent in agents[1:]:
        assert agent.model is not DEFAULT  # the allow-listed "alt" model
        assert agent.generate_content_config.max_output_tokens == 99  # type: ignore[union-attr]
    assert isinstance(root, LlmAgent) and isinstance(root.instruction, AmendedInstruction)
    assert root.model is DEFAULT  # its own entry replaced "*"


def test_without_a_config_the_tree_is_the_apps_own() -> None:
    plain = TurnContext(user_id="u", session_id="s", locale="en", app="onemind")
    root = build_app("onemind", DEPS, plain).root_agent
    assert root.model is DEFAULT  # type: ignore[union-attr]
    assert not isinstance(root.instruction, AmendedInstruction)  # type: ignore[union-attr]


def test_admin_bodies_are_checked_against_the_deployment() -> None:
    with pytest.raises(BadRequestError, match="not an allowed model"):
        parse_agent_config({"agents": {"*": {"model": "alt"}}}, models=[])
    assert parse_agent_config({"agents": {"*": {"model": "alt"}}}, models=["alt"])
    with pytest.raises(BadRequestError, match="server names must be unique"):
        server = {"name": "a", "transport": "sse", "url": "http://h/sse", "allowed_tools": ["t"]}
        parse_agent_config({"mcp_toolsets": [server, server]})
    with pytest.raises(BadRequestError, match="is not an agent name"):
        parse_agent_config({"agents": {"no spaces": {}}})


def test_circuit_breaker_opens_then_lets_one_trial_through() -> None:
    now = [0.0]
    breaker = CircuitBreaker(failures=2, cooldown_s=10, clock=lambda: now[0])
    breaker.failure()
    assert breaker.allow()
    breaker.failure()
    assert breaker.is_open and not breaker.allow()
    now[0] = 10.5
    assert breaker.allow()  # the half-open trial
    assert not breaker.allow()  # only one
    breaker.failure()
    assert not breaker.allow()
    now[0] = 21.0
    assert breaker.allow()
    breaker.success()
    assert breaker.allow() and breaker.allow() and not breaker.is_open


async def test_pool_keeps_one_toolset_per_user_and_server_and_evicts_the_oldest() -> None:
    pool = McpToolsetPool(max_toolsets=2)
    server = parse_agent_config(
        {
            "mcp_toolsets": [
                {
                    "name": "docs",
                    "transport": "streamable_http",
                    "url": "http://127.0.0.1:9/mcp",
                    "allowed_tools": ["search"],
                }
            ]
        }
    ).mcp_toolsets
    (alice,) = pool.toolsets("onemind", server, "alice")
    assert pool.toolsets("onemind", server, "alice")[0] is alice
    (bob,) = pool.toolsets("onemind", server, "bob")
    assert bob is not alice
    assert alice.breaker is bob.breaker  # a dead server is dead for everyone
    pool.toolsets("relationship", server, "carol")
    assert pool.size == 2  # alice's (least recently used) was closed
    assert pool.toolsets("onemind", server, "alice")[0] is not alice
    stdio = parse_agent_config(
        {
            "mcp_toolsets": [
                {"name": "x", "transport": "stdio", "command": ["true"], "allowed_tools": ["a"]}
            ]
        },
        allow_stdio=True,
    ).mcp_toolsets
    assert pool.toolsets("onemind", stdio, "alice") == []  # not allowed on this instance
    await pool.close()
    assert pool.size == 0
