"""Session documents stay under Firestore's 1 MiB limit at any history length (issue 14, item 6).

Long sessions of maximum-size messages (8,000 CJK characters: 24 KB of UTF-8 each) and ~300 KB
tool results (quote-heavy, so JSON escaping grows them as stored) run through real turns on the
emulator. After every commit each stored document's size is computed by Firestore's documented
rules (https://firebase.google.com/docs/firestore/storage-size) from the raw documents; every event
then reads back intact, by paging and in the next turn's window.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.adk import Agent, Runner
from google.cloud import firestore
from google.genai import types

from confidant.sessions.records import TRUNCATED_MARKER, SessionKey, TailPolicy
from confidant.sessions.service import ConfidantSessionService
from tests.support import stores
from tests.support.scripted_model import ScriptedLlm, call

FIRESTORE_LIMIT = 1_048_576
BOUND = TailPolicy().max_document_bytes  # the production policy's bound
MESSAGE = "心" * 7_999 + "{}"  # 8,000 characters (the default CONFIDANT_MAX_MESSAGE_CHARS)
REPLY = "聽" * 8_000


def _tool_result(turn: int, size: int) -> str:
    unit = f'row 行{turn}: "a quoted value", more text; '  # quotes: escaped twice as stored
    return (unit * (size // len(unit) + 1))[:size]


def _value_size(value: Any) -> int:
    if value is None or isinstance(value, bool):
        return 1
    if isinstance(value, int | float):
        return 8
    if isinstance(value, str):
        return len(value.encode()) + 1
    if isinstance(value, bytes):
        return len(value) + 1
    if isinstance(value, dict):
        return sum(len(k.encode()) + 1 + _value_size(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(_value_size(v) for v in value)
    return 8  # timestamps and the like


def document_size(path: str, doc: dict[str, Any]) -> int:
    """Firestore's stored size of a document: its name, its fields, and 32 bytes."""
    name = sum(len(segment.encode()) + 1 for segment in path.split("/")) + 16
    return name + _value_size(doc) + 32


async def _stored_sizes(client: firestore.AsyncClient, key: SessionKey) -> dict[str, int]:
    session = (
        (client.collection("users").document(key.user_id).collection("apps").document(key.app))
        .collection("sessions")
        .document(key.session_id)
    )
    snap = await session.get()
    sizes = {snap.reference.path: document_size(snap.reference.path, snap.to_dict())}
    async for chunk in session.collection("chunks").stream():
        sizes[chunk.reference.path] = document_size(chunk.reference.path, chunk.to_dict())
    return sizes


def _runner(service: ConfidantSessionService, model: ScriptedLlm, tool) -> Runner:  # type: ignore[no-untyped-def]
    return Runner(
        agent=Agent(name="coach", model=model, tools=[tool]),
        app_name=APP,
        session_service=service,
        auto_create_session=True,
    )


APP = "bounds"


async def _turn(
    service: ConfidantSessionService, key: SessionKey, n: int, size: int, calls: int = 1
) -> ScriptedLlm:
    def lookup(query: str) -> dict:
        """Look something up."""
        return {"rows": _tool_result(n, size)}

    script = [call("lookup", query=f"q{n}.{c}") for c in range(calls)]
    model = ScriptedLlm(script=[*script, f"{n}:{REPLY}"])
    async with service.turn(key, ttl_s=60) as turn:
        runner = _runner(service, model, lookup)
        async for _ in runner.run_async(
            user_id=key.user_id, session_id=key.session_id, new_message=types.UserContent(MESSAGE)
        ):
            pass
        await turn.commit()
    return model


def _parts(event_json: str) -> list[dict[str, Any]]:
    return (json.loads(event_json).get("content") or {}).get("parts") or []


@pytest.fixture
async def store(firestore_emulator):  # type: ignore[no-untyped-def]
    async with stores.firestore_store(TailPolicy()) as store:
        yield store


