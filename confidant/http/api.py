"""HTTP routes of the chat function: parse, authenticate, call a service, shape the response.

POST   /v1/chat                     stream a reply (AI SDK UI message stream over SSE),
                                    or the whole reply as JSON with `Accept: application/json`
GET    /v1/sessions?app=            the caller's sessions of an app
GET    /v1/sessions/{id}?app=&page_size=&page_token=   one session with a page of its events
DELETE /v1/sessions/{id}?app=       delete one session
DELETE /v1/me                       erase everything the caller owns (the profile too)
GET    /v1/me/memories, DELETE /v1/me/memories/{id}, GET /v1/me/emotions   (confidant/http/me.py)
GET|PATCH /v1/me/profile, GET /v1/me/reports/{skill}/{protocol}   see confidant/http/profile.py
GET    /v1/apps                     the served apps, their skills and extra endpoints
/v1/admin/apps/{app}/...            agent registry, admins only (confidant/http/admin.py)
GET    /healthz

Apps add endpoints of their own through `AppSpec.routes` (agents/registry.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

from google.adk.events import Event
from opentelemetry import context as otel_context
from opentelemetry import propagate
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

import agents
from confidant import web
from confidant.bootstrap import Runtime
from confidant.chat.requests import SESSION_ID_PATTERN, ChatRequest, parse_chat_request
from confidant.errors import BadRequestError, ConfidantError, NotFoundError, PayloadTooLargeError
from confidant.http import admin, me, profile
from confidant.http.artifacts import ARTIFACT_PATH, artifact_response
from confidant.sessions.records import SessionKey, SessionRecord
from confidant.streaming.ui_stream import DONE_FRAME, HEADERS, sse_frame

logger = logging.getLogger(__name__)

_SESSION_PATH = re.compile(r"^/v1/sessions/([^/]+)$")
_MAX_PAGE = 200


def _error(error: ConfidantError) -> JSONResponse:
    return JSONResponse(error.to_json(), status_code=error.status)


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
    """Browsers on an allowed origin may call every route (useChat from a web app)."""
    origin = request.headers.get("origin")
    if not origin or not ("*" in allowed or origin in allowed):
        return
    response.headers["access-control-allow-origin"] = origin
    response.headers["vary"] = "Origin"
    response.headers["access-control-allow-methods"] = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
    response.headers["access-control-allow-headers"] = "authorization, content-type, x-user-id"
    response.headers["access-control-expose-headers"] = "x-vercel-ai-ui-message-stream"
    response.headers["access-control-max-age"] = "600"


async def _route(request: Request, runtime: Runtime) -> Response:
    path = request.url.path.rstrip("/") or "/"
    method = request.method
    try:
        if path == "/healthz" and method == "GET":
            return JSONResponse({"status": "ok"})
        if method == "OPTIONS":
            return Response(status_code=204)
        if runtime.settings.web_enabled and (page := web.page_response(path, method)):
            return page
        if path == "/v1/apps":
            _allow(method, "GET")
            return JSONResponse({"apps": [_app_json(spec) for spec in agents.app_specs()]})
        identity = await runtime.identity.verify(request.headers)
        user_id = identity.user_id
        if path.startswith(admin.PREFIX):
            return await admin.handle(request, runtime, identity)
        if path == "/v1/chat":
            _allow(method, "POST")
            return await _chat(request, runtime, user_id)
        if path == "/v1/sessions":
            _allow(method, "GET")
            return await _list_sessions(request, runtime, user_id)
        if profile.serves(path):
            return await profile.handle(request, runtime, user_id, read_json)
        if path == "/v1/me":
            _allow(method, "DELETE")
            removed = await runtime.erase_user(user_id)
            return JSONResponse({"deleted": True, "records": removed})
        if path.startswith(me.PREFIX):
            return await me.handle(request, runtime, user_id, path)
        app_route = _app_route(method, path)
        if app_route is not None:
            route, found = app_route
            return await route.handler(request, runtime, user_id, found)
        if found := ARTIFACT_PATH.match(path):
            _allow(method, "GET")
            key = _session_key(request, runtime, user_id, found.group(1))
            return await artifact_response(request, runtime, key, found.group(2))
        match = _SESSION_PATH.match(path)
        if match:
            key = _session_key(request, runtime, user_id, match.group(1))
            if method == "GET":
                return await _get_session(request, runtime, key)
            _allow(method, "DELETE")
            if not await runtime.store.delete_session(key):
                raise NotFoundError(f"session {key.session_id!r} not found")
            return Response(status_code=204)
        raise NotFoundError(f"no route for {method} {path}")
    except ConfidantError as error:
        return _error(error)


def _app_route(method: str, path: str) -> tuple[agents.Route, re.Match[str]] | None:
    """The app route for `method path`; 405 when the path is served under other methods."""
    methods: list[str] = []
    for spec in agents.app_specs():
        for route in spec.routes:
            found = re.fullmatch(route.path, path)
            if found:
                if route.method == method:
                    return route, found
                methods.append(route.method)
    if methods:
        raise _MethodNotAllowed(f"use {' or '.join(sorted(set(methods)))}")
    return None


def _app_json(spec: agents.AppSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "skills": [
            {"id": skill.id, "title": skill.title, "description": skill.description}
            for skill in spec.skills
        ],
        "default_skill": spec.default_skill,
        "endpoints": [
            {"method": route.method, "path": route.path, "name": route.name}
            for route in spec.routes
        ],
    }


class _MethodNotAllowed(ConfidantError):
    status = 405
    code = "method_not_allowed"


def _allow(method: str, allowed: str) -> None:
    if method != allowed:
        raise _MethodNotAllowed(f"use {allowed}")


def _app(request: Request, runtime: Runtime) -> str:
    return request.query_params.get("app") or runtime.settings.default_app


def _session_key(request: Request, runtime: Runtime, user_id: str, session_id: str) -> SessionKey:
    if not SESSION_ID_PATTERN.match(session_id):
        raise BadRequestError("malformed session id")
    # The user id comes from the verified identity only: another user's id is never reachable.
    return SessionKey(user_id, _app(request, runtime), session_id)


async def read_json(request: Request, limit: int) -> Any:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLargeError(f"the body is larger than {limit} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise PayloadTooLargeError(f"the body is larger than {limit} bytes")
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequestError(f"the body is not valid JSON: {exc}") from exc


async def _chat(request: Request, runtime: Runtime, user_id: str) -> Response:
    settings = runtime.settings
    body = await read_json(request, settings.max_body_bytes)
    chat_request = parse_chat_request(
        body,
        default_app=settings.default_app,
        default_locale=settings.default_locale,
        max_message_chars=settings.max_message_chars,
        app=request.query_params.get("app"),
    )
    return await chat_reply(request, runtime, user_id, chat_request)


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
            return JSONResponse(payload, status_code=result.error.status)
        return JSONResponse(
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

    async def frames() -> AsyncIterator[bytes]:
        async for part in prepared.stream():
            yield sse_frame(part)
        yield DONE_FRAME

    return StreamingResponse(frames(), headers=HEADERS)


def _session_json(record: SessionRecord) -> dict[str, Any]:
    return {
        "id": record.key.session_id,
        "app": record.key.app,
        "state": record.state,
        "summary": record.summary,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "event_count": record.next_seq,
        "busy": record.lease_holder is not None,
        "progress": _progress(record),
    }


def _progress(record: SessionRecord) -> dict[str, Any] | None:
    """Where the session stands in its app's protocol (the page's bar after a reload)."""
    try:
        reader = agents.app_spec(record.key.app).progress
    except agents.UnknownAppError:
        return None
    return reader(record.state) if reader else None


async def _list_sessions(request: Request, runtime: Runtime, user_id: str) -> Response:
    records = await runtime.store.list_sessions(app=_app(request, runtime), user_id=user_id)
    newest_first = sorted(records, key=lambda r: r.updated_at, reverse=True)
    return JSONResponse({"sessions": [_session_json(r) for r in newest_first]})


def _page_args(request: Request) -> tuple[int, int | None]:
    try:
        size = int(request.query_params.get("page_size", "50"))
        token = request.query_params.get("page_token")
        after = int(token) if token else None
    except ValueError as exc:
        raise BadRequestError("page_size and page_token must be integers") from exc
    if not 1 <= size <= _MAX_PAGE:
        raise BadRequestError(f"page_size must be between 1 and {_MAX_PAGE}")
    return size, after


async def _get_session(request: Request, runtime: Runtime, key: SessionKey) -> Response:
    size, after = _page_args(request)
    page, summary = await asyncio.gather(  # 404 if missing
        runtime.store.read_events(key, after_seq=after, limit=size),
        runtime.job_store.summary(key.user_id, key.app, key.session_id),
    )
    events = [
        {"seq": stored["seq"]}
        | Event.model_validate_json(stored["json"]).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        for stored in page.events
    ]
    return JSONResponse(
        {
            "session": _session_json(page.record) | {"summary": summary},
            "events": events,
            "next_page_token": None if page.next_after_seq is None else str(page.next_after_seq),
        }
    )
