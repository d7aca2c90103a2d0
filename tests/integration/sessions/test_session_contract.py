"""ADK's session-service contract, run against every backend (and ADK's in-memory service)."""

from __future__ import annotations

import pytest
from google.adk import Agent, Runner
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events import Event, EventActions
from google.genai import types

from tests.support.scripted_model import ScriptedLlm, call


def _text_event(author: str, text: str, delta: dict | None = None) -> Event:
    return Event(
        author=author,
        invocation_id="inv-1",
        content=types.Content(
            role="user" if author == "user" else "model", parts=[types.Part(text=text)]
        ),
        actions=EventActions(state_delta=delta or {}),
    )


async def test_create_splits_prefixed_state_and_drops_temp(session_service) -> None:
    session = await session_service.create_session(
        app_name="contract",
        user_id="u1",
        state={"app:flag": 1, "user:tier": "gold", "temp:scratch": 1, "k": "v"},
        session_id="s-create",
    )
    assert session.state == {"k": "v", "app:flag": 1, "user:tier": "gold"}
    loaded = await session_service.get_session(
        app_name="contract", user_id="u1", session_id="s-create"
    )
    assert loaded is not None
    assert loaded.state == {"k": "v", "app:flag": 1, "user:tier": "gold"}


async def test_duplicate_id_is_refused(session_service) -> None:
    await session_service.create_session(app_name="contract", user_id="u1", session_id="dup")
    with pytest.raises(AlreadyExistsError):
        await session_service.create_session(app_name="contract", user_id="u1", session_id="dup")


async def test_appended_events_and_state_round_trip(session_service) -> None:
    session = await session_service.create_session(app_name="contract", user_id="u2")
    await session_service.append_event(session, _text_event("user", "hello"))
    await session_service.append_event(
        session,
        _text_event(
            "coach", "hi there", {"stage": 2, "temp:x": "gone", "user:name": "Ann", "app:v": 3}
        ),
    )
    loaded = await session_service.get_session(
        app_name="contract", user_id="u2", session_id=session.id
    )
    assert loaded is not None
    assert [e.content.parts[0].text for e in loaded.events] == ["hello", "hi there"]
    assert loaded.state["stage"] == 2
    assert loaded.state["user:name"] == "Ann"
    assert loaded.state["app:v"] == 3
    assert "temp:x" not in loaded.state
    assert "temp:x" not in (loaded.events[1].actions.state_delta or {})


async def test_user_and_app_state_are_shared_across_sessions(session_service) -> None:
    first = await session_service.create_session(app_name="shared", user_id="u3")
    await session_service.append_event(
        first, _text_event("coach", "x", {"user:lang": "zh", "app:motd": "hi"})
    )
    second = await session_service.create_session(app_name="shared", user_id="u3")
    other_user = await session_service.create_session(app_name="shared", user_id="u4")
    assert second.state["user:lang"] == "zh"
    assert second.state["app:motd"] == "hi"
    assert "user:lang" not in other_user.state
    assert other_user.state["app:motd"] == "hi"


async def test_list_and_delete(session_service) -> None:
    a = await session_service.create_session(app_name="listing", user_id="u5", state={"n": 1})
    b = await session_service.create_session(app_name="listing", user_id="u5", state={"n": 2})
    await session_service.create_session(app_name="listing", user_id="u6")
    await session_service.append_event(a, _text_event("user", "hello"))
    listed = await session_service.list_sessions(app_name="listing", user_id="u5")
    assert {s.id for s in listed.sessions} == {a.id, b.id}
    assert all(s.events == [] for s in listed.sessions)
    await session_service.delete_session(app_name="listing", user_id="u5", session_id=a.id)
    assert (
        await session_service.get_session(app_name="listing", user_id="u5", session_id=a.id) is None
    )
    listed = await session_service.list_sessions(app_name="listing", user_id="u5")
    assert [s.id for s in listed.sessions] == [b.id]


async def test_runner_turn_with_tool_is_stored(session_service) -> None:
    def add(a: int, b: int) -> dict:
        """Add two numbers."""
        return {"sum": a + b}

    model = ScriptedLlm(script=[call("add", a=2, b=3), "sum is 5"])
    runner = Runner(
        agent=Agent(name="calc", model=model, tools=[add]),
        app_name="runner_app",
        session_service=session_service,
        auto_create_session=True,
    )
    events = [
        e
        async for e in runner.run_async(
            user_id="u7", session_id="rs", new_message=types.UserContent("2+3?")
        )
    ]
    assert events[-1].content.parts[0].text == "sum is 5"
    stored = await session_service.get_session(app_name="runner_app", user_id="u7", session_id="rs")
    assert stored is not None
    assert [e.author for e in stored.events] == ["user", "calc", "calc", "calc"]
    assert stored.events[2].content.parts[0].function_response.response == {"sum": 5}


async def test_stale_copy_cannot_append(session_service, request) -> None:
    if "in-memory" in request.node.callspec.id:
        pytest.skip("ADK's in-memory service accepts stale appends (no shared semantics)")
    session = await session_service.create_session(app_name="stale", user_id="u8")
    copy = await session_service.get_session(app_name="stale", user_id="u8", session_id=session.id)
    await session_service.append_event(session, _text_event("user", "first"))
    with pytest.raises(StaleSessionError):
        await session_service.append_event(copy, _text_event("user", "lost?"))
    loaded = await session_service.get_session(
        app_name="stale", user_id="u8", session_id=session.id
    )
    assert [e.content.parts[0].text for e in loaded.events] == ["first"]
