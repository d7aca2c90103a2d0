"""Quotas and limits through the HTTP layer (issue 14 item 1): daily turns and tokens by tier,
429 with Retry-After, `GET /v1/me/usage`, rate limits by user and address, caps per turn, body
limits on every JSON endpoint, and a crisis message that no quota or limit ever refuses."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx
import pytest
from google.adk.models import LlmResponse
from google.genai import types

from confidant.profiles.ops import MergeOp
from confidant.quota.rate import RateLimiter, client_ip
from confidant.sessions.records import SessionKey
from tests.support.scripted_model import ScriptedLlm, call
from tests.support.sse import of_type, parse_frames, streamed_text

ALICE = {"X-User-Id": "alice"}
CRISIS = "I want to end my life tonight"


def _reply(text: str, tokens: int) -> LlmResponse:
    """A model answer that reports its token usage, as Gemini does."""
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=tokens - 10, candidates_token_count=10, total_token_count=tokens
        ),
        turn_complete=True,
    )


async def _chat(client: httpx.AsyncClient, message: str, session: str = "s1", **body):  # type: ignore[no-untyped-def]
    payload = {"message": message, "session_id": session, **body}
    return await client.post("/v1/chat", json=payload, headers=ALICE)


def _parts(response: httpx.Response) -> list[dict]:
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done
    return parts


async def _stored_events(runtime, session: str) -> int:  # type: ignore[no-untyped-def]
    loaded = await runtime.store.load(SessionKey("alice", "onemind", session))
    return 0 if loaded is None else loaded.record.next_seq


def _seconds_to_midnight_utc() -> float:
    now = datetime.now(UTC)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return 86400 - (now - midnight).total_seconds()


async def test_turns_past_the_daily_limit_get_429_with_retry_after_and_cost_nothing(
    make_client,
) -> None:
    model = ScriptedLlm(script=[_reply("one", 100), _reply("two", 100), "never"])
    client, runtime = make_client(model=model, tiers={"free": {"turns_per_day": 2}})
    for text in ("first", "second"):
        assert of_type(_parts(await _chat(client, text)), "finish")

    refused = await _chat(client, "third")
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "quota_exceeded" and "2 messages" in error["message"]
    retry_after = int(refused.headers["retry-after"])
    assert abs(retry_after - _seconds_to_midnight_utc()) < 5  # the reset: 00:00 UTC
    assert error["retry_after_s"] == retry_after
    assert len(model.requests) == 2  # no model call, no stored turn for the refused one
    assert await _stored_events(runtime, "s1") == 4
    assert (await _chat(client, "elsewhere", session="new")).status_code == 429
    sessions = (await client.get("/v1/sessions", headers=ALICE)).json()["sessions"]
    assert [s["id"] for s in sessions] == ["s1"]  # the refused turn left no session behind

    usage = (await client.get("/v1/me/usage", headers=ALICE)).json()
    assert usage["tier"] == "free"
    assert usage["limits"] == {"turns_per_day": 2, "tokens_per_day": None}
    assert usage["used"] == {"turns_per_day": 2, "tokens_per_day": 200}
    assert usage["remaining"] == {"turns_per_day": 0, "tokens_per_day": None}
    assert usage["resets_at"].endswith("T00:00:00Z")
    # Another user has a quota of their own.
    other = await client.post("/v1/chat", json={"message": "hi"}, headers={"X-User-Id": "bob"})
    assert other.status_code == 200


async def test_erasing_the_account_does_not_reset_the_days_quota(make_client) -> None:
    # DELETE /v1/me erases everything the user owns, but today's counters (counts, no content)
    # stay: otherwise an erase would be a free reset of the daily quota.
    client, _ = make_client(tiers={"free": {"turns_per_day": 1}})
    assert of_type(_parts(await _chat(client, "first")), "finish")
    assert (await _chat(client, "second")).status_code == 429
    erased = await client.delete("/v1/me", headers=ALICE)
    assert erased.status_code == 200 and erased.json()["deleted"]
    assert (await client.get("/v1/sessions", headers=ALICE)).json()["sessions"] == []
    refused = await _chat(client, "again", session="fresh")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "quota_exceeded"
    usage = (await client.get("/v1/me/usage", headers=ALICE)).json()
    assert usage["used"]["turns_per_day"] == 1


async def test_the_tier_comes_from_the_profile_and_json_replies_carry_the_429(make_client) -> None:
    tiers = {"free": {"turns_per_day": 0}, "plus": {"turns_per_day": 1, "tokens_per_day": 10}}
    client, runtime = make_client(tiers=tiers)
    refused = await client.post(
        "/v1/chat", json={"message": "hello"}, headers=ALICE | {"accept": "application/json"}
    )
    assert refused.status_code == 429 and refused.headers["retry-after"]
    await runtime.store.update_profile("alice", [MergeOp(("account",), {"tier": "plus"})])
    runtime.chat.quota._tier_cache.clear()  # the tier is cached a minute per instance
    usage = (await client.get("/v1/me/usage", headers=ALICE)).json()
    assert usage["tier"] == "plus" and usage["remaining"]["turns_per_day"] == 1
    assert (await _chat(client, "hello")).status_code == 200


async def test_a_token_cap_crossed_mid_reply_ends_the_stream_with_the_quota_code(
    make_client,
) -> None:
    model = ScriptedLlm(script=[_reply("a long answer", 700), _reply("another long answer", 500)])
    client, runtime = make_client(model=model, tiers={"free": {"tokens_per_day": 1000}})
    assert of_type(_parts(await _chat(client, "first")), "finish")
    assert await _stored_events(runtime, "s1") == 2

    parts = _parts(await _chat(client, "second"))
    assert of_type(parts, "finish") == []
    detail = of_type(parts, "data-error")[0]
    assert detail["data"]["code"] == "quota_exceeded" and detail["data"]["retryAfter"] > 0
    assert parts[-1]["type"] == "error" and "1000 model tokens" in parts[-1]["errorText"]
    assert await _stored_events(runtime, "s1") == 2  # the failed turn stored nothing
    # ...but the tokens the model used are charged (documented: a failed turn costs its tokens).
    usage = (await client.get("/v1/me/usage", headers=ALICE)).json()
    assert usage["used"] == {"turns_per_day": 2, "tokens_per_day": 1200}
    assert usage["remaining"]["tokens_per_day"] == 0

    refused = await _chat(client, "third")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "quota_exceeded"


async def test_a_crisis_message_past_the_quota_still_gets_the_helplines(make_client) -> None:
    model = ScriptedLlm(script=["ok"])
    client, _ = make_client(model=model, tiers={"free": {"turns_per_day": 1}})
    assert (await _chat(client, "hello")).status_code == 200
    assert (await _chat(client, "hello again")).status_code == 429

    parts = _parts(await _chat(client, CRISIS))
    kinds = [part["type"] for part in parts]
    assert kinds.index("data-crisis") < kinds.index("text-start")
    assert "988" in streamed_text(parts)
    assert len(model.requests) == 1  # the guard answered; no model call
    usage = (await client.get("/v1/me/usage", headers=ALICE)).json()
    assert usage["used"]["turns_per_day"] == 1  # admitted past the quota, not counted


async def test_rate_limits_refuse_with_retry_after_but_never_a_crisis_message(make_client) -> None:
    client, _ = make_client(rate_limit_user_per_min=1, rate_limit_user_burst=2)
    for _ in range(2):
        assert (await client.get("/v1/sessions", headers=ALICE)).status_code == 200
    refused = await client.get("/v1/sessions", headers=ALICE)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert 50 <= int(refused.headers["retry-after"]) <= 60
    assert (await _chat(client, "hello")).status_code == 429

    parts = _parts(await _chat(client, CRISIS, session="c1"))
    assert of_type(parts, "data-crisis")
    useChat = {"messages": [{"role": "user", "parts": [{"type": "text", "text": CRISIS}]}]}
    response = await client.post("/v1/chat", json=useChat | {"id": "c2"}, headers=ALICE)
    assert of_type(_parts(response), "data-crisis")
    # Another user is not limited by alice's rate.
    assert (await client.get("/v1/sessions", headers={"X-User-Id": "bob"})).status_code == 200


async def test_a_refused_message_too_long_to_be_a_chat_message_is_not_let_through(
    make_client,
) -> None:
    # The crisis check on a refused request must cost no more than a real message's: a body of
    # crisis words past the message limit (which the chat would refuse anyway) stays refused.
    client, _ = make_client(
        rate_limit_user_per_min=1, rate_limit_user_burst=1, max_message_chars=60
    )
    assert (await client.get("/v1/sessions", headers=ALICE)).status_code == 200
    flood = await _chat(client, " ".join([CRISIS] * 20), session="c1")
    assert flood.status_code == 429
    assert flood.json()["error"]["code"] == "rate_limited"
    assert of_type(_parts(await _chat(client, f"  {CRISIS}  ", session="c2")), "data-crisis")


async def test_only_chat_message_routes_let_a_crisis_message_past_the_rate_limit(
    make_client,
) -> None:
    # The bypass exists for a person in crisis writing to the coach, not to lift the limit off
    # any other POST whose body happens to carry a `message` field.
    client, _ = make_client(rate_limit_user_per_min=1, rate_limit_user_burst=1)
    assert (await client.get("/v1/sessions", headers=ALICE)).status_code == 200
    person = {"name": "Alex", "message": CRISIS}
    other_post = await client.post("/v1/relationship/persons", json=person, headers=ALICE)
    assert other_post.status_code == 429
    assert other_post.json()["error"]["code"] == "rate_limited"
    strategy = await client.post(
        "/v1/relationship/advise", json={"message": CRISIS, "session_id": "r1"}, headers=ALICE
    )
    assert of_type(_parts(strategy), "data-crisis")


async def test_past_the_rate_limit_only_a_messages_text_parts_are_read_for_crisis(
    make_client,
) -> None:
    # The chat answers the text parts alone, so only they may let a message past the limit:
    # crisis words in a non-text part (reasoning, a file's name) do not buy a turn.
    client, _ = make_client(rate_limit_user_per_min=1, rate_limit_user_burst=1)
    assert (await client.get("/v1/sessions", headers=ALICE)).status_code == 200
    smuggled = [
        {"type": "text", "text": "hello"},
        {"type": "reasoning", "text": CRISIS},
        {"type": "file", "mediaType": "text/plain", "url": "data:,x", "text": CRISIS},
    ]
    body = {"id": "p1", "messages": [{"role": "user", "parts": smuggled}]}
    refused = await client.post("/v1/chat", json=body, headers=ALICE)
    assert refused.status_code == 429
    split = [{"type": "text", "text": "I want to end "}, {"type": "text", "text": "my life"}]
    body = {"id": "p2", "messages": [{"role": "user", "parts": split}]}
    assert of_type(_parts(await client.post("/v1/chat", json=body, headers=ALICE)), "data-crisis")


async def test_the_address_limit_applies_before_identity(make_client) -> None:
    client, _ = make_client(rate_limit_ip_per_min=1, rate_limit_ip_burst=1)
    assert (await client.get("/v1/apps")).status_code == 200
    refused = await client.get("/v1/sessions")  # no identity: refused for the address first
    assert refused.status_code == 429 and refused.headers["retry-after"]
    assert (await client.get("/healthz")).status_code == 200  # liveness is never limited


def test_only_the_front_ends_forwarded_entry_is_trusted() -> None:
    spoofed = {"x-forwarded-for": "6.6.6.6, 203.0.113.7"}
    assert client_ip(spoofed, "10.0.0.1", behind_google=True, hops=1) == "203.0.113.7"
    lb = {"x-forwarded-for": "6.6.6.6, 203.0.113.7, 34.1.2.3"}
    assert client_ip(lb, "10.0.0.1", behind_google=True, hops=2) == "203.0.113.7"
    assert client_ip(spoofed, "127.0.0.1", behind_google=False, hops=1) == "127.0.0.1"
    assert client_ip({}, "10.0.0.1", behind_google=True, hops=1) == "10.0.0.1"


def test_a_bucket_refills_at_its_rate() -> None:
    now = [0.0]
    bucket = RateLimiter(per_minute=60, burst=2, clock=lambda: now[0])
    assert bucket.take("k") is None and bucket.take("k") is None
    assert bucket.take("k") == 1
    now[0] = 1.0
    assert bucket.take("k") is None and bucket.take("k") == 1
    assert RateLimiter(per_minute=0, burst=1).take("k") is None  # 0 = off


@pytest.mark.parametrize("where", ["platform", "app"])
async def test_a_turn_past_the_tool_call_cap_ends_and_stores_nothing(make_client, where) -> None:
    advance = call("advance_stage", next_stage="stage_2_integration", summary="x")
    model = ScriptedLlm(script=[[advance, advance], "never"])
    settings = {"max_tool_calls_per_turn": 1} if where == "platform" else {}
    client, runtime = make_client(model=model, admin_users=["root"], **settings)
    if where == "app":
        limits = {"limits": {"max_tool_calls": 1}}
        put = await client.put(
            "/v1/admin/apps/onemind/config", json=limits, headers={"X-User-Id": "root"}
        )
        assert put.status_code == 200
    parts = _parts(await _chat(client, "I feel stuck", session="t1"))
    assert parts[-1]["type"] == "error"
    assert "more than 1 tool calls" in parts[-1]["errorText"]
    assert of_type(parts, "tool-output-available") == []  # the calls never ran
    assert len(model.requests) == 1
    assert await _stored_events(runtime, "t1") == 0


async def test_an_app_config_lowers_but_never_raises_the_model_call_cap(make_client) -> None:
    advance = call("advance_stage", next_stage="stage_2_integration", summary="x")
    model = ScriptedLlm(script=[advance, "never"])
    client, _ = make_client(model=model, admin_users=["root"], max_llm_calls_per_turn=1)
    limits = {"limits": {"max_llm_calls": 8}}
    put = await client.put(
        "/v1/admin/apps/onemind/config", json=limits, headers={"X-User-Id": "root"}
    )
    assert put.status_code == 200
    parts = _parts(await _chat(client, "I feel stuck"))
    assert "more than 1 model calls" in parts[-1]["errorText"]
    assert len(model.requests) == 1


async def test_every_json_endpoint_refuses_a_body_over_its_limit(make_client) -> None:
    client, _ = make_client(admin_users=["alice"], max_body_bytes=10_000)
    big = {"message": "x", "padding": "y" * 2_000_000}
    endpoints = [
        ("POST", "/v1/chat"),
        ("PATCH", "/v1/me/profile"),
        ("POST", "/v1/relationship/analyze"),
        ("POST", "/v1/relationship/persons"),
        ("PUT", "/v1/relationship/persons/p1"),
        ("PUT", "/v1/relationship/self-profile"),
        ("PUT", "/v1/admin/apps/onemind/config"),
        ("POST", "/v1/admin/apps/onemind/rollback"),
    ]
    for method, path in endpoints:
        response = await client.request(method, path, json=big, headers=ALICE)
        assert response.status_code == 413, (method, path, response.text)
        assert response.json()["error"]["code"] == "payload_too_large"


async def test_a_message_over_the_length_limit_is_a_400(make_client) -> None:
    client, _ = make_client(max_message_chars=100)
    response = await _chat(client, "x" * 101)
    assert response.status_code == 400 and "at most 100" in response.json()["error"]["message"]


async def test_a_turn_refused_as_busy_is_taken_back_from_the_count(make_client) -> None:
    release = asyncio.Event()

    async def slow(_request):  # type: ignore[no-untyped-def]
        await release.wait()
        return "finally"

    client, runtime = make_client(model=ScriptedLlm(script=[slow]))
    first = asyncio.create_task(_chat(client, "one", session="busy"))
    for _ in range(200):  # until the first turn holds the lease
        loaded = await runtime.store.load(SessionKey("alice", "onemind", "busy"))
        if loaded and loaded.record.lease_holder:
            break
        await asyncio.sleep(0.01)
    assert (await _chat(client, "two", session="busy")).status_code == 409
    release.set()
    assert (await first).status_code == 200
    usage = (await client.get("/v1/me/usage", headers=ALICE)).json()
    assert usage["used"]["turns_per_day"] == 1


async def test_a_replayed_resend_is_counted_once_even_past_the_quota(make_client) -> None:
    model = ScriptedLlm(script=[_reply("first reply", 100), _reply("second reply", 100)])
    client, _ = make_client(model=model, tiers={"free": {"turns_per_day": 2}})
    sent = _parts(await _chat(client, "hello there", message_id="m-1"))
    assert streamed_text(sent) == "first reply"

    resent = _parts(await _chat(client, "hello there", message_id="m-1"))
    assert of_type(resent, "data-replay") and streamed_text(resent) == "first reply"
    usage = (await client.get("/v1/me/usage", headers=ALICE)).json()
    assert usage["used"] == {"turns_per_day": 1, "tokens_per_day": 100}  # counted once

    assert streamed_text(_parts(await _chat(client, "and another", message_id="m-2")))
    # The quota is used up; a resend of a stored message still gets its reply, uncounted...
    again = _parts(await _chat(client, "hello there", message_id="m-1"))
    assert of_type(again, "data-replay") and streamed_text(again) == "first reply"
    # ...while a new message is refused.
    refused = await _chat(client, "a third", message_id="m-3")
    assert refused.status_code == 429, refused.text
    assert len(model.requests) == 2
    usage = (await client.get("/v1/me/usage", headers=ALICE)).json()
    assert usage["used"] == {"turns_per_day": 2, "tokens_per_day": 200}
