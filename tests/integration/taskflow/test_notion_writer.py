"""The Notion task writer against a local server speaking Notion's request/response shapes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest

from confidant.tasks import TaskDraft, TaskRejectedError, TaskSystemError
from confidant.tasks.notion import NotionTaskWriter
from tests.support.fake_notion import (
    COLUMNS,
    DATABASE_ID,
    TOKEN,
    FakeNotion,
    RateLimited,
    Unavailable,
)

DRAFT = TaskDraft(
    title="Refactor the billing module",
    description="Split invoice generation out.\n\nDone when invoices render from the new module.",
    due_date=date(2026, 11, 27),
    priority="high",
    tags=["billing", "tech-debt"],
    task_type="Technical debt",
    area="Finance",
)


@pytest.fixture
def notion() -> Iterator[FakeNotion]:
    with FakeNotion() as server:
        yield server


def writer(server: FakeNotion, **overrides) -> NotionTaskWriter:  # type: ignore[no-untyped-def]
    options = {"token": TOKEN, "database_id": DATABASE_ID, "base_url": server.base_url}
    return NotionTaskWriter(**{**options, **overrides})


async def test_a_task_becomes_a_page_with_typed_properties_and_description_blocks(notion):
    client = writer(notion)
    written = await client.create_task(DRAFT, idempotency_key="key-1")
    await client.close()
    request = notion.requests[0]
    assert request.path == "/v1/pages"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["notion-version"] == "2022-06-28"
    properties = request.body["properties"]
    assert properties["Name"]["title"][0]["text"]["content"] == DRAFT.title
    assert properties["Priority"] == {"select": {"name": "High"}}
    assert properties["Due"] == {"date": {"start": "2026-11-27"}}
    assert properties["Tags"]["multi_select"] == [{"name": "billing"}, {"name": "tech-debt"}]
    assert properties["Status"] == {"status": {"name": "Not started"}}
    assert [b["type"] for b in request.body["children"]] == ["paragraph", "paragraph"]
    page = notion.pages[0]
    assert written.id == page.id and page.key == "key-1"
    assert written.url.startswith("https://www.notion.so/")


async def test_find_task_queries_the_database_by_idempotency_key(notion):
    client = writer(notion)
    assert await client.find_task("key-2") is None
    created = await client.create_task(DRAFT, idempotency_key="key-2")
    found = await client.find_task("key-2")
    await client.close()
    assert found is not None and found.id == created.id
    query = notion.requests[-1]
    assert query.path == f"/v1/databases/{DATABASE_ID}/query"
    assert query.body["filter"] == {
        "property": "Idempotency Key",
        "rich_text": {"equals": "key-2"},
    }


async def test_429_is_retried_after_retry_after_and_creates_once(notion):
    notion.enqueue(RateLimited(retry_after=0), RateLimited(retry_after=0))
    client = writer(notion)
    await client.create_task(DRAFT, idempotency_key="key-3")
    await client.close()
    assert len(notion.requests) == 3
    assert notion.creates_per_key() == {"key-3": 1}


async def test_rate_limiting_that_never_ends_is_a_system_error(notion):
    notion.enqueue(*[RateLimited(retry_after=0)] * 5)
    client = writer(notion, max_attempts=3)
    with pytest.raises(TaskSystemError, match="429"):
        await client.create_task(DRAFT, idempotency_key="key-4")
    await client.close()
    assert notion.pages == []


async def test_a_validation_error_is_a_rejection_with_notions_message(notion):
    client = writer(notion, database_id="db-missing")
    with pytest.raises(TaskRejectedError, match="object_not_found"):
        await client.create_task(DRAFT, idempotency_key="key-5")
    await client.close()


async def test_a_database_whose_columns_differ_rejects_the_page_as_validation_error():
    with FakeNotion(columns={**COLUMNS, "Priority": "status"}) as server:
        client = writer(server)
        with pytest.raises(TaskRejectedError, match="Priority is expected to be status"):
            await client.create_task(DRAFT, idempotency_key="key-6")
        await client.close()
        assert server.pages == []


async def test_503_and_bad_token_are_system_errors(notion):
    notion.enqueue(Unavailable())
    client = writer(notion)
    with pytest.raises(TaskSystemError, match="503"):
        await client.create_task(DRAFT, idempotency_key="key-7")
    await client.close()
    bad = writer(notion, token="wrong")
    with pytest.raises(TaskSystemError, match="401"):
        await bad.create_task(DRAFT, idempotency_key="key-8")
    await bad.close()
    assert notion.pages == []
