"""Cold start of the chat target, as the container runs it, against a bare functions-framework app.

    .venv/bin/python -m bench.cold_start --runs 5 --out docs/performance.md

For each run a fresh process starts `functions-framework --asgi --target=chat
--source=functions/main.py` (what the image's CMD runs) in local mode (SQLite store, offline
model, header identity: no emulator or key needed, and the cloud clients are imported lazily
either way), and the script measures, from process start:

- first `/healthz` answered 200 (the runtime is built and the warm-up turn has run: Cloud Run's
  startup probe waits for exactly this);
- first chat turn answered to its `data: [DONE]` (a new session, one message).

The baseline, in the same run and the same way, is a functions-framework app whose target
returns "ok" (the framework's own start-up). Import time of `functions.main` (the chat target
module) is measured in fresh interpreters against `import functions_framework`. Results are
medians with ratios to the baseline; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.sections import rewrite_section

ROOT = Path(__file__).resolve().parents[1]
BARE_APP = """
from functions_framework import aio
from starlette.responses import Response


@aio.http
async def chat(request):
    return Response("ok")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def local_env(data_dir: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFIDANT_", "GOOGLE_"))}
    env.update(CONFIDANT_SQLITE_PATH=f"{data_dir}/bench.db", CONFIDANT_MODEL="offline")
    env.pop("FIRESTORE_EMULATOR_HOST", None)
    env.pop("PUBSUB_EMULATOR_HOST", None)
    return env


def start_to_answers(source: Path, *, chat: bool) -> tuple[float, float | None]:
    """Seconds from process start to the first 200 on /healthz (or /), and to the first turn."""
    port = free_port()
    with tempfile.TemporaryDirectory() as data_dir:
        command = [sys.executable, "-m", "functions_framework", "--asgi", "--target=chat"]
        command += [f"--source={source}", "--host=127.0.0.1", f"--port={port}"]
        started = time.perf_counter()
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=local_env(data_dir),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            health = _first_ok(url + ("/healthz" if chat else "/"), process, started)
            if not chat:
                return health, None
            response = httpx.post(
                f"{url}/v1/chat",
                json={"message": "I feel stuck with my thesis", "session_id": "cold"},
                headers={"X-User-Id": "bench-user"},
                timeout=60,
            )
            assert response.status_code == 200 and "data: [DONE]" in response.text, response.text
            return health, time.perf_counter() - started
        finally:
            process.terminate()
            process.wait(timeout=20)


def _first_ok(url: str, process: subprocess.Popen[bytes], started: float) -> float:
    while time.perf_counter() - started < 120:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return time.perf_counter() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.01)
    raise RuntimeError(f"{url} did not answer within 120 s")


def import_seconds(module: str) -> tuple[float, float]:
    """(wall, CPU) seconds of importing `module` in a fresh interpreter. The CPU time is what the
    import costs this process; the wall time adds whatever the other processes on the cores take."""
    code = (
        "import time; w, c = time.perf_counter(), time.process_time(); "
        f"import {module}; print(time.perf_counter() - w, time.process_time() - c)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    wall, cpu = result.stdout.split()
    return float(wall), float(cpu)


PHASES = """
import asyncio, time
t0 = time.perf_counter()
import functions.main
t1 = time.perf_counter()
import confidant.bootstrap, confidant.http.api
from confidant.bootstrap import build_runtime
from confidant.settings import Settings
from confidant.warmup import warm_up
t2 = time.perf_counter()
runtime = build_runtime(Settings())
t3 = time.perf_counter()
asyncio.run(warm_up(runtime.chat.deps, runtime.settings.default_app))
print(t1 - t0, t2 - t1, t3 - t2, time.perf_counter() - t3)
"""


def phases() -> list[float]:
    """In one fresh interpreter: import the target, build the runtime, run the warm-up turn."""
    with tempfile.TemporaryDirectory() as data_dir:
        result = subprocess.run(
            [sys.executable, "-c", PHASES],
            cwd=ROOT,
            env=local_env(data_dir),
            capture_output=True,
            text=True,
            check=True,
        )
    return [float(x) for x in result.stdout.split()]


def load_average() -> str:
    """The 1-minute load average (others share this machine's cores: read the figures with it)."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "n/a"


def report(runs: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "main.py"
        bare.write_text(BARE_APP)
        keys = ("bare", "health", "turn", "imp", "imp_cpu", "ff", "ff_cpu")
        keys += ("p_import", "p_runtime_import", "p_build", "p_warm")
        rows: dict[str, list[float]] = {k: [] for k in keys}
        loads = [load_average()]
        for _ in range(runs):  # interleaved so machine load hits both alike
            rows["bare"].append(start_to_answers(bare, chat=False)[0])
            health, turn = start_to_answers(ROOT / "functions" / "main.py", chat=True)
            rows["health"].append(health)
            rows["turn"].append(turn or 0.0)
            for key, module in (("imp", "functions.main"), ("ff", "functions_framework")):
                wall, cpu = import_seconds(module)
                rows[key].append(wall)
                rows[f"{key}_cpu"].append(cpu)
            phase_keys = ("p_import", "p_runtime_import", "p_build", "p_warm")
            for key, seconds in zip(phase_keys, phases(), strict=True):
                rows[key].append(seconds)
            loads.append(load_average())
    median = {k: statistics.median(v) for k, v in rows.items()}

    def line(label: str, key: str, base: str) -> str:
        spread = f"{min(rows[key]):.2f}-{max(rows[key]):.2f}"
        ratio = median[key] / median[base]
        return f"| {label} | {median[key]:.2f} s | {spread} | {ratio:.1f}x |"

    return "\n".join(
        [
            "## Cold start of the chat target (functions-framework, local mode)",
            "",
            "_Generated by `bench/cold_start.py`; everything between the markers is rewritten "
            "by the next run._",
            "",
            f"Command: `.venv/bin/python -m bench.cold_start --runs {runs}` "
            f"(Python {platform.python_version()}, {os.cpu_count()} CPUs, "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; 1-minute load average "
            f"{', '.join(loads)} at the start and after each run).",
            "",
            f"Median of {runs} fresh processes; ratio against the baseline in the same run.",
            "",
            "| from process start to | median | range | ratio |",
            "|---|---|---|---|",
            line("bare functions-framework app answers (baseline)", "bare", "bare"),
            line("chat `/healthz` 200 (runtime built, warm-up turn run)", "health", "bare"),
            line("first chat turn answered to `[DONE]`", "turn", "bare"),
            "",
            "| import in a fresh interpreter | median | range | ratio |",
            "|---|---|---|---|",
            line("`import functions_framework` (baseline)", "ff", "ff"),
            line("`import functions.main` (the chat target), target < 1.5 s", "imp", "ff"),
            line("the same, CPU time of the importing process", "imp_cpu", "ff_cpu"),
            line("`import functions_framework`, CPU time (baseline)", "ff_cpu", "ff_cpu"),
            "",
            "Phases of the chat target's start in one interpreter (ratio to the framework import):",
            "",
            "| phase | median | range | ratio |",
            "|---|---|---|---|",
            line("import `functions.main`", "p_import", "ff"),
            line("import the runtime (ADK, genai, agents)", "p_runtime_import", "ff"),
            line("`build_runtime(Settings())` (adapters, model, services)", "p_build", "ff"),
            line("warm-up turn (what `/healthz` waits for)", "p_warm", "ff"),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, help="rewrite this section of a markdown file")
    args = parser.parse_args()
    text = report(args.runs)
    print(text)
    if args.out:
        rewrite_section(args.out, "bench.cold_start", text)


if __name__ == "__main__":
    main()
