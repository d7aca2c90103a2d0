"""Human review across stateless requests: the body field, its errors, the pending call's window."""

from __future__ import annotations

import json
import random
import time

from google.adk.events import Event
from google.genai import types

from agents.human_loop import pending_calls
from confidant.sessions.records import (
    SessionKey,
    TurnWrite,
    from_oldest_pending_call,
    window_of,
)
from tests.support.taskflow import (
    APP,
    CONFIRMATION_NEEDED,
    DETAILS,
    INPUT_NEEDED,
    REQUEST,
    send,
)

FILLER_EVENTS = 1000


def _filler(index: int) -> str:
    event = Event(author="user", invocation_id="filler", content=types.UserContent(f"note {index}"))
    return event.model_dump_json(exclude_none=True)


async def test_the_pending_call_stays_in_the_loaded_window_after_1000_more_events(make_client):
    client, runtime = make_client()
    asked = (await send(client, "cy", "w1", REQUEST)).one(INPUT_NEEDED)
    key = SessionKey("cy", APP, "w1")
    for start in range(0, FILLER_EVENTS, 100):  # other traffic on the session, 100 per commit
        record = (await runtime.store.load(key)).record
        write = TurnWrite(
            expected_revision=record.revision,
            events=[_filler(i) for i in range(start, start + 100)],
            now=time.time(),
        )
        await runtime.store.commit(key, write)
    record = (await runtime.store.load(key)).record
    assert record.next_seq > FILLER_EVENTS
    window = window_of(record.tail, runtime.settings.window_events)
    events = [Event.model_validate_json(stored["json"]) for stored in window]
    assert [call.id for call in pending_calls(events)] == [asked["callId"]]
    assert len(window) > runtime.settings.window_events  # kept although far outside the window

    resumed = await send(client, "cy", "w1", DETAILS, call_id=asked["callId"])
    assert resumed.status == 200 and resumed.kinds()[-1] == "finish", resumed.body
    assert resumed.one(CONFIRMATION_NEEDED)["kind"] == "classification"


async def test_a_resume_is_answered_by_any_fresh_runtime_on_the_same_storage(make_client):
    client_a, _ = make_client()
    asked = (await send(client_a, "di", "w2", REQUEST)).one(INPUT_NEEDED)
    client_b, _ = make_client()  # another "instance": new runtime, same database file
    resumed = await send(client_b, "di", "w2", DETAILS)  # no call_id: the one pending call
    assert resumed.one(CONFIRMATION_NEEDED)["kind"] == "classification"
    assert asked["callId"] not in json.dumps(resumed.one(CONFIRMATION_NEEDED))


async def test_an_answer_to_an_unknown_call_is_a_400_and_loses_nothing(make_client):
    client, runtime = make_client()
    asked = (await send(client, "ed", "w3", REQUEST)).one(INPUT_NEEDED)
    before = (await runtime.store.load(SessionKey("ed", APP, "w3"))).record
    wrong = await send(client, "ed", "w3", DETAILS, call_id="adk-not-a-call")
    assert wrong.status == 400
    assert "no pending call 'adk-not-a-call'" in wrong.body and asked["callId"] in wrong.body
    after = (await runtime.store.load(SessionKey("ed", APP, "w3"))).record
    assert after.revision == before.revision and after.lease_holder is None
    resumed = await send(client, "ed", "w3", DETAILS, call_id=asked["callId"])
    assert resumed.one(CONFIRMATION_NEEDED)["kind"] == "classification"


async def test_human_response_without_a_pause_and_malformed_fields_are_400(make_client):
    client, _ = make_client()
    nothing = await send(client, "fi", "w4", "add a task: water plants", approved=True)
    assert nothing.status == 400 and "nothing is waiting" in nothing.body
    malformed = await send(client, "fi", "w4", REQUEST, approved="maybe", extra=1)
    assert malformed.status == 400
    assert "human_response.approved" in malformed.body and "human_response.extra" in malformed.body


