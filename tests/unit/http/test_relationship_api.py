"""The relationship app through HTTP on the embedded store with the offline model: the three
chat modes, the strategy endpoints, persons, self-profile and the model allow-list."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from agents.offline import OfflineModel
from agents.relationship.proposals import ProfileProposalExtractor, ProfileProposalJob
from confidant.sessions.records import SessionKey
from tests.support.recording_model import RecordingLlm
from tests.support.sse import of_type, parse_frames, streamed_text

ALICE = {"X-User-Id": "alice"}
BOB = {"X-User-Id": "bob"}
APP = "relationship"


async def _chat(client: httpx.AsyncClient, message: str, path: str = "/v1/chat", **body: Any):  # type: ignore[no-untyped-def]
    response = await client.post(path, json={"app": APP, "message": message, **body}, headers=ALICE)
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done and parts[-1]["type"] == "finish", parts
    return parts


def _speakers(parts: list[dict[str, Any]]) -> list[str]:
    return [p["data"]["name"] for p in of_type(parts, "data-agent")]


def _texts_by_speaker(parts: list[dict[str, Any]]) -> dict[str, str]:
    """Each specialist's streamed text (a data-agent part precedes the text it announces)."""
    texts: dict[str, str] = {}
    speaker = None
    for part in parts:
        if part["type"] == "data-agent":
            speaker = part["data"]["name"]
        elif part["type"] == "text-delta":
            assert speaker is not None, "text before any data-agent part"
            texts[speaker] = texts.get(speaker, "") + part["delta"]
    return texts


