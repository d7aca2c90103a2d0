"""A local server that speaks Notion's REST shapes for pages in one database (test code only).

`POST /v1/pages` validates the page against the database's columns the way Notion does
(unknown property or wrong type → 400 `validation_error`), stores it and answers the page
object; `POST /v1/databases/{id}/query` supports the `rich_text.equals` filter. Requests need
`Authorization: Bearer <token>` (401 `unauthorized`) and a `Notion-Version` header (400
`missing_version`). Faults are scripted per request with `enqueue(...)`:

* `RateLimited(retry_after)` → 429 `rate_limited` with `Retry-After`, nothing stored;
* `Unavailable()` → 503 before the page is stored (the effect did not happen);
* `LostResponse()` → the page IS stored, then 502 (the effect happened; the caller cannot know).
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.support.fake_http import FakeHttpServer

DATABASE_ID = "db-tasks-0001"
TOKEN = "secret_test_notion_token"
COLUMNS = {
    "Name": "title",
    "Status": "status",
    "Priority": "select",
    "Due": "date",
    "Tags": "multi_select",
    "Type": "select",
    "Area": "select",
    "Idempotency Key": "rich_text",
}


@dataclass(frozen=True)
class RateLimited:
    retry_after: int = 0


@dataclass(frozen=True)
class Unavailable:
    pass


@dataclass(frozen=True)
class LostResponse:
    pass


Fault = RateLimited | Unavailable | LostResponse


@dataclass
class NotionRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Page:
    id: str
    properties: dict[str, Any]
    children: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return "".join(
            t["text"]["content"] for t in self.properties["Idempotency Key"]["rich_text"]
        )

    @property
    def title(self) -> str:
        return "".join(t["text"]["content"] for t in self.properties["Name"]["title"])

    def to_json(self) -> dict[str, Any]:
        return {
            "object": "page",
            "id": self.id,
            "url": f"https://www.notion.so/{self.id.replace('-', '')}",
            "parent": {"type": "database_id", "database_id": DATABASE_ID},
            "properties": self.properties,
        }


def _error(status: int, code: str, message: str, **headers: str) -> JSONResponse:
    body = {"object": "error", "status": status, "code": code, "message": message}
    return JSONResponse(body, status_code=status, headers=headers)


def validation_problem(properties: dict[str, Any], columns: dict[str, str]) -> str | None:
    for name, value in properties.items():
        expected = columns.get(name)
        if expected is None:
            return f"{name} is not a property that exists."
        if not isinstance(value, dict) or expected not in value:
            return f"{name} is expected to be {expected}."
    if "Name" not in properties:
        return "Title is not provided."
    return None


class FakeNotion(FakeHttpServer[NotionRequest, Fault]):
    def __init__(self, columns: dict[str, str] | None = None) -> None:
        super().__init__()
        self.columns = dict(columns or COLUMNS)  # the database's schema: name → property type
        self.pages: list[Page] = []
        self._pages_lock = threading.Lock()

    def build_app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/pages", self._create, methods=["POST"]),
                Route("/v1/databases/{database_id}/query", self._query, methods=["POST"]),
            ]
        )

    def creates_per_key(self) -> Counter[str]:
        with self._pages_lock:
            return Counter(page.key for page in self.pages)

    async def _checked(self, request: Request) -> tuple[NotionRequest, Response | None]:
        body = await request.json()
        recorded = NotionRequest(request.method, request.url.path, dict(request.headers), body)
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return recorded, _error(401, "unauthorized", "API token is invalid.")
        if not request.headers.get("notion-version"):
            return recorded, _error(400, "missing_version", "Notion-Version header is missing.")
        return recorded, None

    async def _create(self, request: Request) -> Response:
        recorded, refused = await self._checked(request)
        fault = self._record_and_choose(recorded)
        if refused is not None:
            return refused
        if isinstance(fault, RateLimited):
            return _error(
                429,
                "rate_limited",
                "You have been rate limited.",
                **{"Retry-After": str(fault.retry_after)},
            )
        if isinstance(fault, Unavailable):
            return _error(503, "service_unavailable", "Notion is unavailable.")
        body = recorded.body
        if body.get("parent", {}).get("database_id") != DATABASE_ID:
            return _error(404, "object_not_found", "Could not find database.")
        problem = validation_problem(body.get("properties") or {}, self.columns)
        if problem:
            return _error(400, "validation_error", problem)
        page = Page(str(uuid.uuid4()), body["properties"], body.get("children") or [])
        with self._pages_lock:
            self.pages.append(page)
        if isinstance(fault, LostResponse):
            return _error(502, "bad_gateway", "The response was lost.")
        return JSONResponse(page.to_json())

    async def _query(self, request: Request) -> Response:
        recorded, refused = await self._checked(request)
        with self._lock:  # recorded, but scripted faults are for creates only
            self._requests.append(recorded)
        if refused is not None:
            return refused
        if request.path_params["database_id"] != DATABASE_ID:
            return _error(404, "object_not_found", "Could not find database.")
        wanted = recorded.body.get("filter") or {}
        equals = (wanted.get("rich_text") or {}).get("equals")
        with self._pages_lock:
            found = [
                p
                for p in self.pages
                if wanted.get("property") == "Idempotency Key" and p.key == equals
            ]
        results = [p.to_json() for p in found[: recorded.body.get("page_size", 100)]]
        return JSONResponse(
            {"object": "list", "results": results, "next_cursor": None, "has_more": False}
        )
