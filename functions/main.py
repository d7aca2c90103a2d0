"""functions-framework targets (ASGI). Thin: hand the request to the HTTP layer.

functions-framework --asgi --source=functions/main.py --target=chat
"""

from __future__ import annotations

from functions_framework import aio
from starlette.requests import Request
from starlette.responses import Response

from confidant.bootstrap import get_runtime
from confidant.http import api


@aio.http
async def chat(request: Request) -> Response:
    return await api.handle(request, await get_runtime())