async def _stored(runtime, session_id: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    loaded = await runtime.store.load(SessionKey("alice", APP, session_id))
    return [json.loads(event["json"]) for event in loaded.record.tail]


async def _person(client: httpx.AsyncClient, **fields: Any) -> str:
    response = await client.post(
        "/v1/relationship/persons", json={"name": "Alex", **fields}, headers=ALICE
    )
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def test_runner_mode_orchestrator_transfers_to_exactly_one_specialist(make_client) -> None:
    client, runtime = make_client()
    person_id = await _person(client, relationship="partner")
    parts = await _chat(
        client, "He went silent after dinner.", session_id="r1", person_id=person_id
    )
    assert of_type(parts, "data-route")[0]["data"] == {"mode": "runner", "reason": "one need"}
    assert _speakers(parts) == ["analyzer"]
    assert [c["input"] for c in of_type(parts, "tool-input-available")] == [
        {"agent_name": "analyzer"}
    ]
    assert "Alex" in streamed_text(parts)  # the person reached the specialist's instruction
    authors = [e["author"] for e in await _stored(runtime, "r1")]
    assert authors == ["user", "orchestrator", "orchestrator", "analyzer"]


async def test_pipeline_streams_both_specialists_in_order_and_commits_once(make_client) -> None:
    client, runtime = make_client()
    await _chat(client, "He went silent after dinner.", session_id="single")
    single = await runtime.store.load(SessionKey("alice", APP, "single"))

    parts = await _chat(client, "Why did he go quiet, and what should I do next?", session_id="p1")
    assert of_type(parts, "data-route")[0]["data"]["mode"] == "pipe_analyze_strategist"
    assert _speakers(parts) == ["analyzer", "strategist"]
    assert len(of_type(parts, "text-start")) == 2
    texts = _texts_by_speaker(parts)
    # The second step received the first step's output in its instruction.
    assert texts["strategist"].startswith(
        f'Building on the analysis above ("{texts["analyzer"][:60]}")'
    )
    stored = await _stored(runtime, "p1")
    assert [e["author"] for e in stored] == ["user", "analyzer", "strategist"]
    record = (await runtime.store.load(SessionKey("alice", APP, "p1"))).record
    assert record.revision == single.record.revision  # one commit, as for a one-agent turn
    assert not any(key.startswith("temp:") for key in record.state)


async def test_strategist_writer_pipeline(make_client) -> None:
    client, _ = make_client()
    parts = await _chat(client, "I need a plan and what should I say to her?", session_id="p2")
    assert of_type(parts, "data-route")[0]["data"]["mode"] == "pipe_strategist_writer"
    assert _speakers(parts) == ["strategist", "writer"]
    texts = _texts_by_speaker(parts)
    assert texts["writer"].startswith(f'Following the plan above ("{texts["strategist"][:60]}")')


async def test_a_later_turn_starts_at_the_router_again(make_client) -> None:
    client, _ = make_client()
    await _chat(client, "Why did he go quiet, and what should I do next?", session_id="again")
    parts = await _chat(client, "What should I say to him?", session_id="again")
    assert of_type(parts, "data-route")[0]["data"]["mode"] == "runner"
    assert _speakers(parts) == ["writer"]


async def test_profile_update_in_runner_mode_writes_the_self_profile(make_client) -> None:
    client, _ = make_client()
    parts = await _chat(client, "Please update my profile: I am an introvert, and need time")
    assert of_type(parts, "data-route")[0]["data"]["reason"] == "profile update requested"
    calls = [c["toolName"] for c in of_type(parts, "tool-input-available")]
    assert calls == ["update_profile", "transfer_to_agent"]
    assert _speakers(parts) == ["profile"]
    assert streamed_text(parts).startswith("I saved that to the profile.")
    profile = (await client.get("/v1/relationship/self-profile", headers=ALICE)).json()
    assert profile["about"] == "I am an introvert, and need time"


async def test_strategy_endpoints_answer_with_one_specialist_and_no_router(make_client) -> None:
    counting = RecordingLlm()
    client, runtime = make_client(model=counting)
    for path, agent in (("analyze", "analyzer"), ("advise", "strategist"), ("script", "writer")):
        counting.calls.clear()
        # Cues for every mode in the message: the endpoint, not the router, decides.
        parts = await _chat(
            client,
            "Why did he go quiet, what should I do, what should I say?",
            path=f"/v1/relationship/{path}",
        )
        assert _speakers(parts) == [agent]
        assert not of_type(parts, "data-route")
        assert len(counting.instructions) == 1  # no router call, no orchestrator call
        session_id = of_type(parts, "data-session")[0]["data"]["sessionId"]  # created for us
        assert [e["author"] for e in await _stored(runtime, session_id)] == ["user", agent]
    # An existing chat session continues through an endpoint.
    await _chat(client, "He went silent.", session_id="shared")
    await _chat(
        client, "Draft something kind.", path="/v1/relationship/script", session_id="shared"
    )
    assert [e["author"] for e in await _stored(runtime, "shared")][-2:] == ["user", "writer"]


async def test_strategy_endpoint_json_and_crisis_guard(make_client) -> None:
    counting = RecordingLlm()
    client, _ = make_client(model=counting)
    response = await client.post(
        "/v1/relationship/advise",
        json={"message": "How do I bring this up?"},
        headers={**ALICE, "accept": "application/json"},
    )
    body = response.json()
    assert response.status_code == 200 and body["app"] == APP
    assert body["agent"] == [{"name": "strategist"}] and "route" not in body
    counting.calls.clear()
    crisis = await _chat(client, "I want to kill myself", path="/v1/relationship/analyze")
    assert "988" in streamed_text(crisis) or "hotline" in streamed_text(crisis).lower()
    crisis_chat = await _chat(client, "I want to kill myself")
    assert of_type(crisis_chat, "data-route")[0]["data"]["reason"] == "crisis guard"
    assert counting.instructions == []  # neither the router nor any agent saw the message


async def test_chat_json_response_carries_the_route_and_speakers(make_client) -> None:
    client, _ = make_client()
    response = await client.post(
        "/v1/chat",
        json={"app": APP, "message": "I need a plan and what should I say?"},
        headers={**ALICE, "accept": "application/json"},
    )
    body = response.json()
    assert body["route"]["mode"] == "pipe_strategist_writer"
    assert body["agent"] == [{"name": "strategist"}, {"name": "writer"}]
    plan, wording = body["text"].split("\n\n")  # one paragraph per specialist
    assert plan.startswith("Plan with") and wording.startswith("Following the plan above")


async def test_bad_options_are_400_and_an_unknown_person_is_404(make_client) -> None:
    client, _ = make_client()
    for extra, reason in (
        ({"max_tokens": 5}, "max_tokens"),
        ({"mode": "gossip"}, "mode"),
        ({"person_id": "../x"}, "person_id"),
        ({"colour": "red"}, "colour"),
        ({"model": "gpt-9"}, "allowed models: none are configured"),
    ):
        response = await client.post(
            "/v1/chat",
            json={"app": APP, "message": "hi", "session_id": "bad", **extra},
            headers=ALICE,
        )
        assert response.status_code == 400, extra
        assert reason in response.json()["error"]["message"]
    response = await client.post(
        "/v1/chat",
        json={"app": APP, "message": "hi", "session_id": "bad", "person_id": "nobody"},
        headers=ALICE,
    )
    assert response.status_code == 404
    # The lease was released: the same session still takes a turn.
    await _chat(client, "hi", session_id="bad")


async def test_model_allow_list(make_client) -> None:
    models = {"selectable": {"offline-b": {"provider": "offline"}}, "agents": {}}
    client, _ = make_client(agent_models=models)
    response = await client.post(
        "/v1/chat", json={"app": APP, "message": "hi", "model": "gpt-9"}, headers=ALICE
    )
    assert response.status_code == 400
    assert "allowed models: offline-b" in response.json()["error"]["message"]
    parts = await _chat(client, "He went silent.", model="offline-b")
    assert _speakers(parts) == ["analyzer"]


async def test_persons_crud_is_validated_and_private(make_client) -> None:
    client, _ = make_client()
    person_id = await _person(client, relationship="manager", tags=["direct"])
    listed = (await client.get("/v1/relationship/persons", headers=ALICE)).json()["persons"]
    assert [p["id"] for p in listed] == [person_id]
    replaced = await client.put(
        f"/v1/relationship/persons/{person_id}",
        json={"name": "Alex K.", "status": "on leave", "notes": "prefers email"},
        headers=ALICE,
    )
    assert replaced.status_code == 200 and replaced.json()["status"] == "on leave"
    got = (await client.get(f"/v1/relationship/persons/{person_id}", headers=ALICE)).json()
    assert got["name"] == "Alex K." and got["tags"] == []
    assert (
        await client.get(f"/v1/relationship/persons/{person_id}", headers=BOB)
    ).status_code == 404
    for bad in (
        {"name": ""},
        {"name": "x" * 81},
        {"name": "A", "tags": ["t"] * 21},
        {"name": "A", "notes": "n" * 2001},
        {"name": "A", "age": 3},
        ["A"],
    ):
        response = await client.post("/v1/relationship/persons", json=bad, headers=ALICE)
        assert response.status_code == 400, bad
        assert response.json()["error"]["message"]
    assert (
        await client.patch(f"/v1/relationship/persons/{person_id}", headers=ALICE)
    ).status_code == 405
    assert (
        await client.delete(f"/v1/relationship/persons/{person_id}", headers=ALICE)
    ).status_code == 204
    assert (
        await client.delete(f"/v1/relationship/persons/{person_id}", headers=ALICE)
    ).status_code == 404
    assert (await client.get("/v1/relationship/persons", headers=ALICE)).json() == {"persons": []}


async def test_self_profile_reaches_the_instructions(make_client) -> None:
    counting = RecordingLlm()
    client, _ = make_client(model=counting)
    empty = (await client.get("/v1/relationship/self-profile", headers=ALICE)).json()
    assert empty["about"] == "" and empty["values"] == []
    bad = await client.put("/v1/relationship/self-profile", json={"values": "x"}, headers=ALICE)
    assert bad.status_code == 400
    put = await client.put(
        "/v1/relationship/self-profile",
        json={"about": "night-shift nurse", "values": ["honesty"]},
        headers=ALICE,
    )
    assert put.status_code == 200
    await _chat(client, "What should I say to him?")
    [writer] = [text for text in counting.instructions if "RELATIONSHIP_AGENT: writer" in text]
    assert "About: night-shift nurse" in writer
    assert (await client.get("/v1/relationship/self-profile", headers=BOB)).json()["about"] == ""


async def test_the_app_and_its_endpoints_are_listed(make_client) -> None:
    client, _ = make_client()
    apps = {a["name"]: a for a in (await client.get("/v1/apps")).json()["apps"]}
    names = {e["name"] for e in apps[APP]["endpoints"]}
    assert {"strategy", "list persons", "replace self-profile", "list profile proposals"} <= names


async def test_proposals_are_listed_accepted_and_rejected_over_http(make_client) -> None:
    client, runtime = make_client()
    await _chat(client, "I am a night owl. Why is he so distant?", session_id="prop")
    await runtime.jobs.drain()  # the turn's post-turn jobs, profile proposals among them
    job = ProfileProposalJob(
        runtime.store, ProfileProposalExtractor(OfflineModel(), runtime.relationship)
    )
    # The pipeline filed the proposal; the same job run again files nothing twice.
    assert await job.run(user_id="alice", app=APP, session_id="prop") == []
    listed = (await client.get("/v1/relationship/proposals", headers=ALICE)).json()["proposals"]
    assert len(listed) == 1
    filed_id = listed[0]["id"]
    assert listed[0]["changes"] == {"about": "I am a night owl"}
    assert (await client.get("/v1/relationship/proposals", headers=BOB)).json()["proposals"] == []
    bob_accepts = await client.post(f"/v1/relationship/proposals/{filed_id}/accept", headers=BOB)
    assert bob_accepts.status_code == 404
    accepted = await client.post(f"/v1/relationship/proposals/{filed_id}/accept", headers=ALICE)
    assert accepted.status_code == 200 and accepted.json()["status"] == "accepted"
    profile = (await client.get("/v1/relationship/self-profile", headers=ALICE)).json()
    assert profile["about"] == "I am a night owl"
    again = await client.post(f"/v1/relationship/proposals/{filed_id}/reject", headers=ALICE)
    assert again.status_code == 400
    everything = await client.get("/v1/relationship/proposals?status=all", headers=ALICE)
    assert [p["status"] for p in everything.json()["proposals"]] == ["accepted"]
    assert await job.run(user_id="alice", app=APP, session_id="prop") == []  # accepted: done
    bad = await client.get("/v1/relationship/proposals?status=maybe", headers=ALICE)
    assert bad.status_code == 400


async def test_deleting_the_user_erases_persons_and_profile(make_client) -> None:
    client, _ = make_client()
    await _person(client)
    await client.put("/v1/relationship/self-profile", json={"about": "nurse"}, headers=ALICE)
    assert (await client.delete("/v1/me", headers=ALICE)).status_code == 200
    assert (await client.get("/v1/relationship/persons", headers=ALICE)).json() == {"persons": []}
    profile = (await client.get("/v1/relationship/self-profile", headers=ALICE)).json()
    assert profile["about"] == ""


async def test_the_embedded_relationship_store_has_its_own_file(make_client, tmp_path) -> None:
    client, _ = make_client()
    # The first requests of a fresh process open both files at once (context ‖ lease).
    results = await asyncio.gather(
        *(_chat(client, "He went silent.", session_id=f"race{i}") for i in range(4)),
        client.post("/v1/relationship/persons", json={"name": "Kim"}, headers=ALICE),
    )
    assert results[-1].status_code == 201
    assert (tmp_path / "confidant-relationship.db").exists()
