"""HTTP routes of the chat function: one table (`ROUTES` and the apps' `AppSpec.routes`) that
the dispatcher and `GET /openapi.json` both read. Each `Route` declares its method, path,
summary, parameter / body / response models and errors once; the dispatcher validates the
parameters and body with those models before the handler runs (400 with the reasons).

Adding an endpoint is one `Route(...)` in `ROUTES` (or in an app's `AppSpec.routes`) with a
handler `async def handler(call: Call) -> Response`; it appears in /openapi.json by itself.

Handlers live beside their data: sessions and chat here, the caller's data in me.py and
profile.py, artifacts in artifacts.py, the agent registry in admin.py (admins only).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from functools import cache
from typing import Any

from google.adk.events import Event
from opentelemetry import context as otel_context
from opentelemetry import propagate
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

import agents
from agents.registry import Route
from confidant import web
from confidant.bootstrap import Runtime
from confidant.chat.human_loop import stored_pause_parts
from confidant.chat.requests import ChatBody, ChatRequest, parse_chat_request
from confidant.errors import ConfidantError, ForbiddenError, NotFoundError
from confidant.http import admin, artifacts, me, profile, resume, schemas, usage
from confidant.http.openapi import named_root, openapi_document
from confidant.http.routing import (
    Call,
    find_route,
    json_reply,
    method_not_allowed,
    read_json,
    validated_body,
    validated_params,
)
from confidant.sessions.records import SessionKey, SessionRecord
from confidant.streaming.parts import ChatReply, stream_part_model
from confidant.streaming.ui_stream import DONE_FRAME, HEADERS, sse_frame

logger = logging.getLogger(__name__)
HEALTH_PATH = "/healthz"

# read_json: re-exported for code that read bodies through this module before routing.py.
__all__ = ["ROUTES", "chat_reply", "handle", "read_json", "routes"]

_SESSION = r"/v1/sessions/(?P<session_id>[^/]+)"


def _error(error: ConfidantError) -> JSONResponse:
    return JSONResponse(error.to_json(), status_code=error.status, headers=error.headers)


async def handle(request: Request, runtime: Runtime) -> Response:
    # A caller's (or Cloud Run's) W3C traceparent makes the turn's spans part of its trace.
    token = otel_context.attach(propagate.extract(request.headers))
    try:
        response = await _route(request, runtime)
    finally:
        otel_context.detach(token)
    _add_cors(request, response, runtime.settings.cors_origins)
    return response


def _add_cors(request: Request, response: Response, allowed: list[str]) -> None:
    """Browsers on an allowed origin may call every route (useChat from a web app).

    Only configured origins get the headers; `*` is answered with a literal `*` (never the
    caller's origin), and credentials are never allowed: the ID token travels in the
    Authorization header, which needs no cookies, so no origin can ride a user's cookies.
    """
    if not allowed:
        return
    if "*" not in allowed:
        response.headers["vary"] = "Origin"  # the answer depends on the caller's origin
    origin = request.headers.get("origin")
    if not origin:
        return
    if origin in allowed:
        response.headers["access-control-allow-origin"] = origin
    elif "*" in allowed:
        response.headers["access-control-allow-origin"] = "*"
    else:
        return
    response.headers["access-control-allow-methods"] = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
    response.headers["access-control-allow-headers"] = "authorization, content-type, x-user-id"
    response.headers["access-control-expose-headers"] = "x-vercel-ai-ui-message-stream"
    response.headers["access-control-max-age"] = "600"


async def _route(request: Request, runtime: Runtime) -> Response:
    path = request.url.path.rstrip("/") or "/"
    method = request.method
    try:
        if method == "OPTIONS":
            return Response(status_code=204)
        route, found, serving = find_route(routes(), method, path)
        # Rate limits (confidant/http/limits.py), except on routes declared exempt (liveness).
        if runtime.limits is not None and all(r.rate_limited for r in serving):
            await runtime.limits.check_ip(request, route)
        if runtime.settings.web_enabled and (page := web.page_response(path, method)):
            return page
        identity = None
        if route is None and serving and all(r.access == "public" for r in serving):
            raise method_not_allowed(serving)
        if route is None or route.access != "public":
            identity = await runtime.identity.verify(request.headers)
            if runtime.limits is not None:
                await runtime.limits.check_user(request, identity.user_id, route)
            admin_path = path.startswith(admin.PREFIX)
            if (admin_path or (route and route.access == "admin")) and not admin.is_admin(
                identity, runtime.settings
            ):
                raise ForbiddenError("this endpoint is for admins only")
        if route is None or found is None:
            if serving:
                raise method_not_allowed(serving)
            raise NotFoundError(f"no route for {method} {path}")
        call = Call(request, runtime, identity, validated_params(route, request, found))
        call = replace(call, body=await validated_body(route, call))
        return await route.handler(call)
    except ConfidantError as error:
        return _error(error)


def routes() -> tuple[Route, ...]:
    """The platform's routes and every registered app's (apps register on import)."""
    return (*ROUTES, *(route for spec in agents.app_specs() for route in spec.routes))


# -- platform endpoints -------------------------------------------------------------------------


async def _health(call: Call) -> Response:
    return json_reply(schemas.Health(status="ok"))


async def _openapi(call: Call) -> Response:
    return JSONResponse(openapi())


def openapi() -> dict[str, Any]:
    """The document of the platform and the apps registered now."""
    return _openapi_of(agents.app_names())


@cache
def _openapi_of(apps: tuple[str, ...]) -> dict[str, Any]:
    data_parts = {
        name: model for spec in agents.app_specs() for name, model in spec.data_parts.items()
    }
    # Every part a chat stream may carry: the platform's and the apps' data parts.
    stream_part = named_root("StreamPart", stream_part_model(data_parts))
    return openapi_document(
        routes(),
        stream_part=stream_part,
        title="Confidant",
        version="1",
        description=(
            "Coaching and companion chat apps on Google ADK. `POST /v1/chat` streams the AI SDK "
            "UI message stream (SSE, `x-vercel-ai-ui-message-stream: v1`): each `data:` frame "
            "is one `StreamPart`, and the stream ends with `data: [DONE]`."
        ),
    )


async def _apps(call: Call) -> Response:
    return json_reply(schemas.AppList(apps=[_app_info(spec) for spec in agents.app_specs()]))


def _app_info(spec: agents.AppSpec) -> schemas.AppInfo:
    return schemas.AppInfo(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        skills=[
            schemas.AppSkill(id=skill.id, title=skill.title, description=skill.description)
            for skill in spec.skills
        ],
        default_skill=spec.default_skill,
        endpoints=[
            schemas.AppEndpoint(method=route.method, path=route.path, name=route.name)
            for route in spec.routes
        ],
    )


def _app(params: Any, runtime: Runtime) -> str:
    return params.app or runtime.settings.default_app


def _session_key(call: Call) -> SessionKey:
    # The user id comes from the verified identity only: another user's id is never reachable.
    return SessionKey(call.user_id, _app(call.params, call.runtime), call.params.session_id)


def _chat_body(body: Any, call: Call) -> ChatRequest:
    settings = call.runtime.settings
    return parse_chat_request(
        body,
        default_app=settings.default_app,
        default_locale=settings.default_locale,
        max_message_chars=settings.max_message_chars,
        app=call.params.app,
    )


async def _chat(call: Call) -> Response:
    return await chat_reply(call.request, call.runtime, call.user_id, call.body)


async def chat_reply(
    request: Request, runtime: Runtime, user_id: str, chat_request: ChatRequest
) -> Response:
    """Run one chat turn: a UI message stream, or the whole reply as JSON when asked."""
    prepared = await runtime.chat.prepare(user_id, chat_request)
    if "application/json" in request.headers.get("accept", ""):
        async for _ in prepared.stream():
            pass
        result = prepared.result
        if result.error is not None:
            payload = result.error.to_json() | {"session_id": result.session_id}
            return JSONResponse(
                payload, status_code=result.error.status, headers=result.error.headers
            )
        whole = ChatReply.model_validate(
            {
                **result.data,  # app data parts by name (e.g. `route`); core fields win
                "session_id": result.session_id,
                "app": chat_request.app,
                "text": result.text,
                "tool_calls": result.tool_calls,
                "progress": result.progress,
                "retries": result.retries,
                "pauses": result.pauses,
                "crisis": result.crisis,
            }
        )
        return json_reply(whole)

    async def frames() -> AsyncIterator[bytes]:
        async for part in prepared.stream():
            yield sse_frame(part)
        yield DONE_FRAME

    return StreamingResponse(frames(), headers=HEADERS)


def _session_info(record: SessionRecord, summary: Any = None) -> schemas.SessionInfo:
    return schemas.SessionInfo(
        id=record.key.session_id,
        app=record.key.app,
        state=record.state,
        summary=summary if summary is not None else record.summary,
        created_at=record.created_at,
        updated_at=record.updated_at,
        event_count=record.next_seq,
        busy=record.lease_holder is not None,
        progress=_progress(record),
    )


def _progress(record: SessionRecord) -> dict[str, Any] | None:
    """Where the session stands in its app's protocol (the page's bar after a reload)."""
    try:
        reader = agents.app_spec(record.key.app).progress
    except agents.UnknownAppError:
        return None
    return reader(record.state) if reader else None


async def _list_sessions(call: Call) -> Response:
    records = await call.runtime.store.list_sessions(
        app=_app(call.params, call.runtime), user_id=call.user_id
    )
    newest_first = sorted(records, key=lambda r: r.updated_at, reverse=True)
    return json_reply(schemas.SessionList(sessions=[_session_info(r) for r in newest_first]))


async def _get_session(call: Call) -> Response:
    key, runtime, params = _session_key(call), call.runtime, call.params
    page, summary = await asyncio.gather(  # 404 if missing
        runtime.store.read_events(key, after_seq=params.page_token, limit=params.page_size),
        runtime.job_store.summary(key.user_id, key.app, key.session_id),
    )
    events = [
        {"seq": stored["seq"]}
        | Event.model_validate_json(stored["json"]).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        for stored in page.events
    ]
    info = _session_info(page.record).model_copy(update={"summary": summary})
    token = None if page.next_after_seq is None else str(page.next_after_seq)
    return json_reply(
        schemas.SessionPage(
            session=info, events=events, next_page_token=token, pauses=_pauses(page.record)
        )
    )


def _pauses(record: SessionRecord) -> list[dict[str, Any]]:
    """The pause parts of the session's paused run."""
    try:
        spec = agents.app_spec(record.key.app)
    except agents.UnknownAppError:
        return []
    return [dict(part) for part in stored_pause_parts(spec, record)]


