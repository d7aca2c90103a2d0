"""Double texting in one process: interrupt keeps the partial reply, enqueue keeps arrival order,
a queued message that waits too long leaves the line, and the strategy comes from the request,
else the app, else the deployment. (Two processes: tests/e2e/test_double_texting.py.)"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from agents import registry
from agents.deps import AgentDeps, TurnContext
from agents.registry import AppSpec, register
from confidant.bootstrap import Runtime
from confidant.chat.busy import QueueTimeoutError
from confidant.chat.requests import ChatRequest, parse_chat_request
from confidant.errors import SessionBusyError, StoreUnavailableError
from confidant.sessions.records import SessionKey
from tests.support.scripted_model import ScriptedLlm
from tests.support.sse import of_type, streamed_text

USER = "texter"
FAST_POLL = {"busy_poll_s": 0.02}


def _request(session_id: str, message: str, strategy: str | None = None, app: str | None = None):  # type: ignore[no-untyped-def]
    body: dict[str, Any] = {"session_id": session_id, "message": message}
    if strategy:
        body["multitask_strategy"] = strategy
    return parse_chat_request(
        body, default_app="onemind", default_locale="en", max_message_chars=8000, app=app
    )


async def _say(
    runtime: Runtime, request: ChatRequest, replying: asyncio.Event | None = None
) -> list[dict[str, Any]]:
    prepared = await runtime.chat.prepare(USER, request)
    parts = []
    async for part in prepared.stream():
        parts.append(part)
        if replying is not None and part["type"] == "text-delta":
            replying.set()
    return parts


async def _stored(runtime: Runtime, session_id: str, app: str = "onemind") -> list[dict]:
    page = await runtime.store.read_events(
        SessionKey(USER, app, session_id), after_seq=None, limit=500
    )
    return [json.loads(e["json"]) for e in page.events]


def _text(event: dict) -> str:
    parts = (event.get("content") or {}).get("parts") or []
    return "".join(p.get("text", "") for p in parts if not p.get("thought"))


def _messages(events: list[dict]) -> list[tuple[str, str, bool]]:
    """(role, text, interrupted) per message: a user event, then the agents' events after it."""
    messages: list[tuple[str, str, bool]] = []
    for event in events:
        if event["author"] == "user":
            messages.append(("user", _text(event), False))
            continue
        interrupted = bool((event.get("custom_metadata") or {}).get("interrupted"))
        if messages and messages[-1][0] == "assistant":
            _, text, was = messages[-1]
            messages[-1] = ("assistant", text + _text(event), was or interrupted)
        else:
            messages.append(("assistant", _text(event), interrupted))
    return messages


async def _until_in_line(runtime: Runtime, session_id: str, count: int) -> None:
    key = SessionKey(USER, "onemind", session_id)
    queue = runtime.chat.busy.queue  # type: ignore[union-attr]
    async with asyncio.timeout(10):
        while len(await queue.line(key, now=runtime.sessions.clock())) < count:
            await asyncio.sleep(0.01)


async def test_interrupt_stops_the_reply_keeps_its_partial_text_and_runs_the_new_message(
    make_client,
) -> None:
    _, runtime = make_client(offline_chunk_delay_ms=200, **FAST_POLL)
    replying = asyncio.Event()
    first = asyncio.create_task(
        _say(runtime, _request("cut", "I want to quit my job but I am scared"), replying)
    )
    await replying.wait()
    second = await _say(runtime, _request("cut", "Sorry, it is my studies", "interrupt"))
    cut = await first

    kinds = [p["type"] for p in cut]
    assert kinds[-3:] == ["text-end", "data-interrupted", "finish"]
    assert second[-1]["type"] == "finish" and streamed_text(second)
    messages = _messages(await _stored(runtime, "cut"))
    assert [(role, interrupted) for role, _, interrupted in messages] == [
        ("user", False),
        ("assistant", True),
        ("user", False),
        ("assistant", False),
    ]
    assert messages[0][1] == "I want to quit my job but I am scared"
    kept = messages[1][1]
    assert kept and kept == streamed_text(cut)  # exactly what the client saw, no more
    assert of_type(cut, "data-interrupted")[0]["data"]["kept"] == kept
    assert messages[2][1] == "Sorry, it is my studies"
    assert messages[3][1] == streamed_text(second)


async def test_enqueue_answers_every_message_whole_in_arrival_order(make_client) -> None:
    _, runtime = make_client(offline_chunk_delay_ms=100, **FAST_POLL)
    replying = asyncio.Event()
    first = asyncio.create_task(_say(runtime, _request("line", "one: I feel stuck"), replying))
    await replying.wait()
    second = asyncio.create_task(_say(runtime, _request("line", "two: at work", "enqueue")))
    await _until_in_line(runtime, "line", 1)
    third = asyncio.create_task(_say(runtime, _request("line", "three: every day", "enqueue")))
    replies = await asyncio.gather(first, second, third)

    assert all(parts[-1]["type"] == "finish" for parts in replies)
    assert not any(of_type(parts, "data-interrupted") for parts in replies)
    messages = _messages(await _stored(runtime, "line"))
    assert [m[:2] for m in messages] == [
        ("user", "one: I feel stuck"),
        ("assistant", streamed_text(replies[0])),
        ("user", "two: at work"),
        ("assistant", streamed_text(replies[1])),
        ("user", "three: every day"),
        ("assistant", streamed_text(replies[2])),
    ]


