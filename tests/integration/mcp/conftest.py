"""A real MCP server (tests/support/mcp_server.py) in a subprocess, per test."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.emulators import free_port
from tests.unit.conftest import make_client  # noqa: F401 - the in-process chat API fixture

REPO = Path(__file__).resolve().parents[3]


@dataclass
class McpProcess:
    process: subprocess.Popen[bytes]
    port: int
    log_path: str

    def log(self) -> str:
        return Path(self.log_path).read_text(errors="replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def wait_for_port(server: McpProcess) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(f"MCP server exited:\n{server.log()}")
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", server.port), timeout=0.5),
        ):
            return
        time.sleep(0.1)
    raise AssertionError(f"MCP server did not listen:\n{server.log()}")


@pytest.fixture
def mcp_server() -> Iterator[Callable[..., McpProcess]]:
    """`mcp_server("streamable-http" | "sse" | "hang")` → a listening server."""
    started: list[McpProcess] = []

    def start(mode: str = "streamable-http") -> McpProcess:
        port = free_port()
        log = tempfile.NamedTemporaryFile(prefix="confidant-mcp-", suffix=".log", delete=False)
        flags = ["--hang"] if mode == "hang" else ["--transport", mode]
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.mcp_server", *flags, "--port", str(port)],
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        server = McpProcess(process, port, log.name)
        started.append(server)
        wait_for_port(server)
        return server

    yield start
    for server in started:
        server.kill()
