"""Cold start of the chat target: import time, and process start → first answered chat.

    .venv/bin/python -m bench.wisdom_cold_start [--runs 5]

Each measurement is a fresh interpreter (medians of `--runs`), in the same run as its
baselines: the bare interpreter (`python -c pass`) and, when it is installed,
`import google.cloud.aiplatform` (the SDK the Vector Search adapter avoids: it talks REST).

* import: `import functions.main` (the functions-framework target `chat`), timed inside the
  child; and whether `google.cloud.aiplatform` ended up in `sys.modules` after importing the
  target and after building the runtime with the Vertex AI wisdom and embedding adapters
  configured (the request path never imports it).
* first chat: `functions-framework --target=chat` on the embedded defaults (SQLite, offline
  model), from `Popen` to the first complete `POST /v1/chat` answer, polling every 20 ms;
  in alternating rounds with the local wisdom index and with the Vertex AI adapters
  configured (pointing at an unused address: the first turn is stage 1 and retrieves
  nothing, so this isolates what configuring them costs at start-up).

Targets are reported as PASS/MISS, never asserted: import under 1.5 s on this machine.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
IMPORT_TARGET_S = 1.5
AIPLATFORM = "google.cloud.aiplatform"

VERTEX_ENV = {
    "CONFIDANT_WISDOM": "vertex",
    "CONFIDANT_EMBEDDINGS": "vertex",
    "CONFIDANT_MODEL": "offline",
    "GOOGLE_API_KEY": "unused",
    "CONFIDANT_VECTOR_SEARCH_ENDPOINT_DOMAIN": "http://127.0.0.1:9",
    "CONFIDANT_VECTOR_SEARCH_INDEX_ENDPOINT": "projects/p/locations/us-central1/indexEndpoints/e",
    "CONFIDANT_VECTOR_SEARCH_DEPLOYED_INDEX_ID": "wisdom",
}


def _env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFIDANT_")}
    for key in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        env.pop(key, None)
    env.update(overrides)
    return env


def _child(code: str, env: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def _timed_import(module: str, env: dict[str, str]) -> tuple[float, bool]:
    code = (
        "import sys, time\nstarted = time.perf_counter()\n"
        f"import {module}\n"
        f"print(time.perf_counter() - started, {AIPLATFORM!r} in sys.modules)"
    )
    seconds, loaded = _child(code, env).split()
    return float(seconds), loaded == "True"


def _runtime_imports_aiplatform(env: dict[str, str]) -> bool:
    code = (
        "import sys\nfrom confidant.bootstrap import build_runtime\n"
        "from confidant.settings import Settings\nbuild_runtime(Settings())\n"
        f"print({AIPLATFORM!r} in sys.modules)"
    )
    return _child(code, env) == "True"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def first_chat_seconds(env: dict[str, str], timeout_s: float = 120.0) -> float:
    """Seconds from starting the chat target's process to its first complete chat answer."""
    port = _free_port()
    with tempfile.TemporaryDirectory() as data:
        env = {**env, "CONFIDANT_SQLITE_PATH": str(Path(data) / "bench.db")}
        command = [
            sys.executable, "-m", "functions_framework", "--asgi", "--target=chat",
            "--source=functions/main.py", "--host=127.0.0.1", f"--port={port}",
        ]  # fmt: skip
        started = time.perf_counter()
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            while time.perf_counter() - started < timeout_s:
                if process.poll() is not None:
                    raise RuntimeError(f"the chat target exited with {process.returncode}")
                with contextlib.suppress(httpx.TransportError):
                    response = httpx.post(
                        f"http://127.0.0.1:{port}/v1/chat",
                        json={"message": "hello", "session_id": "bench"},
                        headers={"X-User-Id": "bench", "accept": "application/json"},
                        timeout=60,
                    )
                    response.raise_for_status()
                    return time.perf_counter() - started
                time.sleep(0.02)
            raise RuntimeError("no answer before the timeout")
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s"


def measure(runs: int) -> list[tuple[str, str]]:
    """(what, median) rows; one function so other cold-start benches can call it."""
    local, vertex = _env(), _env(**VERTEX_ENV)
    rows: list[tuple[str, str]] = []
    interpreter = []
    for _ in range(runs):
        started = time.perf_counter()
        _child("pass", local)
        interpreter.append(time.perf_counter() - started)
    rows.append(("interpreter start (`python -c pass`, baseline)", _median(interpreter)))
    imports = [_timed_import("functions.main", local) for _ in range(runs)]
    import_median = statistics.median(seconds for seconds, _ in imports)
    verdict = "PASS" if import_median < IMPORT_TARGET_S else "MISS"
    rows.append(
        (
            f"import of the chat target (`functions.main`), target < {IMPORT_TARGET_S} s",
            f"{import_median:.2f} s ({verdict})",
        )
    )
    rows.append((f"{AIPLATFORM} imported by the target", str(any(flag for _, flag in imports))))
    rows.append(
        (
            f"{AIPLATFORM} imported building the runtime with the Vertex AI adapters",
            str(_runtime_imports_aiplatform(vertex)),
        )
    )
    if importlib.util.find_spec("google.cloud.aiplatform") is not None:
        sdk = [_timed_import(AIPLATFORM, local)[0] for _ in range(runs)]
        rows.append((f"import {AIPLATFORM} alone (avoided)", _median(sdk)))
        ratio = import_median / statistics.median(sdk)
        rows.append(("chat target import / aiplatform import (same run)", f"{ratio:.2f}"))
    else:
        rows.append((f"import {AIPLATFORM} alone (avoided)", "not installed"))
    # Alternating rounds: drift in the machine's load hits both configurations alike.
    first_chats: dict[str, list[float]] = {"local wisdom": [], "Vertex AI adapters": []}
    for _ in range(runs):
        first_chats["local wisdom"].append(first_chat_seconds(local))
        first_chats["Vertex AI adapters"].append(first_chat_seconds(vertex))
    for name, seconds in first_chats.items():
        rows.append((f"process start → first answered chat, {name}", _median(seconds)))
    ratio = statistics.median(first_chats["Vertex AI adapters"]) / statistics.median(
        first_chats["local wisdom"]
    )
    rows.append(
        ("first answered chat, Vertex AI adapters / local wisdom (same run)", f"{ratio:.2f}")
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"medians of {args.runs} fresh processes; {os.cpu_count()} CPUs\n")
    print("| measurement | value |\n|---|---|")
    for what, value in measure(args.runs):
        print(f"| {what} | {value} |")


if __name__ == "__main__":
    main()
