"""The taskflow app end to end through the chat API, in-process, with the offline model."""

from __future__ import annotations

from confidant.tasks.local import LocalTaskWriter
from tests.support.taskflow import (
    CONFIRMATION_NEEDED,
    DETAILS,
    INPUT_NEEDED,
    REQUEST,
    send,
)


async def test_missing_details_then_a_correction_then_approval_writes_one_task(make_client):
    client, runtime = make_client()
    first = await send(client, "ann", "t1", REQUEST)
    assert first.status == 200 and first.done, first.body
    asked = first.one(INPUT_NEEDED)
    assert set(asked["missing"]) == {"description", "due_date"}
    assert "due" in asked["question"].lower()
    # The model first passed "friday" as the due date; the format check answered a
    # structured error and the model corrected its call.
    errors = [o for o in first.outputs() if isinstance(o, dict) and o.get("status") == "error"]
    assert errors and errors[0]["problems"][0]["field"] == "due_date"
    assert first.tools().count("record_details") == 2
    assert first.kinds()[-2:] == [INPUT_NEEDED, "finish"]  # announced after the commit

    second = await send(client, "ann", "t1", DETAILS, call_id=asked["callId"])
    assert second.status == 200, second.body
    proposal = second.one(CONFIRMATION_NEEDED)
    assert proposal["kind"] == "classification"
    assert proposal["classification"]["task_type"] == "Technical debt"
    assert proposal["classification"]["priority"] == "medium"

    third = await send(client, "ann", "t1", "priority should be high", approved=False)
    corrected = third.one(CONFIRMATION_NEEDED)
    assert corrected["kind"] == "classification"
    assert corrected["classification"]["priority"] == "high"

    fourth = await send(client, "ann", "t1", "yes")
    final = fourth.one(CONFIRMATION_NEEDED)
    assert final["kind"] == "final"
    assert final["task"]["due_date"] == "2026-11-27"
    assert final["review"]["verdict"] in ("sound", "concerns")

    fifth = await send(client, "ann", "t1", "Approve", approved=True, call_id=final["callId"])
    assert "write_task" in fifth.tools()
    assert "is in your task list" in fifth.text
    assert not [p for p in fifth.parts if p["type"].startswith("data-human")]
    writer = runtime.chat.deps.tasks
    assert isinstance(writer, LocalTaskWriter)
    tasks = await writer.list_tasks()
    assert len(tasks) == 1
    assert tasks[0].title == "refactor the billing module"
    assert tasks[0].tags == ["billing"] and tasks[0].task_type == "Technical debt"
    assert tasks[0].priority == "high" and str(tasks[0].due_date) == "2026-11-27"


async def test_rejecting_the_final_summary_writes_nothing(make_client):
    client, runtime = make_client()
    message = REQUEST + ". It's about splitting invoices out. 2026-12-01"
    first = await send(client, "bo", "t2", message)
    proposal = first.one(CONFIRMATION_NEEDED)
    assert proposal["kind"] == "classification"
    final = (await send(client, "bo", "t2", "ok")).one(CONFIRMATION_NEEDED)
    assert final["kind"] == "final"
    rejected = await send(client, "bo", "t2", "no, not now")
    assert "nothing was written" in rejected.text
    assert "write_task" not in rejected.tools()
    assert await runtime.chat.deps.tasks.list_tasks() == []
    again = await send(client, "bo", "t2", message)  # the rejected run is over: a new one starts
    assert again.one(CONFIRMATION_NEEDED)["kind"] == "classification"
    assert "resumed" not in again.outputs()[0]


async def test_the_final_task_is_an_artifact_only_its_owner_can_download(make_client, tmp_path):
    client, runtime = make_client()
    message = REQUEST + ". It's about splitting invoices out of billing. 2026-12-01"
    await send(client, "ivy", "t3", message)
    final = (await send(client, "ivy", "t3", "yes")).one(CONFIRMATION_NEEDED)
    done = await send(client, "ivy", "t3", "approve", approved=True, call_id=final["callId"])
    (written,) = [o for o in done.outputs() if isinstance(o, dict) and "artifact" in o]
    name = written["artifact"]
    owner = {"X-User-Id": "ivy"}

    listed = await client.get("/v1/sessions/t3/artifacts?app=taskflow", headers=owner)
    assert listed.json()["artifacts"] == [{"filename": name, "versions": [0]}]
    download = await client.get(f"/v1/sessions/t3/artifacts/{name}?app=taskflow", headers=owner)
    assert download.status_code == 200
    assert download.headers["content-type"].startswith("application/json")
    document = download.json()
    assert document["task"]["title"] == "refactor the billing module"
    assert document["written"]["id"] == written["task"]["id"]

    stranger = {"X-User-Id": "mallory"}
    for path in (f"/v1/sessions/t3/artifacts/{name}", "/v1/sessions/t3/artifacts"):
        response = await client.get(f"{path}?app=taskflow", headers=stranger)
        assert response.status_code == 404
    missing = await client.get("/v1/sessions/t3/artifacts/nope.json?app=taskflow", headers=owner)
    assert missing.status_code == 404
    bad = await client.get(
        f"/v1/sessions/t3/artifacts/{name}?app=taskflow&version=x", headers=owner
    )
    assert bad.status_code == 400
    erased = await client.delete("/v1/me", headers=owner)
    assert erased.status_code == 200
    gone = await client.get(f"/v1/sessions/t3/artifacts/{name}?app=taskflow", headers=owner)
    assert gone.status_code == 404
    assert await runtime.chat.deps.effects.get("ivy", written["task"]["idempotency_key"]) is None
    assert not any((tmp_path / "artifacts").rglob(name))
    wrong_method = await client.delete(
        f"/v1/sessions/t3/artifacts/{name}?app=taskflow", headers=owner
    )
    assert wrong_method.status_code == 405


async def test_a_chinese_run_speaks_chinese_and_takes_chinese_corrections(make_client):
    client, runtime = make_client()
    asked = (await send(client, "zh", "t4", "添加任务：重构计费模块，截止 2026-11-27")).one(
        INPUT_NEEDED
    )
    assert asked["missing"] == ["description"] and "怎样算完成" in asked["question"]
    second = await send(client, "zh", "t4", "把发票生成从计费模块里拆出来")
    assert second.one(CONFIRMATION_NEEDED)["classification"]["area"] == "Finance"
    assert "这样对吗" in second.text
    third = await send(client, "zh", "t4", "优先级改为高")
    assert third.one(CONFIRMATION_NEEDED)["classification"]["priority"] == "high"
    final = (await send(client, "zh", "t4", "确认")).one(CONFIRMATION_NEEDED)
    done = await send(client, "zh", "t4", "同意", call_id=final["callId"])
    assert "已加入你的任务列表" in done.text
    (task,) = await runtime.chat.deps.tasks.list_tasks()
    assert (task.title, task.priority) == ("重构计费模块", "high")
