"""The agent registry's admin endpoints in-process: real SQLite store, real chat service.

A config stored through the endpoints changes the very next turn's tree: what the model is
sent (instruction, tools), which model answers, how many model calls a turn may make.
"""

from __future__ import annotations

import httpx
from google.adk.models import LlmRequest

from tests.support.scripted_model import ScriptedLlm, call
from tests.support.sse import of_type, parse_frames, streamed_text

ADMIN = {"X-User-Id": "root"}
ALICE = {"X-User-Id": "alice"}
CONFIG = "/v1/admin/apps/onemind/config"
COACH = "onemind_coach"


def _system(request: LlmRequest) -> str:
    instruction = request.config.system_instruction if request.config else None
    return instruction if isinstance(instruction, str) else str(instruction or "")


async def _turn(client: httpx.AsyncClient, text: str = "I feel stuck") -> list[dict]:
    response = await client.post("/v1/chat", json={"message": text}, headers=ALICE)
    assert response.status_code == 200
    parts, done = parse_frames(response.text)
    assert done
    return parts


async def _put(client: httpx.AsyncClient, body: object, headers=ADMIN) -> httpx.Response:  # type: ignore[no-untyped-def]
    return await client.put(CONFIG, json=body, headers=headers)


async def test_only_admins_reach_the_registry(make_client) -> None:
    client, runtime = make_client(admin_users=["root"])
    for method, path in [
        ("GET", CONFIG),
        ("PUT", CONFIG),
        ("GET", "/v1/admin/apps/onemind/versions"),
        ("POST", "/v1/admin/apps/onemind/rollback"),
    ]:
        response = await client.request(method, path, json={}, headers=ALICE)
        assert response.status_code == 403, (method, path)
        assert response.json()["error"]["code"] == "forbidden"
    assert await runtime.agent_configs.versions("onemind") == []  # nothing was written
    fresh = await client.get(CONFIG, headers=ADMIN)
    assert fresh.status_code == 200
    assert fresh.json()["version"] == 0 and fresh.json()["config"]["agents"] == {}


async def test_a_claim_never_comes_from_the_header_identity(make_client) -> None:
    client, _ = make_client()  # no admin users: nobody is an admin in local mode
    assert (await client.get(CONFIG, headers=ADMIN)).status_code == 403


async def test_bad_configs_get_pydantic_reasons_and_store_nothing(make_client) -> None:
    client, runtime = make_client(
        admin_users=["root"], agent_models={"selectable": {"fast": {"provider": "offline"}}}
    )
    cases = [
        ({"agents": {COACH: {"model": "gpt-9"}}}, "not an allowed model"),
        ({"agents": {COACH: {"instructions": "typo"}}}, "agents.onemind_coach.instructions"),
        ({"agents": {COACH: {"instruction": {"mode": "prepend", "text": "x"}}}}, "mode"),
        ({"limits": {"max_llm_calls": 0}}, "limits.max_llm_calls"),
        ({"mcp_toolsets": [{"name": "docs", "transport": "sse", "allowed_tools": ["a"]}]}, "url"),
        ({"mcp_toolsets": [{"name": "d", "transport": "sse", "url": "http://x"}]}, "allowed_tools"),
        ([1, 2], "body"),
    ]
    for body, reason in cases:
        response = await _put(client, body)
        assert response.status_code == 400, body
        assert reason in response.json()["error"]["message"], (body, response.json())
    not_json = await client.put(CONFIG, content=b"{", headers=ADMIN)
    assert not_json.status_code == 400
    assert await runtime.agent_configs.versions("onemind") == []
    missing_app = await client.put("/v1/admin/apps/nope/config", json={}, headers=ADMIN)
    assert missing_app.status_code == 404


