"""POST /v1/chat and the session routes, through HTTP, on the embedded store."""

from __future__ import annotations

import asyncio
import json
import logging

import httpx
import pytest
from google.genai import errors as genai_errors

from confidant.models.retry import RetryingLlm
from confidant.observability.logs import CloudLoggingFormatter
from confidant.observability.stream_errors import STREAM_ERROR_EVENT
from confidant.sessions.records import SessionKey
from tests.support.scripted_model import ScriptedLlm
from tests.support.sse import of_type, parse_frames, streamed_text

ALICE = {"X-User-Id": "alice"}
BOB = {"X-User-Id": "bob"}


def _rate_limited() -> genai_errors.ClientError:
    return genai_errors.ClientError(
        429, {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}
    )


async def _chat(client: httpx.AsyncClient, body: dict, headers=ALICE):  # type: ignore[no-untyped-def]
    response = await client.post("/v1/chat", json=body, headers=headers)
    return response


async def test_a_reply_streams_as_the_ai_sdk_ui_message_stream(make_client) -> None:
    client, _ = make_client()
    response = await _chat(client, {"message": "I keep putting off my thesis", "session_id": "s1"})
    assert response.status_code == 200
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["content-type"].startswith("text/event-stream")
    parts, done = parse_frames(response.text)
    assert done
    kinds = [p["type"] for p in parts]
    assert kinds[0] == "start" and kinds[-1] == "finish"
    assert kinds.index("text-start") < kinds.index("text-delta") < kinds.index("text-end")
    assert of_type(parts, "data-session")[0]["data"]["sessionId"] == "s1"
    assert "thesis" in streamed_text(parts)


async def test_use_chat_default_body_is_accepted(make_client) -> None:
    client, runtime = make_client()
    body = {
        "id": "chat-42",
        "trigger": "submit-message",
        "messages": [
            {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "earlier"}]},
            {"id": "m2", "role": "assistant", "parts": [{"type": "text", "text": "reply"}]},
            {"id": "m3", "role": "user", "parts": [{"type": "text", "text": "我总是拖延论文"}]},
        ],
    }
    parts, _ = parse_frames((await _chat(client, body)).text)
    assert of_type(parts, "data-session")[0]["data"]["sessionId"] == "chat-42"
    stored = await runtime.store.load(SessionKey("alice", "onemind", "chat-42"))
    first = json.loads(stored.record.tail[0]["json"])
    assert first["content"]["parts"][0]["text"] == "我总是拖延论文"
    assert stored.record.state["locale"] == "zh"  # detected from the message


async def test_accept_json_returns_the_whole_reply(make_client) -> None:
    client, _ = make_client()
    response = await client.post(
        "/v1/chat",
        json={"message": "hello, I feel torn", "session_id": "js"},
        headers={**ALICE, "accept": "application/json"},
    )
    assert response.status_code == 200
    body = response.json()
    assert body["session_id"] == "js"
    assert body["text"]
    assert body["app"] == "onemind"


async def test_bad_input_gets_a_reason_and_stores_nothing(make_client) -> None:
    client, runtime = make_client(max_message_chars=50, max_body_bytes=2000)
    cases = [
        (b"{not json", 400),
        (json.dumps({"message": "   "}).encode(), 400),
        (json.dumps({"message": "x" * 51}).encode(), 400),
        (json.dumps({"message": "hi", "session_id": "../etc"}).encode(), 400),
        (json.dumps({"message": "hi", "app": "nope"}).encode(), 400),
        (json.dumps({"message": "hi", "locale": "fr"}).encode(), 400),
        (json.dumps({"messages": []}).encode(), 400),
        (json.dumps({"message": "y" * 3000}).encode(), 413),
        (b"[" * 1500, 400),  # deeper than the parser goes: the client's error, not a 500
    ]
    for raw, status in cases:
        response = await client.post(
            "/v1/chat", content=raw, headers={**ALICE, "content-type": "application/json"}
        )
        assert response.status_code == status, raw
        assert response.json()["error"]["message"]
    assert await runtime.store.list_sessions(app="onemind", user_id="alice") == []


