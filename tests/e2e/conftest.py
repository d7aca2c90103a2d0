"""End-to-end: the real functions-framework server in a subprocess, spoken to over HTTP."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import TEST_PROJECT
from tests.support.emulators import free_port
from tests.support.push import functions_command
from tests.support.tokens import TokenIssuer

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Server:
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: str

    def log(self) -> str:
        return Path(self.log_path).read_text(errors="replace")[-4000:]


def start_server(command: list[str], env: dict[str, str], port: int) -> Server:
    log = tempfile.NamedTemporaryFile(prefix="confidant-e2e-", suffix=".log", delete=False)
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    server = Server(f"http://127.0.0.1:{port}", process, log.name)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited ({process.returncode}):\n{server.log()}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{server.base_url}/healthz", timeout=1).status_code == 200:
                return server
        time.sleep(0.2)
    stop_server(server)
    raise AssertionError(f"server did not answer /healthz:\n{server.log()}")


def stop_server(server: Server) -> None:
    if server.process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGTERM)
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.process.pid, signal.SIGKILL)
            server.process.wait(timeout=10)


def base_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFIDANT_")}
    env.update(overrides)
    return env


def start_local_server(data_dir: Path, **env: str) -> Server:
    """`confidant-local` (the README's `make run`) on a free port and its own database file."""
    port = free_port()
    environment = base_env(PORT=str(port), CONFIDANT_SQLITE_PATH=str(data_dir / "local.db"), **env)
    return start_server([str(REPO / ".venv/bin/confidant-local")], environment, port)


@pytest.fixture(scope="session")
def token_issuer() -> Iterator[TokenIssuer]:
    with TokenIssuer(project_id="confidant-e2e") as issuer:
        yield issuer


@pytest.fixture
def cloud_server(
    firestore_emulator, pubsub_emulator, token_issuer
) -> Iterator[Callable[..., Server]]:  # type: ignore[no-untyped-def]
    """Start functions-framework servers on Firestore + Pub/Sub emulators with Firebase auth."""
    servers: list[Server] = []

    def start(**overrides: str) -> Server:
        port = free_port()
        defaults = {
            "CONFIDANT_STORE": "firestore",
            "CONFIDANT_JOBS": "pubsub",
            "CONFIDANT_AUTH": "firebase",
            "CONFIDANT_FIREBASE_PROJECT_ID": token_issuer.project_id,
            "CONFIDANT_JWKS_URL": token_issuer.jwks_url,
            "CONFIDANT_PROJECT_ID": TEST_PROJECT,
            "CONFIDANT_MODEL": "offline",
            "FIRESTORE_EMULATOR_HOST": firestore_emulator,
            "PUBSUB_EMULATOR_HOST": pubsub_emulator,
        }
        env = base_env(**(defaults | overrides))  # overrides may replace a default
        server = start_server(functions_command("chat", port), env, port)
        servers.append(server)
        return server

    yield start
    for server in servers:
        stop_server(server)
