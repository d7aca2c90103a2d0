"""A server in a subprocess of its own process group, ready once it answers over HTTP (the e2e
tests' servers and the soak bench's)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Server:
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: str

    def log(self) -> str:
        return Path(self.log_path).read_text(errors="replace")[-4000:]


def start_server(
    command: list[str],
    env: dict[str, str],
    port: int,
    *,
    ready: str = "/healthz",
    within_s: float = 60.0,
) -> Server:
    """Start `command` and wait until `GET {ready}` answers 200; AssertionError with the log's
    end if it exits or does not answer within `within_s`."""
    log = tempfile.NamedTemporaryFile(prefix="confidant-server-", suffix=".log", delete=False)
    with log:  # the child holds its own descriptor; this process needs only the name
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Server(f"http://127.0.0.1:{port}", process, log.name)
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited ({process.returncode}):\n{server.log()}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{server.base_url}{ready}", timeout=5).status_code == 200:
                return server
        time.sleep(0.2)
    stop_server(server)
    raise AssertionError(f"server did not answer {ready}:\n{server.log()}")


def stop_server(server: Server) -> None:
    """SIGTERM to the server's process group (its workers too), SIGKILL after 10 s."""
    if server.process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGTERM)
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.process.pid, signal.SIGKILL)
            server.process.wait(timeout=10)
