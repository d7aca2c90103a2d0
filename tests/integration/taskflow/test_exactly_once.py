"""The task writer's effect happens exactly once across pauses, resumes, retries and crashes.

50 runs (10 after another in each of 5 sessions), each paused twice for the human; at the
approval, a fault is injected in turn: none, a 429, a lost response after Notion created the
page, Notion down before it created anything, and a crash after the write but before the turn's
commit. The client does what a user's app does: it re-sends the approval after an `error`
part, and once more after success (refused: nothing is pending). Notion must see each run's
key once (0 duplicates) and every run must end with its page (0 losses).
"""

from __future__ import annotations

import json

from agents.taskflow import state_keys
from confidant.effects import EffectState
from confidant.sessions.records import SessionKey
from tests.support.fake_notion import LostResponse, RateLimited, Unavailable
from tests.support.taskflow import APP, CONFIRMATION_NEEDED, REQUEST, send

RUNS = 50
SESSIONS = 5
COMPLETE_REQUEST = REQUEST + ". It's about splitting invoice generation out. 2026-12-01"


async def test_fifty_runs_with_injected_crashes_write_each_task_exactly_once(
    notion, notion_runtime
):
    client, runtime = notion_runtime
    store = runtime.sessions.store
    page_ids: dict[str, str] = {}  # effect key → the page the run reported
    failed_turns = 0
    artifacts: dict[tuple[str, str], str] = {}  # (session, file) → the page it records
    for run in range(RUNS):
        user, session = "una", f"s{run % SESSIONS}"
        first = await send(client, user, session, COMPLETE_REQUEST)
        assert first.one(CONFIRMATION_NEEDED)["kind"] == "classification", first.body
        final = (await send(client, user, session, "yes")).one(CONFIRMATION_NEEDED)
        assert final["kind"] == "final"

        fault = run % 5
        if fault == 1:
            notion.enqueue(RateLimited(retry_after=0))
        elif fault == 2:
            notion.enqueue(LostResponse())
        elif fault == 3:
            notion.enqueue(Unavailable())
        elif fault == 4:
            store.crash_next_commit = True
        approve = {"approved": True, "call_id": final["callId"]}
        done = await send(client, user, session, "approve", **approve)
        if fault in (2, 3, 4):
            assert done.kinds()[-1] == "error", done.kinds()  # nothing committed: send again
            failed_turns += 1
            done = await send(client, user, session, "approve", **approve)
        assert done.kinds()[-1] == "finish", done.body
        written = [o for o in done.outputs() if isinstance(o, dict) and "task" in o]
        assert len(written) == 1, done.outputs()
        task = written[0]["task"]
        page_ids[task["idempotency_key"]] = task["id"]
        artifacts[(session, written[0]["artifact"])] = task["id"]
        again = await send(client, user, session, "approve", **approve)
        assert again.status == 400 and "nothing is waiting" in again.body

    creates = notion.creates_per_key()
    assert failed_turns == 30 and store.crashes == 10
    assert len(creates) == RUNS and set(creates.values()) == {1}  # 0 duplicates
    assert {page.key: page.id for page in notion.pages} == page_ids  # 0 losses
    for key in page_ids:
        record = await runtime.chat.deps.effects.get("una", key)
        assert record is not None and record.state is EffectState.DONE
    for (session, name), page_id in artifacts.items():  # one version each, with its page
        scope = {"app_name": APP, "user_id": "una", "session_id": session, "filename": name}
        assert await runtime.artifacts.list_versions(**scope) == [0]
        saved = await runtime.artifacts.load_artifact(**scope)
        assert json.loads(saved.inline_data.data)["written"]["id"] == page_id
    for index in range(SESSIONS):
        loaded = await runtime.store.load(SessionKey("una", APP, f"s{index}"))
        result = loaded.record.state[state_keys.RESULT]
        assert page_ids[result["idempotency_key"]] == result["id"]
