"""MCP toolsets (seed 004's MCP manager): servers an app's agent config names, connected per
user with timeouts and a circuit breaker, their tools filtered by the config's allow-list."""

from confidant.mcptools.breaker import CircuitBreaker
from confidant.mcptools.pool import McpToolsetPool

__all__ = ["CircuitBreaker", "McpToolsetPool"]