async def test_a_long_session_of_maximum_messages_and_large_tool_results_stays_bounded(
    store,
) -> None:
    service = ConfidantSessionService(store)
    key = SessionKey("bounds-user", APP, "long")
    turns, result_size = 14, 300_000
    largest = 0
    for n in range(turns):
        await _turn(service, key, n, result_size)
        sizes = await _stored_sizes(store.client, key)
        largest = max(largest, *sizes.values())
        assert all(size <= BOUND for size in sizes.values()), sizes
    assert largest < FIRESTORE_LIMIT
    assert len(sizes) > 4  # the history did spill into several chunks

    # Every event reads back intact, a page at a time.
    events, after = [], None
    while True:
        page = await store.read_events(key, after_seq=after, limit=7)
        events += page.events
        if page.next_after_seq is None:
            break
        after = page.next_after_seq
    assert [e["seq"] for e in events] == list(range(turns * 4))
    for n in range(turns):
        exchange = events[n * 4 : n * 4 + 4]
        user, tool_call, tool_response, reply = (_parts(e["json"]) for e in exchange)
        assert user[0]["text"] == MESSAGE
        assert tool_call[0]["function_call"]["args"] == {"query": f"q{n}.0"}
        response = tool_response[0]["function_response"]["response"]
        assert response == {"result": {"rows": _tool_result(n, result_size)}} or response == {
            "rows": _tool_result(n, result_size)
        }
        assert reply[0]["text"] == f"{n}:{REPLY}"

    # The next turn's window holds the latest exchange whole.
    model = await _turn(service, key, turns, 10)
    seen = model.requests[0].contents
    responses = [p.function_response.response for c in seen for p in c.parts if p.function_response]
    latest = json.dumps(responses[-1], ensure_ascii=False) if responses else ""
    assert latest.count(f"行{turns - 1}") > 1_000
    assert seen[-1].parts[0].text == MESSAGE


async def test_a_tool_result_larger_than_a_document_is_stored_cut_and_the_reply_whole(
    store,
) -> None:
    service = ConfidantSessionService(store)
    key = SessionKey("bounds-user", APP, "huge")
    await _turn(service, key, 0, 1_500_000)  # one event alone would be over 1 MiB
    await _turn(service, key, 1, 2_000)
    sizes = await _stored_sizes(store.client, key)
    assert all(size <= BOUND for size in sizes.values()), sizes
    page = await store.read_events(key, after_seq=None, limit=100)
    parts = [_parts(e["json"]) for e in page.events]
    texts = [MESSAGE, None, None, f"0:{REPLY}", MESSAGE, None, None, f"1:{REPLY}"]
    assert [p[0].get("text") for p in parts] == texts
    cut = parts[2][0]["function_response"]["response"]
    assert cut[TRUNCATED_MARKER] is True and cut["original_bytes"] > 1_500_000
    assert cut["preview"].startswith('{"')
    whole = parts[6][0]["function_response"]["response"]
    assert TRUNCATED_MARKER not in json.dumps(whole)


async def test_a_spill_larger_than_a_document_is_cut_into_several_chunks(store) -> None:
    service = ConfidantSessionService(store)
    key = SessionKey("bounds-user", APP, "wide")
    for n in range(3):  # each turn: three ~300 KB tool results, over 1 MB of events
        await _turn(service, key, n, 300_000, calls=3)
        sizes = await _stored_sizes(store.client, key)
        assert all(size <= BOUND for size in sizes.values()), sizes
    assert len(sizes) >= 4  # the session and at least three chunks
    page = await store.read_events(key, after_seq=None, limit=100)
    responses = [
        part["function_response"]["response"]
        for e in page.events
        for part in _parts(e["json"])
        if "function_response" in part
    ]
    assert len(page.events) == 3 * 8 and len(responses) == 9
    assert all(TRUNCATED_MARKER not in json.dumps(r) for r in responses)