async def test_a_queued_message_that_waits_too_long_is_refused_and_leaves_the_line(
    make_client,
) -> None:
    _, runtime = make_client(offline_chunk_delay_ms=300, busy_wait_s=0.3, **FAST_POLL)
    replying = asyncio.Event()
    first = asyncio.create_task(_say(runtime, _request("slow", "I feel stuck"), replying))
    await replying.wait()
    with pytest.raises(QueueTimeoutError) as refused:
        await _say(runtime, _request("slow", "hello?", "enqueue"))
    assert refused.value.status == 409 and refused.value.code == "busy_timeout"
    assert "waited" in refused.value.message
    key = SessionKey(USER, "onemind", "slow")
    assert await runtime.chat.busy.queue.line(key, now=runtime.sessions.clock()) == []  # type: ignore[union-attr]
    assert (await first)[-1]["type"] == "finish"
    assert [m[0] for m in _messages(await _stored(runtime, "slow"))] == ["user", "assistant"]


async def test_an_interrupt_that_fails_after_taking_the_lease_leaves_the_session_free(
    make_client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store fails clearing the interrupt request, after the interrupting message took the
    # lease: that message gets its 503, and the session's next message is answered at once, not
    # refused until the lease expires.
    _, runtime = make_client(offline_chunk_delay_ms=200, lease_ttl_s=600.0, **FAST_POLL)

    async def store_down(key: SessionKey) -> None:
        raise StoreUnavailableError("the session store is not answering")

    monkeypatch.setattr(runtime.chat.busy.queue, "clear_interrupt", store_down)  # type: ignore[union-attr]
    replying = asyncio.Event()
    first = asyncio.create_task(_say(runtime, _request("flaky", "I want to quit my job"), replying))
    await replying.wait()
    with pytest.raises(StoreUnavailableError):
        await _say(runtime, _request("flaky", "Sorry, it is my studies", "interrupt"))
    assert (await first)[-1]["type"] == "finish"
    after = await _say(runtime, _request("flaky", "Are you still there?", "reject"))
    assert after[-1]["type"] == "finish" and streamed_text(after)


def _echo_root(deps: AgentDeps, turn: TurnContext) -> LlmAgent:
    return LlmAgent(name="queued_echo", model=deps.model, instruction="answer briefly")


@pytest.fixture
def queued_app() -> Iterator[AppSpec]:
    """An app whose messages queue by default, on a deployment that rejects."""
    spec = register(
        AppSpec(
            name="zz_queued_app",
            title="Queued app",
            description="messages on a busy session wait in line",
            build_root=_echo_root,
            busy_policy="enqueue",
        )
    )
    yield spec
    registry._APPS.pop(spec.name)


async def test_the_app_default_applies_unless_the_request_names_a_strategy(
    make_client, queued_app: AppSpec
) -> None:
    gate = asyncio.Event()

    async def held(_request: Any) -> str:
        await gate.wait()
        return "first reply"

    model = ScriptedLlm(script=[held, "second reply"])
    _, runtime = make_client(model=model, busy_policy="reject", **FAST_POLL)
    app = queued_app.name
    first = asyncio.create_task(_say(runtime, _request("app", "one", app=app)))
    while not model.requests:
        await asyncio.sleep(0.01)
    with pytest.raises(SessionBusyError) as refused:  # the request's own choice wins
        await _say(runtime, _request("app", "rejected", "reject", app=app))
    assert refused.value.code == "session_busy"
    second = asyncio.create_task(_say(runtime, _request("app", "two", app=app)))  # app: enqueue
    key = SessionKey(USER, app, "app")
    queue = runtime.chat.busy.queue  # type: ignore[union-attr]
    async with asyncio.timeout(10):
        while not await queue.line(key, now=runtime.sessions.clock()):
            await asyncio.sleep(0.01)
    gate.set()
    assert streamed_text(await first) == "first reply"
    assert streamed_text(await second) == "second reply"
    texts = [m[1] for m in _messages(await _stored(runtime, "app", app))]
    assert texts == ["one", "first reply", "two", "second reply"]


async def test_a_bad_strategy_is_a_400_that_stores_nothing(make_client) -> None:
    client, runtime = make_client()
    response = await client.post(
        "/v1/chat",
        json={"session_id": "bad", "message": "hi", "multitask_strategy": "rollback"},
        headers={"X-User-Id": USER},
    )
    assert response.status_code == 400
    assert "multitask_strategy" in response.json()["error"]["message"]
    assert await runtime.store.load(SessionKey(USER, "onemind", "bad")) is None
