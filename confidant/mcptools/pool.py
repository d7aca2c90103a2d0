"""MCP toolsets per user, pooled per instance, guarded by timeouts and a circuit breaker.

One ADK `McpToolset` per (app, user, server config): its session manager owns that user's MCP
sessions, so a session (and whatever state the server keeps in it) is never handed to another
user. Trees are rebuilt per request, the toolsets are not: a user's next turn reuses the
connection. The pool is bounded (least recently used toolsets are closed). One breaker per
server, shared by all users: a server that is down is down for everyone.

Failures never fail the turn: a server that cannot list its tools in time offers no tools
this turn; a tool call that fails or times out returns `{"error": …}` to the model.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from confidant.agentconfig.config import McpServerConfig
from confidant.mcptools.breaker import CircuitBreaker

logger = logging.getLogger(__name__)

_PoolKey = tuple[str, str, str]  # app, user id, server config JSON


class McpToolsetPool:
    def __init__(
        self,
        *,
        max_toolsets: int = 256,
        breaker_failures: int = 3,
        breaker_cooldown_s: float = 30.0,
        tool_list_ttl_s: float = 60.0,
        allow_stdio: bool = False,
    ) -> None:
        self.max_toolsets = max_toolsets
        self.breaker_failures = breaker_failures
        self.breaker_cooldown_s = breaker_cooldown_s
        self.tool_list_ttl_s = tool_list_ttl_s
        self.allow_stdio = allow_stdio
        self._toolsets: OrderedDict[_PoolKey, GuardedMcpToolset] = OrderedDict()
        self._breakers: dict[tuple[str, str], CircuitBreaker] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def toolsets(
        self, app: str, servers: Sequence[McpServerConfig], user_id: str
    ) -> list[BaseToolset]:
        """The user's toolsets for these servers (called while building a turn's tree)."""
        found: list[BaseToolset] = []
        for server in servers:
            if server.transport == "stdio" and not self.allow_stdio:
                logger.warning("MCP server %s: stdio is for local runs only; skipped", server.name)
                continue
            key = (app, user_id, server.model_dump_json())
            toolset = self._toolsets.get(key)
            if toolset is None:
                toolset = GuardedMcpToolset(
                    server, self.breaker(app, server), tool_list_ttl_s=self.tool_list_ttl_s
                )
                self._toolsets[key] = toolset
                self._evict()
            self._toolsets.move_to_end(key)
            found.append(toolset)
        return found

    def breaker(self, app: str, server: McpServerConfig) -> CircuitBreaker:
        key = (app, server.model_dump_json())
        breaker = self._breakers.get(key)
        if breaker is None:
            breaker = self._breakers[key] = CircuitBreaker(
                failures=self.breaker_failures, cooldown_s=self.breaker_cooldown_s
            )
        return breaker

    @property
    def size(self) -> int:
        return len(self._toolsets)

    def _evict(self) -> None:
        while len(self._toolsets) > self.max_toolsets:
            _, oldest = self._toolsets.popitem(last=False)
            task = asyncio.get_running_loop().create_task(oldest.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        toolsets = list(self._toolsets.values())
        self._toolsets.clear()
        await asyncio.gather(*(t.close() for t in toolsets), *self._closing)


class GuardedMcpToolset(BaseToolset):
    """An ADK `McpToolset` for one server and one user, behind a timeout and a breaker."""

    def __init__(
        self, server: McpServerConfig, breaker: CircuitBreaker, *, tool_list_ttl_s: float
    ) -> None:
        from google.adk.tools.mcp_tool import McpToolset

        super().__init__()
        self.server = server
        self.breaker = breaker
        self._inner = McpToolset(
            connection_params=_connection_params(server),
            tool_filter=list(server.allowed_tools),
            tool_name_prefix=server.name,
            tool_list_cache_ttl_seconds=tool_list_ttl_s,
        )
        # ADK probes a Google mTLS channel (Application Default Credentials, the metadata
        # server: seconds off Google Cloud) for every new session manager, i.e. every user's
        # first call. Configured servers are ordinary HTTP(S) endpoints, so skip the probe.
        manager = getattr(self._inner, "_mcp_session_manager", None)
        if manager is not None and hasattr(manager, "_get_mtls_transport"):
            manager._get_mtls_transport = _no_mtls_transport

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        if not self.breaker.allow():
            return []
        try:
            tools = await asyncio.wait_for(
                self._inner.get_tools_with_prefix(readonly_context), self.server.timeout_s
            )
        except Exception as exc:
            self.breaker.failure()
            logger.warning(
                "MCP server %s offers no tools this turn: %s", self.server.name, _reason(exc)
            )
            return []
        self.breaker.success()
        return [GuardedMcpTool(tool, self) for tool in tools]

    async def close(self) -> None:
        await self._inner.close()


class GuardedMcpTool(BaseTool):
    """One MCP tool; a failed or timed-out call becomes an `error` result for the model."""

    def __init__(self, inner: BaseTool, toolset: GuardedMcpToolset) -> None:
        super().__init__(name=inner.name, description=inner.description)
        self._inner = inner
        self._toolset = toolset

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        return self._inner._get_declaration()

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        server = self._toolset.server
        if not self._toolset.breaker.allow():
            return {"error": f"the {server.name} tools are unavailable right now"}
        try:
            result = await asyncio.wait_for(
                self._inner.run_async(args=args, tool_context=tool_context), server.call_timeout_s
            )
        except Exception as exc:
            self._toolset.breaker.failure()
            logger.warning("MCP tool %s failed: %s", self.name, _reason(exc))
            return {"error": f"the {server.name} server failed: {_reason(exc)}"}
        if isinstance(result, dict) and set(result) == {"error"}:
            self._toolset.breaker.failure()  # ADK's own conversion of a transport failure
        else:
            self._toolset.breaker.success()
        return result


async def _no_mtls_transport() -> None:
    return None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__


def _connection_params(server: McpServerConfig) -> Any:
    from google.adk.tools.mcp_tool import (
        SseConnectionParams,
        StdioConnectionParams,
        StreamableHTTPConnectionParams,
    )

    if server.transport == "stdio":
        from mcp import StdioServerParameters

        assert server.command  # validated
        return StdioConnectionParams(
            server_params=StdioServerParameters(
                command=server.command[0], args=list(server.command[1:])
            ),
            timeout=server.timeout_s,
        )
    params = SseConnectionParams if server.transport == "sse" else StreamableHTTPConnectionParams
    return params(url=server.url, timeout=server.timeout_s, sse_read_timeout=server.call_timeout_s)
