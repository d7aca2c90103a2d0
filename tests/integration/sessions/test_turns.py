"""Turn semantics of our stores: one atomic commit, leases, a bounded window, outbox, HITL."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import pytest
from google.adk import Agent, Runner
from google.adk.events import Event
from google.adk.tools import LongRunningFunctionTool
from google.genai import types

from confidant.errors import SessionBusyError, StaleTurnError
from confidant.ports import JobRecord, MemoryRecord
from confidant.sessions.records import SessionKey, TailPolicy, TurnWrite
from confidant.sessions.service import ConfidantSessionService
from tests.integration.sessions.conftest import SMALL_TAIL
from tests.support.scripted_model import ScriptedLlm, call


def _event(text: str, author: str = "user", **extra) -> str:
    return Event(
        author=author,
        invocation_id="i",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        **extra,
    ).model_dump_json(exclude_none=True)


def _runner(service: ConfidantSessionService, model: ScriptedLlm, tools=()) -> Runner:  # type: ignore[no-untyped-def]
    return Runner(
        agent=Agent(name="coach", model=model, tools=list(tools)),
        app_name="turns",
        session_service=service,
        auto_create_session=True,
    )


async def _run(runner: Runner, key: SessionKey, text: str | types.Content) -> list[Event]:
    message = types.UserContent(text) if isinstance(text, str) else text
    return [
        e
        async for e in runner.run_async(
            user_id=key.user_id, session_id=key.session_id, new_message=message
        )
    ]


async def test_a_turn_is_one_commit_and_a_failed_turn_leaves_nothing(store) -> None:
    service = ConfidantSessionService(store)
    key = SessionKey("turn-user", "turns", "atomic")
    async with service.turn(key, ttl_s=60) as turn:
        await _run(_runner(service, ScriptedLlm(script=["first reply"])), key, "hello")
        # Nothing is visible before the commit.
        assert (await store.load(key)).record.tail == []
        await turn.commit()
    stored = await store.load(key)
    assert stored.record.revision == 1
    assert len(stored.record.tail) == 2

    with pytest.raises(RuntimeError):
        async with service.turn(key, ttl_s=60):
            await _run(_runner(service, ScriptedLlm(script=["second reply"])), key, "again")
            raise RuntimeError("crash before the commit")
    after = await store.load(key)
    assert after.record.revision == 1
    assert [json.loads(e["json"])["content"]["parts"][0]["text"] for e in after.record.tail] == [
        "hello",
        "first reply",
    ]
    assert after.record.lease_holder is None  # released, so the next turn may run


async def test_a_running_turn_holds_the_session(store) -> None:
    service = ConfidantSessionService(store)
    key = SessionKey("turn-user", "turns", "busy")
    async with service.turn(key, ttl_s=60) as turn:
        with pytest.raises(SessionBusyError):
            async with service.turn(key, ttl_s=60):
                pass
        await turn.commit()
    async with service.turn(key, ttl_s=60) as turn:  # free again once committed
        await turn.commit()


async def test_an_expired_lease_is_taken_over_and_the_old_turn_cannot_commit(store) -> None:
    key = SessionKey("turn-user", "turns", "expired")
    now = [1000.0]
    service = ConfidantSessionService(store, clock=lambda: now[0])
    async with service.turn(key, ttl_s=10) as slow:
        slow.buffer(Event.model_validate_json(_event("slow")))
        now[0] += 11
        async with service.turn(key, ttl_s=10) as fast:
            fast.buffer(Event.model_validate_json(_event("fast")))
            await fast.commit()
        with pytest.raises(StaleTurnError):
            await slow.commit()
    texts = [
        json.loads(e["json"])["content"]["parts"][0]["text"]
        for e in (await store.load(key)).record.tail
    ]
    assert texts == ["fast"]


async def test_tail_stays_bounded_and_pages_return_every_event_in_order(store) -> None:
    key = SessionKey("turn-user", "turns", "long")
    service = ConfidantSessionService(store)
    for turn_no in range(30):
        async with service.turn(key, ttl_s=60) as turn:
            turn.buffer(Event.model_validate_json(_event(f"q{turn_no}")))
            turn.buffer(Event.model_validate_json(_event(f"a{turn_no}", author="coach")))
            await turn.commit()
    loaded = await store.load(key)
    assert len(loaded.record.tail) <= SMALL_TAIL.window + SMALL_TAIL.flush_batch
    session = await service.get_session(app_name="turns", user_id="turn-user", session_id="long")
    assert session.events[-1].content.parts[0].text == "a29"

    seen, after = [], None
    while True:
        page = await store.read_events(key, after_seq=after, limit=7)
        seen.extend(page.events)
        if page.next_after_seq is None:
            break
        after = page.next_after_seq
    assert [e["seq"] for e in seen] == list(range(60))
    assert json.loads(seen[0]["json"])["content"]["parts"][0]["text"] == "q0"


async def test_a_pending_long_running_call_is_never_cut_off(store) -> None:
    """Many turns after a paused call, the resume still finds it in the window."""
    key = SessionKey("turn-user", "turns", "hitl")
    service = ConfidantSessionService(store)

    def ask_human(question: str) -> None:
        """Ask a human; the answer arrives later."""
        return None

    async with service.turn(key, ttl_s=60) as turn:
        events = await _run(
            _runner(
                service,
                ScriptedLlm(script=[call("ask_human", question="ok?")]),
                [LongRunningFunctionTool(ask_human)],
            ),
            key,
            "start",
        )
        await turn.commit()
    call_id = next(iter(events[-1].long_running_tool_ids))
    for n in range(12):  # enough traffic to spill the tail several times over
        async with service.turn(key, ttl_s=60) as turn:
            turn.buffer(Event.model_validate_json(_event(f"side note {n}")))
            await turn.commit()
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call_id, name="ask_human", response={"answer": "yes"}
                )
            )
        ],
    )
    async with service.turn(key, ttl_s=60) as turn:
        resumed = await _run(
            _runner(
                service,
                ScriptedLlm(script=["approved, continuing"]),
                [LongRunningFunctionTool(ask_human)],
            ),
            key,
            answer,
        )
        await turn.commit()
    assert resumed[-1].content.parts[0].text == "approved, continuing"


async def test_outbox_jobs_and_memories_land_with_the_turn(store) -> None:
    key = SessionKey("turn-user", "turns", "outbox")
    service = ConfidantSessionService(store)
    now = datetime.now(UTC)
    job = JobRecord(
        job_id="job-1",
        kind="summary",
        user_id=key.user_id,
        app=key.app,
        session_id=key.session_id,
        turn=1,
        created_at=now,
    )
    memory = MemoryRecord(
        id="m-1",
        user_id=key.user_id,
        app=key.app,
        kind="integration_crystal",
        text="insight",
        created_at=now,
    )
    async with service.turn(key, ttl_s=60) as turn:
        turn.memories.append(memory)
        await turn.commit(jobs=[job])
    assert [m.id for m in await store.list_memories(key.user_id)] == ["m-1"]

    # A turn that fails writes neither.
    with pytest.raises(RuntimeError):
        async with service.turn(key, ttl_s=60) as turn:
            turn.memories.append(memory.model_copy(update={"id": "m-2"}))
            raise RuntimeError("boom")
    assert [m.id for m in await store.list_memories(key.user_id)] == ["m-1"]


async def test_stale_direct_write_is_refused_while_a_turn_runs(store) -> None:
    key = SessionKey("turn-user", "turns", "direct")
    service = ConfidantSessionService(store)
    session = await service.create_session(
        app_name="turns", user_id="turn-user", session_id="direct"
    )
    async with service.turn(key, ttl_s=60) as turn:
        with pytest.raises(StaleTurnError):
            await store.commit(
                key, TurnWrite(expected_revision=0, events=[_event("sneaky")], now=service.clock())
            )
        await turn.commit()
    assert session.id == "direct"


async def test_delete_user_erases_everything(store) -> None:
    service = ConfidantSessionService(store)
    for sid in ("a", "b"):
        async with service.turn(SessionKey("leaver", "turns", sid), ttl_s=60) as turn:
            turn.buffer(Event.model_validate_json(_event("hi")))
            turn.memories.append(
                MemoryRecord(
                    id=f"mem-{sid}",
                    user_id="leaver",
                    app="turns",
                    kind="k",
                    text="t",
                    created_at=datetime.now(UTC),
                )
            )
            await turn.commit()
    async with service.turn(SessionKey("stayer", "turns", "a"), ttl_s=60) as turn:
        await turn.commit()
    assert await store.delete_user("leaver") > 0
    assert await store.list_sessions(app="turns", user_id="leaver") == []
    assert await store.list_memories("leaver") == []
    assert len(await store.list_sessions(app="turns", user_id="stayer")) == 1


async def test_event_cache_reuses_parsed_events_only_for_the_same_stored_session(store) -> None:
    service = ConfidantSessionService(store, event_cache_size=100)
    key = SessionKey("cache-user", "turns", "cached")
    async with service.turn(key, ttl_s=60) as turn:
        turn.buffer(Event.model_validate_json(_event("kept")))
        await turn.commit()
    async with service.turn(key, ttl_s=60) as first:
        await first.commit()
    async with service.turn(key, ttl_s=60) as second:
        assert second.session.events[0] is first.session.events[0]  # parsed once
        await second.commit()
    # A new session under the same id must never see the old one's events.
    await store.delete_session(key)
    async with service.turn(key, ttl_s=60) as turn:
        turn.buffer(Event.model_validate_json(_event("fresh")))
        await turn.commit()
    async with service.turn(key, ttl_s=60) as turn:
        assert [e.content.parts[0].text for e in turn.session.events] == ["fresh"]
        await turn.commit()


async def test_a_slow_turn_keeps_its_lease_and_a_dead_one_frees_the_session(store) -> None:
    service = ConfidantSessionService(store)
    key = SessionKey("turn-user", "turns", "heartbeat")
    async with service.turn(key, ttl_s=0.6) as turn:
        await asyncio.sleep(1.5)  # well past the ttl: the heartbeat renewed the lease
        with pytest.raises(SessionBusyError):
            await service.begin_turn(key, ttl_s=0.6)
        turn.buffer(Event.model_validate_json(_event("slow but kept")))
        await turn.commit()
    # A process that died mid-turn never renews: the session is free again after the ttl.
    await service.begin_turn(key, ttl_s=0.6)
    with pytest.raises(SessionBusyError):
        await service.begin_turn(key, ttl_s=0.6)
    await asyncio.sleep(0.8)
    async with service.turn(key, ttl_s=0.6) as turn:
        await turn.commit()
    texts = [
        json.loads(e["json"])["content"]["parts"][0]["text"]
        for e in (await store.load(key)).record.tail
    ]
    assert texts == ["slow but kept"]


async def test_old_tool_exchanges_leave_the_window_but_not_the_history(store) -> None:
    store.policy = TailPolicy(window=40, tool_invocations=2)  # a window that holds every turn
    service = ConfidantSessionService(store)
    key = SessionKey("turn-user", "turns", "tools")

    def add(a: int, b: int) -> dict:
        """Add two numbers."""
        return {"sum": a + b}

    for n in range(4):
        async with service.turn(key, ttl_s=60) as turn:
            model = ScriptedLlm(script=[call("add", a=n, b=1), f"sum is {n + 1}"])
            await _run(_runner(service, model, [add]), key, f"{n}+1?")
            await turn.commit()
    async with service.turn(key, ttl_s=60) as turn:
        model = ScriptedLlm(script=["noted"])
        await _run(_runner(service, model, [add]), key, "thanks")
        await turn.commit()
    seen = model.requests[0].contents
    calls = [p.function_call.args for c in seen for p in c.parts if p.function_call]
    texts = [p.text for c in seen for p in c.parts if p.text]
    assert calls == [{"a": 2, "b": 1}, {"a": 3, "b": 1}]  # the last two turns' exchanges
    assert [t for t in texts if t.startswith("sum is")] == [f"sum is {n}" for n in (1, 2, 3, 4)]
    page = await store.read_events(key, after_seq=None, limit=100)
    stored_calls = [e for e in page.events if '"function_call"' in e["json"]]
    assert len(stored_calls) == 4  # storage keeps every exchange


async def test_a_turn_on_a_deleted_session_commits_nothing(store) -> None:
    service = ConfidantSessionService(store)
    key = SessionKey("turn-user", "turns", "vanishing")
    async with service.turn(key, ttl_s=60) as turn:
        turn.buffer(Event.model_validate_json(_event("first")))
        await turn.commit()
    with pytest.raises(StaleTurnError):
        async with service.turn(key, ttl_s=60) as turn:
            turn.buffer(Event.model_validate_json(_event("into the void")))
            assert await store.delete_session(key)
            await turn.commit()
    assert await store.load(key) is None


async def test_a_turn_with_user_and_app_state_commits_them_together(store) -> None:
    service = ConfidantSessionService(store)
    key = SessionKey("turn-user", "turns", "scoped")
    delta = {"user:name": "Mei", "app:greeting": "hi", "mood": "calm"}
    async with service.turn(key, ttl_s=60) as turn:
        turn.buffer(Event.model_validate_json(_event("hello", actions={"state_delta": delta})))
        await turn.commit()
    loaded = await store.load(key)
    assert loaded.record.state == {"mood": "calm"}
    assert loaded.user_state == {"name": "Mei"}
    assert loaded.app_state["greeting"] == "hi"
    assert loaded.record.lease_holder is None
