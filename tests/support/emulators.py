"""Start and stop the gcloud Firestore and Pub/Sub emulators for the test session.

Each emulator runs in its own process group: `gcloud` starts a Java child that outlives a
killed `gcloud`, so the whole group is stopped. Under CI=true a missing or failing emulator is
a test failure, never a skip.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"


def free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unavailable(reason: str) -> None:
    """Fail under CI, skip elsewhere."""
    if IN_CI:
        pytest.fail(f"emulator required under CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


@dataclass
class Emulator:
    name: str
    host: str
    process: subprocess.Popen[bytes]
    log_path: str

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def _start(
    name: str, args: list[str], ready_path: str, timeout_s: float = 90.0, host: str | None = None
) -> Emulator:
    gcloud = shutil.which("gcloud")
    if gcloud is None:
        unavailable("gcloud is not installed")
    host = host or f"127.0.0.1:{free_port()}"
    log = tempfile.NamedTemporaryFile(prefix=f"{name}-emulator-", suffix=".log", delete=False)
    process = subprocess.Popen(
        [gcloud, *args, f"--host-port={host}"],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # own process group, stopped as a whole
    )
    emulator = Emulator(name=name, host=host, process=process, log_path=log.name)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            if httpx.get(f"http://{host}{ready_path}", timeout=1.0).status_code < 500:
                return emulator
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    emulator.stop()
    with open(log.name, encoding="utf-8", errors="replace") as fh:
        tail = fh.read()[-2000:]
    unavailable(f"{name} emulator did not become ready on {host}:\n{tail}")
    raise AssertionError("unreachable")


def start_firestore(host: str | None = None, import_data: str | None = None) -> Emulator:
    """A Firestore emulator (on `host` when given, to restart one in place), optionally loaded
    from an export (`export_firestore`)."""
    args = ["emulators", "firestore", "start", "--quiet"]
    if import_data is not None:
        args.append(f"--import-data={import_data}")
    return _start("firestore", args, "/", host=host)


def export_firestore(host: str, project: str, directory: str) -> str:
    """Export the emulator's data to `directory`; the path `start_firestore(import_data=)` takes."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    httpx.post(
        f"http://{host}/emulator/v1/projects/{project}:export",
        json={"database": f"projects/{project}/databases/(default)", "export_directory": directory},
        timeout=30,
    ).raise_for_status()
    return str(next(Path(directory).rglob("*.overall_export_metadata")))


def start_pubsub(project: str) -> Emulator:
    return _start(
        "pubsub", ["beta", "emulators", "pubsub", "start", "--quiet", f"--project={project}"], "/"
    )


@contextlib.contextmanager
def running(emulator_factory) -> Iterator[Emulator]:  # type: ignore[no-untyped-def]
    emulator = emulator_factory()
    try:
        yield emulator
    finally:
        emulator.stop()


def reset_firestore(host: str, project: str) -> None:
    httpx.delete(
        f"http://{host}/emulator/v1/projects/{project}/databases/(default)/documents", timeout=10
    ).raise_for_status()