async def test_use_chat_body_with_human_response_resumes(make_client):
    client, _ = make_client()
    asked = (await send(client, "gu", "w5", REQUEST)).one(INPUT_NEEDED)
    body = {
        "app": APP,
        "id": "w5",
        "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": DETAILS}]}],
        "human_response": {"call_id": asked["callId"]},
    }
    response = await client.post("/v1/chat", json=body, headers={"X-User-Id": "gu"})
    assert response.status_code == 200
    assert '"data-human-confirmation-needed"' in response.text


async def test_a_json_client_gets_the_pauses_and_can_answer_them(make_client):
    client, _ = make_client()
    headers = {"X-User-Id": "ho", "Accept": "application/json"}
    first = await client.post(
        "/v1/chat", json={"app": APP, "session_id": "w6", "message": REQUEST}, headers=headers
    )
    (pause,) = first.json()["pauses"]
    assert pause["type"] == INPUT_NEEDED and pause["data"]["missing"]
    answer = {
        "app": APP,
        "session_id": "w6",
        "message": DETAILS,
        "human_response": {"call_id": pause["data"]["callId"]},
    }
    second = await client.post("/v1/chat", json=answer, headers=headers)
    assert [p["type"] for p in second.json()["pauses"]] == [CONFIRMATION_NEEDED]


async def test_a_session_read_back_says_what_its_paused_run_waits_for(make_client):
    # A page reloaded during a pause has only the stored session: it must be able to ask again.
    client, _ = make_client()
    headers = {"X-User-Id": "ed"}
    turn = await send(client, "ed", "w9", REQUEST)
    announced = [p for p in turn.parts if p["type"] == INPUT_NEEDED]
    stored = (await client.get("/v1/sessions/w9", params={"app": APP}, headers=headers)).json()
    assert stored["pauses"] == announced and announced

    resumed = await send(client, "ed", "w9", DETAILS)
    confirmation = [p for p in resumed.parts if p["type"] == CONFIRMATION_NEEDED]
    stored = (await client.get("/v1/sessions/w9", params={"app": APP}, headers=headers)).json()
    assert stored["pauses"] == confirmation and confirmation  # the answered one is gone
    onemind = await client.post(
        "/v1/chat", json={"message": "hi", "session_id": "o"}, headers=headers
    )
    assert onemind.status_code == 200
    stored = (await client.get("/v1/sessions/o", params={"app": "onemind"}, headers=headers)).json()
    assert stored["pauses"] == []


def _stored(seq: int, event: Event) -> dict[str, object]:
    return {"seq": seq, "json": event.model_dump_json(exclude_none=True)}


def _call(call_id: str, *, long_running: bool) -> Event:
    call = types.Part(function_call=types.FunctionCall(id=call_id, name="ask", args={"q": call_id}))
    return Event(
        author="taskflow",
        invocation_id="run",
        content=types.Content(role="model", parts=[call]),
        long_running_tool_ids={call_id} if long_running else None,
    )


def _response(call_id: str) -> Event:
    answer = types.FunctionResponse(id=call_id, name="ask", response={"answer": "yes"})
    return Event(
        author="user",
        invocation_id="run",
        content=types.Content(role="user", parts=[types.Part(function_response=answer)]),
    )


def test_the_events_from_the_oldest_pending_call_say_what_the_whole_tail_waits_for():
    # GET /v1/sessions/{id} parses only these events for its `pauses`: the answer must be the
    # whole tail's, in the same order, for tails of calls, answers and chatter in any order.
    rng = random.Random(7)
    for _ in range(300):
        events: list[Event] = []
        issued: list[str] = []
        for index in range(rng.randint(0, 30)):
            roll = rng.random()
            if roll < 0.3:
                events.append(Event(author="user", content=types.UserContent(f"note {index}")))
            elif roll < 0.6 or not issued:
                issued.append(f"call-{index}")
                events.append(_call(issued[-1], long_running=rng.random() < 0.7))
            else:
                events.append(_response(rng.choice(issued)))
        tail = [_stored(seq, event) for seq, event in enumerate(events)]
        waiting = from_oldest_pending_call(tail)
        whole = pending_calls(events)
        assert pending_calls([Event.model_validate_json(s["json"]) for s in waiting]) == whole
        if not whole:
            assert waiting == []  # nothing waits: nothing to parse
