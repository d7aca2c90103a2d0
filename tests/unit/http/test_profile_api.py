"""The unified profile over HTTP: GET/PATCH /v1/me/profile, reports, DELETE /v1/me, and
profile writes committed with their turn (embedded store, offline lifecoach script)."""

from __future__ import annotations

import httpx

from tests.support.scripted_model import ScriptedLlm, call
from tests.support.sse import of_type, parse_frames, streamed_text

ANN = {"X-User-Id": "ann"}


async def _say(client: httpx.AsyncClient, message: str, sid: str = "s1", **extra):  # type: ignore[no-untyped-def]
    body = {"app": "lifecoach", "session_id": sid, "message": message, **extra}
    response = await client.post("/v1/chat", json=body, headers=ANN)
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done
    return parts


async def test_get_returns_the_typed_profile_and_patch_merges_user_fields(make_client) -> None:
    client, _ = make_client()
    empty = await client.get("/v1/me/profile", headers=ANN)
    assert empty.status_code == 200
    assert empty.json()["profile"]["preferences"]["subscribed_skills"] == []
    patched = await client.patch(
        "/v1/me/profile",
        json={
            "preferences": {"language": "zh", "push_settings": {"daily": True}},
            "account": {"display_name": "Ann"},
        },
        headers=ANN,
    )
    assert patched.status_code == 200
    again = await client.patch(
        "/v1/me/profile", json={"preferences": {"timezone": "Asia/Shanghai"}}, headers=ANN
    )
    prefs = again.json()["profile"]["preferences"]
    assert prefs["language"] == "zh" and prefs["timezone"] == "Asia/Shanghai"
    assert prefs["push_settings"] == {"daily": True}
    assert (await client.get("/v1/me/profile", headers=ANN)).json()["profile"]["account"][
        "display_name"
    ] == "Ann"


async def test_patch_refuses_fields_a_user_may_not_change(make_client) -> None:
    client, _ = make_client()
    for body in (
        {"account": {"tier": "pro"}},
        {"skills": {"lifecoach": {}}},
        {"preferences": {"language": "fr"}},
        {},
        [],
    ):
        response = await client.patch("/v1/me/profile", json=body, headers=ANN)
        assert response.status_code == 400, body
        assert response.json()["error"]["code"] == "bad_request"
    assert (await client.put("/v1/me/profile", json={}, headers=ANN)).status_code == 405


async def test_state_tools_write_the_profile_with_the_turn_and_delete_me_removes_it(
    make_client,
) -> None:
    client, runtime = make_client()
    parts = await _say(client, "journal: walked by the river")
    assert [p["toolName"] for p in of_type(parts, "tool-input-available")] == ["append_to_list"]
    await _say(client, "goal: run a 10k", sid="s2", skill="lifecoach")
    profile = (await client.get("/v1/me/profile", headers=ANN)).json()["profile"]
    coach = profile["skills"]["lifecoach"]
    assert coach["journal"][0]["text"] == "walked by the river"
    assert coach["goals"] == {"main": "run a 10k"}
    assert "updated_at" in coach["_meta"]
    deleted = await client.delete("/v1/me", headers=ANN)
    assert deleted.status_code == 200
    assert await runtime.store.load_profile("ann") == {}


async def test_a_failed_turn_writes_nothing_to_the_profile(make_client) -> None:
    model = ScriptedLlm(
        script=[call("write_state", section="goals", data={"x": 1}), RuntimeError("boom")]
    )
    client, runtime = make_client(model=model)
    parts = await _say(client, "save my goal")
    assert of_type(parts, "error")
    assert await runtime.store.load_profile("ann") == {}


async def test_unknown_skills_and_fields_are_refused_before_the_turn(make_client) -> None:
    client, _ = make_client()
    for extra in ({"skill": "astrology"}, {"protocol_action": {"action": "dance"}}, {"mood": 1}):
        body = {"app": "lifecoach", "message": "hi", **extra}
        response = await client.post("/v1/chat", json=body, headers=ANN)
        assert response.status_code == 400, extra
        assert "invalid lifecoach fields" in response.json()["error"]["message"]


async def test_the_invitation_button_starts_the_protocol_through_the_body_field(
    make_client,
) -> None:
    client, _ = make_client()
    invite = await _say(client, "could we do a weekly review?")
    [card] = of_type(invite, "data-protocol-invitation")
    assert card["data"]["protocol_id"] == "weekly_review"
    started = await _say(
        client, "Start", protocol_action={"protocol_id": "weekly_review", "action": "start"}
    )
    [progress] = of_type(started, "data-protocol-progress")
    assert progress["data"]["step"] == 1 and progress["data"]["phase"] == "look_back"
    # The step opens with its question; the next message answers it.
    answered = await _say(client, "I shipped the beta")
    assert [p["data"]["step"] for p in of_type(answered, "data-protocol-progress")] == [1, 2]
    assert "Step 2 of 4" in streamed_text(answered)


async def test_the_json_reply_carries_progress_and_custom_parts(make_client) -> None:
    client, _ = make_client()
    response = await client.post(
        "/v1/chat",
        json={"app": "lifecoach", "session_id": "j", "message": "start the dankoe reset"},
        headers=ANN | {"accept": "application/json"},
    )
    body = response.json()
    assert body["protocol-invitation"][0]["protocol_id"] == "dankoe"
    assert body["tool_calls"][0]["name"] == "show_protocol_invitation"


async def test_reports_are_markdown_downloads_and_404_before_completion(make_client) -> None:
    client, _ = make_client()
    missing = await client.get("/v1/me/reports/lifecoach/weekly_review", headers=ANN)
    assert missing.status_code == 404
    await _say(client, "Start", protocol_action={"protocol_id": "weekly_review", "action": "start"})
    for answer in ("shipped the beta", "ask for help sooner", "health", "run on Monday"):
        parts = await _say(client, answer)
    [completed] = of_type(parts, "data-protocol-completed")
    report = await client.get(completed["data"]["report_url"], headers=ANN)
    assert report.status_code == 200
    assert report.headers["content-type"].startswith("text/markdown")
    assert "## 4. First step" in report.text and "run on Monday" in report.text
