"""HTTP shapes of the job targets: Pub/Sub push deliveries and the outbox sweep."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from confidant.jobs.service import outcome_json

if TYPE_CHECKING:
    from confidant.bootstrap import Runtime, Sweeper

# Pub/Sub push messages are at most 10 MB; a job is far smaller, so cap what is read.
MAX_PUSH_BYTES = 1_000_000


async def handle_push(request: Request, runtime: Runtime) -> Response:
    """200 acknowledges the message (whatever became of it); 503 makes Pub/Sub redeliver."""
    if request.url.path.rstrip("/") == "/healthz":
        return JSONResponse({"status": "ok"})
    if request.method != "POST":
        return JSONResponse(
            {"error": {"code": "method_not_allowed", "message": "use POST"}}, status_code=405
        )
    body = await request.body()
    outcome = await runtime.job_service.handle_push(body[:MAX_PUSH_BYTES])
    return JSONResponse(outcome_json(outcome), status_code=200 if outcome.acknowledged else 503)


async def handle_sweep(request: Request, sweeper: Sweeper) -> JSONResponse:
    if request.url.path.rstrip("/") == "/healthz":
        return JSONResponse({"status": "ok"})
    if request.method != "POST":
        return JSONResponse(
            {"error": {"code": "method_not_allowed", "message": "use POST"}}, status_code=405
        )
    return JSONResponse(await sweeper.sweep())
