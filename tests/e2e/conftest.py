"""End-to-end: the real functions-framework server in a subprocess, spoken to over HTTP."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import TEST_PROJECT
from tests.support.emulators import free_port
from tests.support.push import functions_command
from tests.support.servers import REPO, Server, start_server, stop_server
from tests.support.tokens import TokenIssuer


def start_local_server(database: Path, **overrides: str) -> Server:
    """`confidant-local` (embedded store, offline model) on a free port."""
    port = free_port()
    env = base_env(PORT=str(port), CONFIDANT_SQLITE_PATH=str(database), **overrides)
    return start_server([str(REPO / ".venv/bin/confidant-local")], env, port)


def leave_mid_reply(
    client: httpx.Client, body: dict, headers: dict[str, str], session_path: str
) -> httpx.Response:
    """Hang up as soon as the reply starts streaming, then wait until the server has finished
    the turn without us; the session's GET response afterwards."""
    with client.stream("POST", "/v1/chat", json=body, headers=headers) as response:
        for line in response.iter_lines():
            if '"text-delta"' in line:
                break  # the reply has started: hang up mid-stream
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        got = client.get(session_path, headers=headers)
        if got.status_code == 200 and not got.json()["session"]["busy"]:
            break
        time.sleep(0.2)
    return got


def base_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFIDANT_")}
    env.update(overrides)
    return env


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
