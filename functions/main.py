"""functions-framework targets (ASGI). Thin: hand the request to the HTTP layer or a service.

functions-framework --asgi --source=functions/main.py --target=chat    the chat API
functions-framework --asgi --source=functions/main.py --target=jobs    Pub/Sub push deliveries
functions-framework --asgi --source=functions/main.py --target=sweep   outbox sweep (Scheduler)

`jobs` is an HTTP target that reads the Pub/Sub push envelope itself rather than a CloudEvent
target: Terraform pushes straight from each subscription to the Cloud Run service (no
Eventarc), the push body is the plain envelope, and the response status is the whole contract
with Pub/Sub — 200 acknowledges (done, duplicate, stale, poison), 503 asks for a redelivery
with the subscription's exponential backoff. A CloudEvent function can only signal "retry" by
raising, which also logs a crash for every transient failure. Both targets sit behind Cloud
Run's IAM check: only the push and scheduler service accounts' OIDC tokens may invoke them.
`sweep` builds only the outbox store and the bus: its service needs no model key.
"""

from __future__ import annotations

from functions_framework import aio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

# Nothing of the runtime is imported here: google-genai, ADK and the app agents take about 2 s of
# CPU to import on the dev machine, over the 1.5 s budget for loading this module (issue 11 item 6,
# docs/performance.md). They load with the runtime, which Cloud Run's startup probe (/healthz)
# builds and warms before traffic arrives, so a cold start costs the same in total; the framework's
# gunicorn master, which loads this module before forking its one worker (WORKERS=1), stays small
# (≈40 MiB instead of ≈100). An import inside a handler is a dict lookup after the first call.


@aio.http
async def chat(request: Request) -> Response:
    from confidant.bootstrap import get_runtime
    from confidant.http import api

    return await api.handle(request, await get_runtime())


@aio.http
async def jobs(request: Request) -> Response:
    from confidant.bootstrap import get_runtime
    from confidant.http import jobs_api

    return await jobs_api.handle_push(request, await get_runtime())


@aio.http
async def sweep(request: Request) -> JSONResponse:
    from confidant.bootstrap import get_sweeper
    from confidant.http import jobs_api

    return await jobs_api.handle_sweep(request, get_sweeper())
