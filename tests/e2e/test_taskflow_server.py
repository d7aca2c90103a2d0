"""Taskflow end to end: two functions-framework servers on the Firestore emulator, a local
Notion-shaped server, each request of a run sent to the other server than the last."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore

from tests.conftest import TEST_PROJECT
from tests.support.fake_notion import DATABASE_ID, TOKEN, FakeNotion, LostResponse
from tests.support.gcs import BUCKET, storage_emulator
from tests.support.taskflow import (
    CONFIRMATION_NEEDED,
    DETAILS,
    INPUT_NEEDED,
    REQUEST,
    Turn,
    as_turn,
    body,
)


@pytest.fixture
def notion() -> Iterator[FakeNotion]:
    with FakeNotion() as server:
        yield server


@pytest.fixture
def gcs() -> Iterator[str]:
    with storage_emulator() as url:
        yield url


@pytest.fixture
def two_servers(cloud_server, notion, gcs):  # type: ignore[no-untyped-def]
    settings = {
        "STORAGE_EMULATOR_HOST": gcs,
        "CONFIDANT_ARTIFACTS_BUCKET": BUCKET,
        "CONFIDANT_TASKS": "notion",
        "CONFIDANT_NOTION_TOKEN": TOKEN,
        "CONFIDANT_NOTION_DATABASE_ID": DATABASE_ID,
        "CONFIDANT_NOTION_BASE_URL": notion.base_url,
    }
    return cloud_server(**settings), cloud_server(**settings)


async def _send(base_url: str, token: str, session_id: str, message: str, **human) -> Turn:  # type: ignore[no-untyped-def]
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        response = await client.post(
            "/v1/chat",
            json=body(session_id, message, **human),
            headers={"Authorization": f"Bearer {token}"},
        )
    return as_turn(response)


async def test_a_run_pauses_and_resumes_across_two_server_processes(
    two_servers, notion, token_issuer
):
    a, b = two_servers
    uid = f"tf-{uuid.uuid4().hex[:8]}"
    token = token_issuer.issue(uid)
    sid = "run-1"

    first = await _send(a.base_url, token, sid, REQUEST)
    assert first.done and first.kinds()[-1] == "finish", first.body
    asked = first.one(INPUT_NEEDED)
    assert "due_date" in asked["missing"]

    second = await _send(b.base_url, token, sid, DETAILS, call_id=asked["callId"])
    proposal = second.one(CONFIRMATION_NEEDED)
    assert proposal["kind"] == "classification"

    third = await _send(a.base_url, token, sid, "priority should be high", approved=False)
    assert third.one(CONFIRMATION_NEEDED)["classification"]["priority"] == "high"

    final = (await _send(b.base_url, token, sid, "yes")).one(CONFIRMATION_NEEDED)
    assert final["kind"] == "final"

    # Server A writes to Notion, but Notion's answer is lost: the turn fails and commits
    # nothing. The user's app sends the approval again, to server B this time.
    notion.enqueue(LostResponse())
    lost = await _send(a.base_url, token, sid, "approve", approved=True, call_id=final["callId"])
    assert lost.kinds()[-1] == "error", lost.body
    done = await _send(b.base_url, token, sid, "approve", approved=True, call_id=final["callId"])
    assert done.kinds()[-1] == "finish", done.body
    assert "is in your task list" in done.text

    assert len(notion.pages) == 1 and notion.creates_per_key() == {notion.pages[0].key: 1}
    page = notion.pages[0]
    assert page.title == "refactor the billing module"
    assert page.properties["Priority"] == {"select": {"name": "High"}}
    assert page.properties["Due"] == {"date": {"start": "2026-11-27"}}
    db = firestore.Client(project=TEST_PROJECT, credentials=AnonymousCredentials())
    effects = list(db.collection("users").document(uid).collection("effects").stream())
    assert [e.to_dict()["state"] for e in effects] == ["done"]
    assert effects[0].to_dict()["result"]["id"] == page.id

    # Server B saved the final task to Cloud Storage; server A serves it to its owner only.
    (written,) = [o for o in done.outputs() if isinstance(o, dict) and "artifact" in o]
    path = f"/v1/sessions/{sid}/artifacts/{written['artifact']}?app=taskflow"
    async with httpx.AsyncClient(base_url=a.base_url, timeout=30) as client:
        mine = await client.get(path, headers={"Authorization": f"Bearer {token}"})
        stranger = token_issuer.issue(f"other-{uuid.uuid4().hex[:6]}")
        theirs = await client.get(path, headers={"Authorization": f"Bearer {stranger}"})
    assert mine.status_code == 200 and mine.json()["written"]["id"] == page.id
    assert theirs.status_code == 404


async def test_a_rejected_summary_writes_nothing_across_servers(two_servers, notion, token_issuer):
    a, b = two_servers
    token = token_issuer.issue(f"tf-{uuid.uuid4().hex[:8]}")
    complete = REQUEST + ". It's about splitting invoice generation out. 2026-12-01"
    first = await _send(a.base_url, token, "run-2", complete)
    assert first.one(CONFIRMATION_NEEDED)["kind"] == "classification"
    final = (await _send(b.base_url, token, "run-2", "ok")).one(CONFIRMATION_NEEDED)
    rejected = await _send(a.base_url, token, "run-2", "no", approved=False)
    assert final["kind"] == "final"
    assert "nothing was written" in rejected.text
    assert notion.pages == []
