"""Format checks and step rules as tool callbacks: malformed calls and outputs become structured
errors the model can correct, never a failed turn; loop limits come from settings."""

from __future__ import annotations

from tests.support.scripted_model import ScriptedLlm, call
from tests.support.taskflow import CONFIRMATION_NEEDED, INPUT_NEEDED, REQUEST, send

COMPLETE_REQUEST = REQUEST + ". It's about splitting invoice generation out. 2026-12-01"


def _errors(turn) -> list[dict]:  # type: ignore[no-untyped-def]
    return [o for o in turn.outputs() if isinstance(o, dict) and o.get("status") == "error"]


async def test_a_specialist_answering_malformed_json_gets_a_structured_error(make_client):
    model = ScriptedLlm(
        script=[
            call("plan_workflow", request="add a task: water the plants"),
            call("record_details", title="Water the plants"),
            call("detail_critic", request="{}"),
            "this is not JSON",  # the critic's (sub-agent's) answer
            "Sorry, let me check again.",
        ]
    )
    client, _ = make_client(model=model)
    turn = await send(client, "ha", "f1", "add a task: water the plants")
    assert turn.status == 200 and turn.kinds()[-1] == "finish", turn.body
    (failure,) = _errors(turn)
    assert failure["error"] == "detail_critic produced malformed output"
    assert failure["problems"]
    assert "Sorry, let me check again." in turn.text


async def test_a_specialist_answer_violating_its_schema_is_not_stored(make_client):
    model = ScriptedLlm(
        script=[
            call("plan_workflow", request="add a task: water the plants"),
            call("record_details", title="Water the plants"),
            call("detail_critic", request="{}"),
            '{"status": "maybe", "feedback": "?"}',
            "I will ask the critic again.",
        ]
    )
    client, runtime = make_client(model=model)
    turn = await send(client, "hb", "f2", "add a task: water the plants")
    (failure,) = _errors(turn)
    assert failure["problems"][0]["field"] == "status"
    loaded = await runtime.store.load(_key("hb", "f2"))
    assert loaded.record.state.get("taskflow_critique") is None


async def test_out_of_order_calls_are_refused_and_nothing_is_written(make_client):
    model = ScriptedLlm(
        script=[
            call("write_task"),  # before any plan
            call("plan_workflow", request="add a task: water the plants"),
            call("task_classifier", request="skip the details"),
            call("request_final_confirmation", summary="skip everything"),
            call("write_task"),
            "ok",
        ]
    )
    client, runtime = make_client(model=model)
    turn = await send(client, "hc", "f3", "add a task: water the plants")
    assert turn.kinds()[-1] == "finish"
    refusals = [e["error"] for e in _errors(turn)]
    assert len(refusals) == 4
    assert refusals[0].startswith("nothing to write")
    assert refusals[1].startswith("classification is not the current step")
    assert refusals[2].startswith("the task needs the expert review")
    assert not [p for p in turn.parts if p["type"].startswith("data-human")]
    assert await runtime.chat.deps.tasks.list_tasks() == []


async def test_unknown_arguments_are_a_structured_error(make_client):
    model = ScriptedLlm(
        script=[
            call("plan_workflow", request="add a task: water the plants"),
            call("record_details", title="W", priority="high"),
            "ok",
        ]
    )
    client, _ = make_client(model=model)
    (failure,) = _errors(await send(client, "hd", "f4", "add a task: water the plants"))
    fields = {p["field"] for p in failure["problems"]}
    assert fields == {"title", "priority"}  # too short, and not a detail this step takes


async def test_the_classification_loop_ends_after_the_configured_corrections(make_client):
    client, _ = make_client(taskflow_max_classification_corrections=1)
    await send(client, "he", "f5", COMPLETE_REQUEST)
    corrected = await send(client, "he", "f5", "priority should be high", approved=False)
    assert corrected.one(CONFIRMATION_NEEDED)["classification"]["priority"] == "high"
    limited = await send(client, "he", "f5", "area should be Operations", approved=False)
    (refusal,) = _errors(limited)
    assert "corrected 1 times (the limit)" in refusal["error"]
    final = limited.one(CONFIRMATION_NEEDED)
    assert final["kind"] == "final" and final["classification"]["priority"] == "high"


async def test_the_detail_loop_gives_up_after_the_configured_rounds(make_client):
    client, _ = make_client(taskflow_max_detail_rounds=2)
    asked = (await send(client, "hf", "f6", REQUEST)).one(INPUT_NEEDED)
    gave_up = await send(client, "hf", "f6", "no idea", call_id=asked["callId"])
    assert "could not collect enough details" in gave_up.text
    assert not [p for p in gave_up.parts if p["type"].startswith("data-human")]
    progress = [p["data"]["phase"] for p in gave_up.parts if p["type"] == "data-protocol-progress"]
    assert progress == ["cancelled"]
    restarted = await send(client, "hf", "f6", COMPLETE_REQUEST)  # a new run starts cleanly
    assert restarted.one(CONFIRMATION_NEEDED)["kind"] == "classification"


def _key(user: str, session: str):  # type: ignore[no-untyped-def]
    from confidant.sessions.records import SessionKey

    return SessionKey(user, "taskflow", session)


async def test_an_approval_of_an_earlier_run_never_approves_the_next_one(make_client):
    offline, runtime = make_client()
    message = COMPLETE_REQUEST
    await send(offline, "hg", "f7", message)
    final = (await send(offline, "hg", "f7", "yes")).one(CONFIRMATION_NEEDED)
    await send(offline, "hg", "f7", "approve", approved=True, call_id=final["callId"])
    assert len(await runtime.chat.deps.tasks.list_tasks()) == 1

    critique = '{"status": "complete", "feedback": "ok", "missing": []}'
    classification = (
        '{"task_type": "Admin", "priority": "low", "area": "Operations", "reasons": "chore"}'
    )
    model = ScriptedLlm(
        script=[
            call("plan_workflow", request="add a task: water the plants"),
            call(
                "record_details",
                title="Water the plants",
                description="All of them, including the balcony.",
                due_date="2026-12-01",
            ),
            call("detail_critic", request="check"),
            critique,
            call("task_classifier", request="classify"),
            classification,
            call("task_expert", request="review"),
            '{"verdict": "sound", "notes": "fine"}',
            call("write_task"),  # skips the final confirmation of this run
            "ok",
        ]
    )
    scripted, _ = make_client(model=model)
    turn = await send(scripted, "hg", "f7", "add a task: water the plants")
    (refusal,) = _errors(turn)
    assert refusal["error"] == "the user has not approved the final summary; nothing was written"
    assert len(await runtime.chat.deps.tasks.list_tasks()) == 1
