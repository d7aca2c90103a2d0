"""A short run of the soak's mixed locust scenario (bench/soak) against the real chat server on
the Firestore emulator: every request of every conversation answered, 0 errors (issue 14
item 7).

The five-minute soak and its comparison with ADK's api_server are `python -m bench.soak`; this
keeps the scenario itself working (a request shape that stops matching the API fails here).
"""

from __future__ import annotations

import time
import uuid

import httpx

from bench.soak.run import run_locust


def _first_turn_answered(base_url: str, token: str) -> None:
    """The first Firestore call of a fresh server on a loaded emulator can pass the store
    timeout (a clear 503); the soak measures a server that has answered once."""
    deadline = time.monotonic() + 60
    while True:
        response = httpx.post(
            f"{base_url}/v1/chat",
            json={"session_id": "warm", "message": "hello"},
            headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"},
            timeout=60,
        )
        if response.status_code == 200 or time.monotonic() > deadline:
            assert response.status_code == 200, response.text
            return
        time.sleep(1)


def test_the_mixed_soak_scenario_runs_without_errors(cloud_server, token_issuer) -> None:  # type: ignore[no-untyped-def]
    # Jobs in process, as the bench runs it. Five locust users share each account here and send
    # turns back to back: about the per-account limit (300 a minute), so a run that happened to
    # go fast was refused with 429s. The scenario is what this checks (the limiter has its own
    # tests), so the per-account limit is off.
    server = cloud_server(CONFIDANT_JOBS="inprocess", CONFIDANT_RATE_LIMIT_USER_PER_MIN="0")
    run = uuid.uuid4().hex[:6]
    tokens = [token_issuer.issue(f"smoke-{run}-{i}") for i in range(3)]
    _first_turn_answered(server.base_url, tokens[0])

    rows = run_locust("ConfidantMixed", server.base_url, 15, 3, tokens, 0.05)

    total = rows["Aggregated"]
    assert total["failures"] == 0, rows.get("_failures")
    chat_turns = sum(r["requests"] for name, r in rows.items() if name.startswith("chat "))
    assert chat_turns >= 5, rows.get("_log", rows)