async def test_the_next_turn_uses_the_new_instruction_and_tool_list(make_client) -> None:
    model = ScriptedLlm(script=["before", "after"])
    client, _ = make_client(model=model, admin_users=["root"])
    await _turn(client)
    assert {"advance_stage", "retrieve_wisdom", "save_crystal"} <= set(model.requests[0].tools_dict)

    stored = await _put(
        client,
        {
            "agents": {
                COACH: {
                    "instruction": {"text": "Always answer in {three} short sentences."},
                    "enabled_tools": ["advance_stage"],
                }
            },
            "note": "shorter replies",
        },
    )
    assert stored.status_code == 200, stored.text
    assert stored.json()["version"] == 1 and stored.json()["author"] == "root"

    parts = await _turn(client)
    assert streamed_text(parts) == "after"
    second = model.requests[1]
    system = _system(second)
    # Appended after the app's own instruction, braces verbatim (not a state placeholder).
    added = "\n\nAlways answer in {three} short sentences."
    assert added in system
    assert -1 < system.index("CURRENT_STAGE") < system.index(added)
    assert set(second.tools_dict) == {"advance_stage"}


async def test_replace_mode_and_max_output_tokens_for_every_agent(make_client) -> None:
    model = ScriptedLlm(script=["ok"])
    client, _ = make_client(model=model, admin_users=["root"])
    replace = {"mode": "replace", "text": "Only say ok."}
    body = {"agents": {"*": {"instruction": replace, "max_output_tokens": 64}}}
    assert (await _put(client, body)).status_code == 200
    await _turn(client)
    # ADK adds the agent's identity line after the instruction; the app's own text is gone.
    assert _system(model.requests[0]).startswith("Only say ok.")
    assert "CURRENT_STAGE" not in _system(model.requests[0])
    assert model.requests[0].config.max_output_tokens == 64


async def test_model_override_from_the_allow_list(make_client) -> None:
    scripted = ScriptedLlm(script=["from the default model"])
    client, _ = make_client(
        model=scripted,
        admin_users=["root"],
        agent_models={"selectable": {"offline": {"provider": "offline"}}},
    )
    assert (await _put(client, {"agents": {COACH: {"model": "offline"}}})).status_code == 200
    parts = await _turn(client, "I keep putting off my thesis")
    assert scripted.requests == []  # the configured model answered, not the default
    assert streamed_text(parts)


async def test_versions_and_rollback(make_client) -> None:
    model = ScriptedLlm(script=["a", "b", "c"])
    client, _ = make_client(model=model, admin_users=["root"])
    for text in ("first rule", "second rule"):
        body = {"agents": {COACH: {"instruction": {"text": text}}}}
        assert (await _put(client, body)).status_code == 200
    versions = (await client.get("/v1/admin/apps/onemind/versions", headers=ADMIN)).json()
    assert [v["version"] for v in versions["versions"]] == [2, 1]
    await _turn(client)
    assert "\n\nsecond rule" in _system(model.requests[0])

    rolled = await client.post(
        "/v1/admin/apps/onemind/rollback", json={"version": 1}, headers=ADMIN
    )
    assert rolled.status_code == 200
    assert rolled.json()["version"] == 3 and rolled.json()["rolled_back_from"] == 1
    await _turn(client)
    assert "\n\nfirst rule" in _system(model.requests[1])
    assert "second rule" not in _system(model.requests[1])
    current = (await client.get(CONFIG, headers=ADMIN)).json()
    assert current["version"] == 3
    assert current["config"]["agents"][COACH]["instruction"]["text"] == "first rule"

    missing = await client.post(
        "/v1/admin/apps/onemind/rollback", json={"version": 9}, headers=ADMIN
    )
    assert missing.status_code == 404
    for bad in ({"version": "1"}, {"version": 0}, {}, {"version": True}):
        response = await client.post("/v1/admin/apps/onemind/rollback", json=bad, headers=ADMIN)
        assert response.status_code == 400, bad
    wrong_method = await client.delete(CONFIG, headers=ADMIN)
    assert wrong_method.status_code == 405


async def test_a_turn_past_the_model_call_limit_ends_with_an_error_part(make_client) -> None:
    model = ScriptedLlm(
        script=[call("advance_stage", next_stage="stage_2_integration", summary="x"), "never"]
    )
    client, _ = make_client(model=model, admin_users=["root"])
    assert (await _put(client, {"limits": {"max_llm_calls": 1}})).status_code == 200
    parts = await _turn(client)
    errors = of_type(parts, "error")
    assert errors and "more than 1 model calls" in errors[0]["errorText"]
    assert len(model.requests) == 1
