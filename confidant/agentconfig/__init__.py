"""The agent registry (seed 004's agent manager): per-app agent configuration, versioned."""

from confidant.agentconfig.config import (
    AgentConfig,
    AgentOverride,
    ConfigVersion,
    InstructionOverride,
    Limits,
    McpServerConfig,
    parse_agent_config,
)
from confidant.agentconfig.service import AGENT_CONFIG, AgentConfigService, AgentConfigSource

__all__ = [
    "AGENT_CONFIG",
    "AgentConfig",
    "AgentConfigService",
    "AgentConfigSource",
    "AgentOverride",
    "ConfigVersion",
    "InstructionOverride",
    "Limits",
    "McpServerConfig",
    "parse_agent_config",
]