async def _delete_session(call: Call) -> Response:
    key = _session_key(call)
    if not await call.runtime.store.delete_session(key):
        raise NotFoundError(f"session {key.session_id!r} not found")
    return Response(status_code=204)


async def _erase_me(call: Call) -> Response:
    removed = await call.runtime.erase_user(call.user_id)
    return json_reply(schemas.Erased(deleted=True, records=removed))


ROUTES: tuple[Route, ...] = (
    Route(
        "GET",
        HEALTH_PATH,
        _health,
        "liveness",
        responses={200: schemas.Health},
        access="public",
        rate_limited=False,  # a probe refused for the rate would restart a healthy instance
    ),
    Route(
        "GET",
        "/openapi.json",
        _openapi,
        "this document",
        responses={200: {"application/json": None}},
        access="public",
    ),
    Route(
        "GET",
        "/v1/apps",
        _apps,
        "the served apps, their skills and endpoints",
        responses={200: schemas.AppList},
        access="public",
    ),
    Route(
        "POST",
        "/v1/chat",
        _chat,
        "send a message; the reply streams (or JSON when asked)",
        params=schemas.ChatQuery,
        body=ChatBody,
        parse_body=_chat_body,
        responses={200: {"text/event-stream": None, "application/json": ChatReply}},
        errors=(404, 409),
    ),
    resume.ROUTE,
    Route(
        "GET",
        "/v1/sessions",
        _list_sessions,
        "the caller's sessions of an app, newest first",
        params=schemas.AppQuery,
        responses={200: schemas.SessionList},
    ),
    Route(
        "GET",
        _SESSION,
        _get_session,
        "one session with a page of its events",
        params=schemas.SessionPageParams,
        responses={200: schemas.SessionPage},
        errors=(404,),
    ),
    Route(
        "DELETE",
        _SESSION,
        _delete_session,
        "delete one session",
        params=schemas.SessionParams,
        responses={204: None},
        errors=(404,),
    ),
    Route(
        "GET",
        rf"{_SESSION}/artifacts",
        artifacts.list_artifacts,
        "the session's saved files",
        params=schemas.SessionParams,
        responses={200: schemas.ArtifactList},
        errors=(404,),
    ),
    Route(
        "GET",
        rf"{_SESSION}/artifacts/(?P<filename>[^/]+)",
        artifacts.download_artifact,
        "download one saved file (latest version unless `version`)",
        params=schemas.ArtifactParams,
        responses={200: {"*/*": None}},  # the file's own type
        errors=(404,),
    ),
    Route(
        "DELETE",
        "/v1/me",
        _erase_me,
        "erase everything the caller owns",
        responses={200: schemas.Erased},
    ),
    *me.ROUTES,
    usage.ROUTE,
    *profile.ROUTES,
    *admin.ROUTES,
)
