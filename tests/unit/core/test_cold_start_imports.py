"""What loading the chat target and building the embedded runtime import (issue 11 item 6).

Properties, not timings (bench/cold_start.py measures the times): each check runs in a fresh
interpreter, because this test process has long imported everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

# Loaded with the runtime (the startup probe builds it), never by importing the target module
# (numpy: the crisis detector's n-gram layer, on by default, scores and loads with it).
RUNTIME_MODULES = ("google.adk", "google.genai", "agents", "confidant.bootstrap", "numpy")
# Never loaded on the embedded defaults (offline model, local wisdom, SQLite, no MCP server).
CLOUD_ONLY_MODULES = (
    "litellm",
    "google.cloud.aiplatform",
    "google.cloud.firestore",
    "google.cloud.pubsub",
    "grpc",
    "mcp",
)


def _loaded_after(code: str, tmp_path: Path) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFIDANT_", "GOOGLE_"))}
    env.pop("FIRESTORE_EMULATOR_HOST", None)
    env.pop("PUBSUB_EMULATOR_HOST", None)
    env.update(CONFIDANT_MODEL="offline", CONFIDANT_SQLITE_PATH=str(tmp_path / "c.db"))
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(json.loads(result.stdout.splitlines()[-1]))


def _under(modules: set[str], roots: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == r or m.startswith(r + ".") for r in roots)}


def test_importing_the_chat_target_loads_only_the_framework(tmp_path: Path) -> None:
    loaded = _loaded_after("import functions.main", tmp_path)
    assert "functions_framework" in loaded  # the check would see a real import
    assert _under(loaded, RUNTIME_MODULES + CLOUD_ONLY_MODULES) == set()


def test_the_embedded_runtime_loads_no_cloud_client(tmp_path: Path) -> None:
    code = (
        "import asyncio\nimport functions.main\n"
        "from confidant.bootstrap import get_runtime\n"
        "from confidant.http import api\n"
        "runtime = asyncio.run(get_runtime())\n"
        "assert runtime.settings.model == 'offline'"
    )
    loaded = _loaded_after(code, tmp_path)
    assert {"google.adk.runners", "agents.onemind"} <= loaded  # the runtime was really built
    assert _under(loaded, CLOUD_ONLY_MODULES) == set()
