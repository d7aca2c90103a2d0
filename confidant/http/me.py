"""The caller's own data, for apps: memories and the emotion trajectory.

GET    /v1/me/memories?app=&limit=              the caller's memories, newest first
DELETE /v1/me/memories/{id}                     forget one memory (204; 404 when none)
GET    /v1/me/emotions?app=&session_id=&limit=  emotion snapshots, oldest first (ready to chart)

`DELETE /v1/me` (api.py) erases all of it with the rest of the caller's data.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from confidant.chat.requests import SESSION_ID_PATTERN
from confidant.errors import BadRequestError, NotFoundError
from confidant.ports import MemoryRecord

if TYPE_CHECKING:
    from confidant.bootstrap import Runtime

PREFIX = "/v1/me/"
_MEMORY_PATH = re.compile(r"^/v1/me/memories/([A-Za-z0-9_.:-]{1,200})$")
_MAX_LIMIT = 200
MAX_EMOTIONS = 200


class MethodNotAllowedError(BadRequestError):
    status = 405
    code = "method_not_allowed"


def _limit(request: Request, default: int) -> int:
    raw = request.query_params.get("limit", str(default))
    if not raw.isdigit() or not 1 <= int(raw) <= _MAX_LIMIT:
        raise BadRequestError(f"limit must be an integer between 1 and {_MAX_LIMIT}")
    return int(raw)


def _allow(method: str, allowed: str) -> None:
    if method != allowed:
        raise MethodNotAllowedError(f"use {allowed}")


def memory_json(record: MemoryRecord) -> dict[str, Any]:
    return record.model_dump(mode="json")  # the embedding is excluded by the model


async def handle(request: Request, runtime: Runtime, user_id: str, path: str) -> Response:
    """Serve a `/v1/me/...` path (raises NotFoundError for an unknown one)."""
    method = request.method
    if path == "/v1/me/memories":
        _allow(method, "GET")
        app = request.query_params.get("app") or None
        records = await runtime.store.list_memories(user_id, app=app, limit=_limit(request, 50))
        return JSONResponse({"memories": [memory_json(r) for r in records]})
    found = _MEMORY_PATH.match(path)
    if found:
        _allow(method, "DELETE")
        if not await runtime.store.delete_memory(user_id, found.group(1)):
            raise NotFoundError(f"memory {found.group(1)!r} not found")
        return Response(status_code=204)
    if path == "/v1/me/emotions":
        _allow(method, "GET")
        session_id = request.query_params.get("session_id") or None
        if session_id is not None and not SESSION_ID_PATTERN.match(session_id):
            raise BadRequestError("malformed session id")
        snapshots = await runtime.job_store.emotions(
            user_id,
            app=request.query_params.get("app") or None,
            session_id=session_id,
            limit=_limit(request, 50),
        )
        return JSONResponse({"emotions": snapshots})
    raise NotFoundError(f"no route for {method} {path}")
