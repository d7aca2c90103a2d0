"""A real MCP server for tests, built on the `mcp` package's `MCPServer`, run as a subprocess.

    python -m tests.support.mcp_server --transport streamable-http|sse|stdio [--port N]
    python -m tests.support.mcp_server --hang --port N   # accepts connections, never answers

Tools: `add(a, b)`; `whoami()` names the MCP session the call came in on (`session-1`, …: one
number per client session, so tests can see which callers shared a session); `crash()` kills
the process mid-call; `delete_everything()` exists so allow-lists have something to refuse.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

_sessions: dict[str, str] = {}


def build_server() -> MCPServer:
    server = MCPServer("confidant-test-tools")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def whoami(ctx: Context) -> str:
        """The label of the MCP session this call arrived on."""
        headers = ctx.headers or {}
        # The transport's session id (streamable HTTP); the session object otherwise.
        key = headers.get("mcp-session-id") or str(id(ctx.session))
        if key not in _sessions:
            _sessions[key] = f"session-{len(_sessions) + 1}"
        return _sessions[key]

    @server.tool()
    def crash() -> str:
        """Kill the server in the middle of the call."""
        os._exit(3)

    @server.tool()
    def delete_everything() -> str:
        """A tool no allow-list should offer."""
        return "deleted"

    return server


async def _hang(port: int) -> None:
    """A TCP server that reads requests and never answers any of them."""
    held: list[Any] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        print("connection", flush=True)  # the tests count these lines
        await reader.read()  # until the client gives up

    server = await asyncio.start_server(accept, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="streamable-http")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--hang", action="store_true")
    args = parser.parse_args()
    if args.hang:
        asyncio.run(_hang(args.port))
        return
    server = build_server()
    if args.transport == "stdio":
        server.run("stdio")
    elif args.transport == "sse":
        server.run("sse", host="127.0.0.1", port=args.port)
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    sys.exit(0)


if __name__ == "__main__":
    main()
