"""The Notion task writer: a page in a database, over Notion's public REST API.

Requests and responses follow https://developers.notion.com/reference (version header
`Notion-Version`): `POST /v1/pages` creates a page whose `properties` match the database's
columns, with the description as paragraph `children`; `POST /v1/databases/{id}/query` with a
`rich_text.equals` filter finds the page an earlier attempt created (the idempotency key is a
column of its own). 429 answers carry `Retry-After` (seconds) and are retried; 400
`validation_error` answers are refused for good (`TaskRejectedError`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx

from confidant.tasks.port import TaskDraft, TaskRejectedError, TaskSystemError, WrittenTask

logger = logging.getLogger(__name__)

# The database's columns (documented in the README; create them in Notion with these types).
TITLE = "Name"  # title
STATUS = "Status"  # status
PRIORITY = "Priority"  # select
DUE = "Due"  # date
TAGS = "Tags"  # multi_select
TYPE = "Type"  # select
AREA = "Area"  # select
IDEMPOTENCY_KEY = "Idempotency Key"  # rich_text
_MAX_TEXT = 2000  # Notion's limit for one rich text object


def _text(content: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": {"content": content[:_MAX_TEXT]}}]


def page_properties(task: TaskDraft, idempotency_key: str) -> dict[str, Any]:
    properties: dict[str, Any] = {
        TITLE: {"title": _text(task.title)},
        STATUS: {"status": {"name": task.status}},
        PRIORITY: {"select": {"name": task.priority.capitalize()}},
        TAGS: {"multi_select": [{"name": tag} for tag in task.tags]},
        IDEMPOTENCY_KEY: {"rich_text": _text(idempotency_key)},
    }
    if task.due_date is not None:
        properties[DUE] = {"date": {"start": task.due_date.isoformat()}}
    if task.task_type:
        properties[TYPE] = {"select": {"name": task.task_type}}
    if task.area:
        properties[AREA] = {"select": {"name": task.area}}
    return properties


def description_blocks(description: str) -> list[dict[str, Any]]:
    paragraphs = [p.strip() for p in description.split("\n\n") if p.strip()]
    return [
        {"object": "block", "type": "paragraph", "paragraph": {"rich_text": _text(p)}}
        for p in paragraphs
    ]


class NotionTaskWriter:
    def __init__(
        self,
        *,
        token: str,
        database_id: str,
        base_url: str = "https://api.notion.com",
        version: str = "2022-06-28",
        max_attempts: int = 4,
        max_retry_after_s: float = 30.0,
        timeout_s: float = 30.0,
    ) -> None:
        self.database_id = database_id
        self.max_attempts = max_attempts
        self.max_retry_after_s = max_retry_after_s
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            timeout=timeout_s,
            headers={
                "Authorization": f"Bearer {token}",
                "Notion-Version": version,
                "Content-Type": "application/json",
            },
        )

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(1, self.max_attempts + 1):
            try:
                response = await self._client.post(path, json=body)
            except httpx.TransportError as exc:
                # The outcome is unknown; the caller's ledger reconciles on the next attempt.
                raise TaskSystemError(f"Notion could not be reached: {exc!r}") from exc
            if response.status_code == 429 and attempt < self.max_attempts:
                delay = min(_retry_after(response), self.max_retry_after_s)
                logger.info("Notion rate-limited the request; retrying in %.1fs", delay)
                await asyncio.sleep(delay)
                continue
            if response.status_code >= 400:
                raise _error(response)
            return response.json()
        raise TaskSystemError("Notion kept rate-limiting the request")  # pragma: no cover

    async def create_task(self, task: TaskDraft, *, idempotency_key: str) -> WrittenTask:
        body: dict[str, Any] = {
            "parent": {"database_id": self.database_id},
            "properties": page_properties(task, idempotency_key),
        }
        blocks = description_blocks(task.description)
        if blocks:
            body["children"] = blocks
        page = await self._post("/v1/pages", body)
        return WrittenTask(id=page["id"], url=page.get("url", ""), idempotency_key=idempotency_key)

    async def find_task(self, idempotency_key: str) -> WrittenTask | None:
        body = {
            "filter": {"property": IDEMPOTENCY_KEY, "rich_text": {"equals": idempotency_key}},
            "page_size": 1,
        }
        found = await self._post(f"/v1/databases/{self.database_id}/query", body)
        results = found.get("results") or []
        if not results:
            return None
        page = results[0]
        return WrittenTask(id=page["id"], url=page.get("url", ""), idempotency_key=idempotency_key)

    async def close(self) -> None:
        await self._client.aclose()


def _retry_after(response: httpx.Response) -> float:
    try:
        return max(0.0, float(response.headers.get("retry-after", "1")))
    except ValueError:
        return 1.0


def _error(response: httpx.Response) -> Exception:
    try:
        payload = response.json()
    except ValueError:
        payload = {}
    code = payload.get("code", "")
    message = payload.get("message", response.text[:200])
    if response.status_code in (400, 404) and code in ("validation_error", "object_not_found"):
        return TaskRejectedError(f"Notion refused the task ({code}): {message}")
    return TaskSystemError(f"Notion answered {response.status_code} {code}: {message}")
