"""The relationship app end to end: the real local server in a subprocess, read over HTTP.

Offline model: all three chat modes and the three strategy endpoints, asserting which
specialists spoke, in which order, what the second pipeline step received, and what was stored.
Gemini path: one pipeline turn over the Gemini wire-format fake (router call, two streamed
specialists, one commit).
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore

from agents.relationship import roles
from tests.conftest import TEST_PROJECT
from tests.e2e.conftest import REPO, Server, base_env, start_server, stop_server
from tests.support.emulators import free_port
from tests.support.fake_gemini import FakeGemini, text
from tests.support.sse import of_type, parse_frames, streamed_text

USER = {"X-User-Id": "rel-e2e"}


def _firestore() -> firestore.Client:
    return firestore.Client(project=TEST_PROJECT, credentials=AnonymousCredentials())


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:  # type: ignore[no-untyped-def]
    port = free_port()
    db = tmp_path_factory.mktemp("relationship") / "local.db"
    env = base_env(PORT=str(port), CONFIDANT_SQLITE_PATH=str(db))
    running = start_server([str(REPO / ".venv/bin/confidant-local")], env, port)
    try:
        yield running
    finally:
        stop_server(running)


def _turn(server: Server, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = httpx.post(f"{server.base_url}{path}", json=body, headers=USER, timeout=30)
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done and parts[-1]["type"] == "finish", parts
    return parts


def _speakers(parts: list[dict[str, Any]]) -> list[str]:
    return [p["data"]["name"] for p in of_type(parts, "data-agent")]


def _texts(parts: list[dict[str, Any]]) -> list[str]:
    """The streamed text parts, one string per text-start … text-end."""
    texts: dict[str, str] = {}
    for part in parts:
        if part["type"] == "text-delta":
            texts[part["id"]] = texts.get(part["id"], "") + part["delta"]
    return list(texts.values())


def _stored_authors(server: Server, session_id: str) -> list[str]:
    response = httpx.get(
        f"{server.base_url}/v1/sessions/{session_id}?app=relationship", headers=USER, timeout=10
    )
    assert response.status_code == 200, response.text
    return [event["author"] for event in response.json()["events"]]


def test_three_chat_modes(server: Server) -> None:
    person = httpx.post(
        f"{server.base_url}/v1/relationship/persons",
        json={"name": "Jordan", "relationship": "manager"},
        headers=USER,
        timeout=10,
    )
    assert person.status_code == 201, person.text
    body = {"app": "relationship", "session_id": "e2e-modes", "person_id": person.json()["id"]}

    runner = _turn(server, "/v1/chat", {**body, "message": "Jordan ignored my email again."})
    assert of_type(runner, "data-route")[0]["data"]["mode"] == "runner"
    assert _speakers(runner) == ["analyzer"]
    assert "Jordan" in streamed_text(runner)

    analyze_plan = _turn(
        server, "/v1/chat", {**body, "message": "Why is Jordan cold, and what should I do?"}
    )
    assert of_type(analyze_plan, "data-route")[0]["data"]["mode"] == "pipe_analyze_strategist"
    assert _speakers(analyze_plan) == ["analyzer", "strategist"]
    analysis, plan = _texts(analyze_plan)
    assert plan.startswith(f'Building on the analysis above ("{analysis[:60]}")')

    plan_write = _turn(
        server, "/v1/chat", {**body, "message": "Give me a plan and what should I say to Jordan?"}
    )
    assert of_type(plan_write, "data-route")[0]["data"]["mode"] == "pipe_strategist_writer"
    assert _speakers(plan_write) == ["strategist", "writer"]
    plan, wording = _texts(plan_write)
    assert wording.startswith(f'Following the plan above ("{plan[:60]}")')

    assert _stored_authors(server, "e2e-modes") == [
        "user", "orchestrator", "orchestrator", "analyzer",
        "user", "analyzer", "strategist",
        "user", "strategist", "writer",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("endpoint", "agent"), [("analyze", "analyzer"), ("advise", "strategist"), ("script", "writer")]
)
def test_strategy_endpoints(server: Server, endpoint: str, agent: str) -> None:
    parts = _turn(
        server,
        f"/v1/relationship/{endpoint}",
        {"message": "Why did my sister hang up, what should I do, what should I say?"},
    )
    assert not of_type(parts, "data-route")
    assert _speakers(parts) == [agent]
    session_id = of_type(parts, "data-session")[0]["data"]["sessionId"]
    assert _stored_authors(server, session_id) == ["user", agent]


def test_one_pipeline_turn_over_the_gemini_wire_format(tmp_path) -> None:
    analysis = "Sam withdraws when he feels criticised; the silence is self-protection."
    plan = "Step 1: thank him for the dinner. IF he opens up, THEN ask about his week."
    with FakeGemini() as gemini:
        gemini.enqueue(
            text('{"mode": "pipe_analyze_strategist", "reason": "reading and plan"}', chunks=1),
            text(analysis, chunks=3),
            text(plan, chunks=3),
        )
        port = free_port()
        env = base_env(
            PORT=str(port),
            CONFIDANT_SQLITE_PATH=str(tmp_path / "gemini.db"),
            CONFIDANT_MODEL="gemini",
            CONFIDANT_GEMINI_BASE_URL=gemini.base_url,
            GOOGLE_API_KEY="test-key",
        )
        server = start_server([sys.executable, "-m", "confidant.local_server"], env, port)
        try:
            parts = _turn(
                server,
                "/v1/chat",
                {
                    "app": "relationship",
                    "session_id": "g-pipe",
                    "message": "Why did Sam go quiet, and what should I do?",
                },
            )
            authors = _stored_authors(server, "g-pipe")
        finally:
            stop_server(server)
        # The post-turn jobs (emotion, summary, memory, profile proposals) call the same model
        # after the reply: only the router's and the specialists' requests are the turn's.
        requests = [
            r
            for r in gemini.requests
            if "RELATIONSHIP_AGENT:" in r.system_instruction
            and f"RELATIONSHIP_AGENT: {roles.EXTRACTOR}" not in r.system_instruction
            and "CONFIDANT_EXTRACTOR" not in r.system_instruction
        ]

    assert of_type(parts, "data-route")[0]["data"] == {
        "mode": "pipe_analyze_strategist",
        "reason": "reading and plan",
    }
    assert _speakers(parts) == ["analyzer", "strategist"]
    assert _texts(parts) == [analysis, plan]
    assert len(of_type(parts, "text-delta")) == 6  # both specialists streamed
    assert authors == ["user", "analyzer", "strategist"]  # one turn, committed once

    router, first, second = requests
    assert router.method == "generateContent" and not router.stream
    assert "RELATIONSHIP_AGENT: router" in router.system_instruction
    assert [c["parts"][0]["text"] for c in router.contents] == [
        "Why did Sam go quiet, and what should I do?"
    ]
    assert first.stream and "RELATIONSHIP_AGENT: analyzer" in first.system_instruction
    assert second.stream and "RELATIONSHIP_AGENT: strategist" in second.system_instruction
    assert f"<<<PIPELINE_INPUT\n{analysis}\nPIPELINE_INPUT>>>" in second.system_instruction


def test_persons_and_a_pipeline_turn_on_firestore(cloud_server, token_issuer) -> None:  # type: ignore[no-untyped-def]
    """The deployed shape: persons in Firestore under the verified user, read by a chat turn."""
    server = cloud_server()
    uid = f"rel-{uuid.uuid4().hex[:8]}"
    auth = {"Authorization": f"Bearer {token_issuer.issue(uid)}"}
    with httpx.Client(base_url=server.base_url, timeout=30, headers=auth) as client:
        created = client.post("/v1/relationship/persons", json={"name": "Robin", "tags": ["shy"]})
        assert created.status_code == 201, created.text
        person_id = created.json()["id"]
        response = client.post(
            "/v1/chat",
            json={
                "app": "relationship",
                "session_id": "fs-pipe",
                "person_id": person_id,
                "message": "Why is Robin distant, and what should I do?",
            },
        )
        parts, done = parse_frames(response.text)
        assert done and parts[-1]["type"] == "finish", parts
        assert _speakers(parts) == ["analyzer", "strategist"]
        assert all("Robin" in text for text in _texts(parts))
        other = {"Authorization": f"Bearer {token_issuer.issue(uid + '-other')}"}
        assert client.get(f"/v1/relationship/persons/{person_id}", headers=other).status_code == 404
    stored = (
        _firestore().collection("users").document(uid).collection("persons").document(person_id)
    ).get()
    assert stored.exists and stored.to_dict()["tags"] == ["shy"]
    session = (
        _firestore()
        .collection("users")
        .document(uid)
        .collection("apps")
        .document("relationship")
        .collection("sessions")
        .document("fs-pipe")
        .get()
    )
    assert session.exists  # the turn committed under the same user