async def test_identity_is_required(make_client) -> None:
    client, _ = make_client()
    response = await client.post("/v1/chat", json={"message": "hi"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"


async def test_no_user_can_reach_another_users_session(make_client) -> None:
    client, runtime = make_client()
    await _chat(client, {"message": "my private worry", "session_id": "secret"})
    assert (await client.get("/v1/sessions/secret", headers=BOB)).status_code == 404
    assert (await client.delete("/v1/sessions/secret", headers=BOB)).status_code == 404
    assert (await client.get("/v1/sessions", headers=BOB)).json()["sessions"] == []
    # Bob writing to "secret" gets his own session; Alice's is untouched.
    await _chat(client, {"message": "hello", "session_id": "secret"}, headers=BOB)
    alice = await client.get("/v1/sessions/secret", headers=ALICE)
    texts = [e["content"]["parts"][0].get("text") for e in alice.json()["events"]]
    assert texts[0] == "my private worry"
    assert "hello" not in texts
    assert (await runtime.store.load(SessionKey("bob", "onemind", "secret"))) is not None


async def test_sessions_list_page_and_delete(make_client) -> None:
    client, _ = make_client()
    for text in ("first thought", "second thought", "third thought"):
        await _chat(client, {"message": text, "session_id": "paged"})
    await _chat(client, {"message": "other", "session_id": "other"})
    listed = (await client.get("/v1/sessions", headers=ALICE)).json()["sessions"]
    assert {s["id"] for s in listed} == {"paged", "other"}

    events, token = [], None
    while True:
        params = {"page_size": "2"} | ({"page_token": token} if token else {})
        page = (await client.get("/v1/sessions/paged", params=params, headers=ALICE)).json()
        events += page["events"]
        token = page["next_page_token"]
        if token is None:
            break
    assert [e["seq"] for e in events] == list(range(len(events)))
    user_texts = [e["content"]["parts"][0]["text"] for e in events if e["author"] == "user"]
    assert user_texts == ["first thought", "second thought", "third thought"]
    assert (
        await client.get("/v1/sessions/paged", params={"page_size": "0"}, headers=ALICE)
    ).status_code == 400

    assert (await client.delete("/v1/sessions/paged", headers=ALICE)).status_code == 204
    assert (await client.get("/v1/sessions/paged", headers=ALICE)).status_code == 404


async def test_delete_me_erases_sessions_and_memories(make_client) -> None:
    client, runtime = make_client()
    for text in (
        "I procrastinate",
        "I fear judgment",
        "ok",
        "write one page",
        "I learned to start small",
    ):
        await _chat(client, {"message": text, "session_id": "full"})
    assert await runtime.store.list_memories("alice")  # a crystal was written in stage 4
    await _chat(client, {"message": "bob's", "session_id": "b"}, headers=BOB)
    response = await client.delete("/v1/me", headers=ALICE)
    assert response.status_code == 200
    assert await runtime.store.list_sessions(app="onemind", user_id="alice") == []
    assert await runtime.store.list_memories("alice") == []
    assert len(await runtime.store.list_sessions(app="onemind", user_id="bob")) == 1


async def test_a_crisis_message_never_reaches_the_model(make_client) -> None:
    model = ScriptedLlm(script=["should never be said"])
    client, runtime = make_client(model=model)
    parts, done = parse_frames(
        (await _chat(client, {"message": "I want to kill myself", "session_id": "c"})).text
    )
    assert done and parts[-1]["type"] == "finish"
    assert "988" in streamed_text(parts)
    assert model.requests == []
    parts, _ = parse_frames(
        (await _chat(client, {"message": "我不想活了", "session_id": "c2"})).text
    )
    assert "400-161-9995" in streamed_text(parts) or "010-82951332" in streamed_text(parts)
    assert model.requests == []
    stored = await runtime.store.load(SessionKey("alice", "onemind", "c"))
    assert len(stored.record.tail) == 2  # the message and the fixed reply are kept


async def test_transient_model_errors_are_retried_and_shown(make_client) -> None:
    inner = ScriptedLlm(script=[_rate_limited(), _rate_limited(), "here with you"])
    model = RetryingLlm(inner=inner, delays=[0.01, 0.02, 0.04])
    client, runtime = make_client(model=model)
    parts, done = parse_frames((await _chat(client, {"message": "hi", "session_id": "r"})).text)
    assert done
    retries = of_type(parts, "data-retry")
    assert [r["data"]["attempt"] for r in retries] == [1, 2]
    assert [r["data"]["delay_s"] for r in retries] == [0.01, 0.02]
    assert retries[0]["data"]["status_code"] == 429
    assert streamed_text(parts) == "here with you"
    stored = await runtime.store.load(SessionKey("alice", "onemind", "r"))
    user_events = [e for e in stored.record.tail if json.loads(e["json"])["author"] == "user"]
    assert len(user_events) == 1  # the user message is stored once


async def test_exhausted_retries_end_with_an_error_and_leave_the_session_as_it_was(
    make_client,
) -> None:
    inner = ScriptedLlm(script=["first answer", *[_rate_limited()] * 4])
    model = RetryingLlm(inner=inner, delays=[0.01, 0.01, 0.01])
    client, runtime = make_client(model=model)
    await _chat(client, {"message": "first", "session_id": "x"})
    before = await runtime.store.load(SessionKey("alice", "onemind", "x"))
    response = await _chat(client, {"message": "second", "session_id": "x"})
    assert response.status_code == 200  # the stream had started
    parts, done = parse_frames(response.text)
    assert done
    assert parts[-1]["type"] == "error"
    assert parts[-1]["code"] == "model_unavailable"
    assert "model is unavailable" in parts[-1]["errorText"]
    assert "not saved" in parts[-1]["errorText"]
    assert len(of_type(parts, "data-retry")) == 3
    after = await runtime.store.load(SessionKey("alice", "onemind", "x"))
    assert after.record.tail == before.record.tail
    assert after.record.revision == before.record.revision
    assert after.record.lease_holder is None
    # ...and the session takes the next message normally.
    inner.script.append("back again")
    parts, _ = parse_frames((await _chat(client, {"message": "third", "session_id": "x"})).text)
    assert streamed_text(parts) == "back again"


async def test_second_message_on_a_busy_session_gets_409(make_client) -> None:
    release = asyncio.Event()

    async def slow(_request):  # type: ignore[no-untyped-def]
        await release.wait()
        return "finally"

    model = ScriptedLlm(script=[slow, "second"])
    client, runtime = make_client(model=model)

    async def first_message():  # type: ignore[no-untyped-def]
        return await _chat(client, {"message": "one", "session_id": "busy"})

    first = asyncio.create_task(first_message())
    for _ in range(200):
        loaded = await runtime.store.load(SessionKey("alice", "onemind", "busy"))
        if loaded and loaded.record.lease_holder:
            break
        await asyncio.sleep(0.01)
    second = await _chat(client, {"message": "two", "session_id": "busy"})
    assert second.status_code == 409
    assert second.json()["error"]["code"] == "session_busy"
    release.set()
    assert (await first).status_code == 200


async def test_cors_lets_an_allowed_web_app_call_the_api(make_client) -> None:
    client, _ = make_client(cors_origins=["https://app.example"])
    preflight = await client.options(
        "/v1/chat",
        headers={"origin": "https://app.example", "access-control-request-method": "POST"},
    )
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == "https://app.example"
    assert "x-user-id" in preflight.headers["access-control-allow-headers"]
    response = await client.post(
        "/v1/chat", json={"message": "hi"}, headers={**ALICE, "origin": "https://app.example"}
    )
    assert response.headers["access-control-allow-origin"] == "https://app.example"
    assert "x-vercel-ai-ui-message-stream" in response.headers["access-control-expose-headers"]
    other = await client.post(
        "/v1/chat", json={"message": "hi"}, headers={**ALICE, "origin": "https://evil.example"}
    )
    assert "access-control-allow-origin" not in other.headers


async def test_an_error_part_inside_a_200_stream_is_logged_for_the_alert(
    make_client, caplog: pytest.LogCaptureFixture
) -> None:
    # The request log says 200 for a stream that then failed: the alert on failed replies
    # (infra monitoring.tf, chat_stream_errors) counts these structured lines instead.
    inner = ScriptedLlm(script=[_rate_limited()] * 2)
    client, _ = make_client(model=RetryingLlm(inner=inner, delays=[0.01]))
    with caplog.at_level(logging.INFO, logger="confidant"):
        response = await _chat(client, {"message": "hi", "session_id": "failing"})
    parts, _ = parse_frames(response.text)
    assert response.status_code == 200 and parts[-1]["type"] == "error"

    (line,) = [r for r in caplog.records if getattr(r, "event", None) == STREAM_ERROR_EVENT]
    assert line.levelno == logging.ERROR
    entry = json.loads(CloudLoggingFormatter("p").format(line))
    assert entry["error_code"] == "model_unavailable" and entry["error_status"] == 503
    assert "hi" not in entry["message"]  # no message text in logs
