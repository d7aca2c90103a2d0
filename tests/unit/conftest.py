"""The chat function's HTTP layer in-process: real SQLite store, real services, httpx client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from google.adk.models import BaseLlm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from confidant.bootstrap import Runtime, build_runtime
from confidant.http import api
from confidant.settings import Settings

ClientFactory = Callable[..., "AsyncIterator[httpx.AsyncClient]"]


def asgi_app(runtime: Runtime) -> Starlette:
    async def endpoint(request: Request):  # type: ignore[no-untyped-def]
        return await api.handle(request, runtime)

    methods = ["GET", "POST", "DELETE", "OPTIONS", "PUT", "PATCH"]
    return Starlette(routes=[Route("/{path:path}", endpoint=endpoint, methods=methods)])


@pytest.fixture
async def make_client(tmp_path):  # type: ignore[no-untyped-def]
    """`async with make_client(model=..., **settings) as (client, runtime)`."""
    runtimes: list[Runtime] = []

    def factory(model: BaseLlm | None = None, **overrides):  # type: ignore[no-untyped-def]
        settings = Settings(
            sqlite_path=str(tmp_path / "confidant.db"), model="offline", **overrides
        )
        runtime = build_runtime(settings, model=model)
        runtimes.append(runtime)
        transport = httpx.ASGITransport(app=asgi_app(runtime))
        client = httpx.AsyncClient(transport=transport, base_url="http://confidant.test")
        return client, runtime

    yield factory
    for runtime in runtimes:
        await runtime.close()
