"""ADK's own API server (`get_fast_api_app` under uvicorn, what `adk api_server` runs) serving
the onemind coach with the offline scripted model, its sessions in ADK's built-in
`FirestoreSessionService` on the same emulator as ours.

    FIRESTORE_EMULATOR_HOST=... python -m bench.soak.adk_server --port 8000 --project p

The agent tree is the one our server builds for onemind (same instruction, tools, crisis guard
and offline model), built once for the process as ADK's loader expects (`agent.py` → `app`).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import uvicorn

APP = "onemind"
AGENT_PY = """
from agents import build_app
from agents.deps import AgentDeps, TurnContext
from agents.safety import CrisisDetector
from agents.offline.onemind_model import OfflineModel
from confidant.wisdom.local_index import LocalWisdomIndex

app = build_app(
    "onemind",
    AgentDeps(crisis_detector=CrisisDetector(), model=OfflineModel(), wisdom=LocalWisdomIndex()),
    TurnContext(user_id="adk", session_id="adk", locale="en"),
)
"""


def build(project: str, agents_dir: Path) -> Any:
    from google.adk.cli.fast_api import get_fast_api_app
    from google.adk.cli.service_registry import get_service_registry
    from google.adk.integrations.firestore import FirestoreSessionService
    from google.cloud import firestore

    def firestore_sessions(uri: str, **_: Any) -> FirestoreSessionService:
        return FirestoreSessionService(client=firestore.AsyncClient(project=project))

    get_service_registry().register_session_service("firestore", firestore_sessions)
    (agents_dir / APP).mkdir(parents=True, exist_ok=True)
    (agents_dir / APP / "__init__.py").write_text("from . import agent\n")
    (agents_dir / APP / "agent.py").write_text(AGENT_PY)
    return get_fast_api_app(
        agents_dir=str(agents_dir),
        session_service_uri="firestore://",
        artifact_service_uri="memory://",
        memory_service_uri="memory://",
        use_local_storage=False,
        web=False,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--project", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as agents_dir:
        app = build(args.project, Path(agents_dir))
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
