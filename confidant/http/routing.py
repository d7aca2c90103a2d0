"""Dispatch on the declared route table (`agents.Route`): match, validate, call.

The same declarations feed `/openapi.json` (confidant/http/openapi.py), so what the document
promises is what the handlers are given: parameters and bodies are validated here, with the
route's own pydantic models, before a handler runs (400 with pydantic's reasons).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError, create_model
from starlette.requests import Request
from starlette.responses import JSONResponse

from agents.registry import Route
from confidant.errors import (
    BadRequestError,
    ConfidantError,
    PayloadTooLargeError,
    validation_reasons,
)
from confidant.ports import Identity


class MethodNotAllowedError(ConfidantError):
    status = 405
    code = "method_not_allowed"

    def __init__(self, allowed: list[str]) -> None:
        super().__init__(f"use {' or '.join(allowed)}")
        self.allowed = allowed

    @property
    def headers(self) -> dict[str, str]:
        return {"allow": ", ".join(self.allowed)}  # a 405 must say what is allowed (RFC 9110)


@dataclass(frozen=True)
class Call:
    """What a route handler gets: the request and its validated parts."""

    request: Request
    runtime: Any  # confidant.bootstrap.Runtime (typed loosely: bootstrap imports agents/)
    identity: Identity | None  # None on public routes
    params: Any  # an instance of the route's params model
    body: Any = None  # the validated body (the body model, or what `parse_body` returned)

    @property
    def user_id(self) -> str:
        assert self.identity is not None, "a public route has no caller"
        return self.identity.user_id


def json_reply(model: BaseModel, status: int = 200) -> JSONResponse:
    """A response model as JSON: what the document promises is what is sent."""
    return JSONResponse(model.model_dump(mode="json"), status_code=status)


@cache
def compiled(path: str) -> re.Pattern[str]:
    return re.compile(path)


@cache
def params_model(route: Route) -> type[BaseModel]:
    """The route's params model; by default one string field per named group of its path."""
    if route.params is not None:
        return route.params
    groups = compiled(route.path).groupindex
    fields: dict[str, Any] = {name: (str, ...) for name in groups}
    return create_model(f"Params{abs(hash(route.path))}", **fields)


def find_route(
    routes: tuple[Route, ...], method: str, path: str
) -> tuple[Route | None, re.Match[str] | None, list[Route]]:
    """The route for `method path` with its match, and every route serving the path."""
    serving: list[tuple[Route, re.Match[str]]] = []
    for route in routes:
        found = compiled(route.path).fullmatch(path)
        if found is not None:
            serving.append((route, found))
    for route, found in serving:
        if route.method == method:
            return route, found, [r for r, _ in serving]
    return None, None, [r for r, _ in serving]


def method_not_allowed(serving: list[Route]) -> MethodNotAllowedError:
    return MethodNotAllowedError(sorted({r.method for r in serving}))


def validated_params(route: Route, request: Request, found: re.Match[str]) -> BaseModel:
    raw = dict(request.query_params) | found.groupdict()  # a path parameter wins over a query
    try:
        return params_model(route).model_validate(raw)
    except ValidationError as exc:
        raise BadRequestError(f"invalid parameters: {validation_reasons(exc)}") from None


async def read_json(request: Request, limit: int) -> Any:
    # Read once per request: a rate-limit check may have read it already (crisis messages).
    cached = getattr(request.state, "json_body", None)
    if cached is not None:
        size, parsed = cached
        if size > limit:
            raise PayloadTooLargeError(f"the body is larger than {limit} bytes")
        return parsed
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLargeError(f"the body is larger than {limit} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise PayloadTooLargeError(f"the body is larger than {limit} bytes")
    try:
        parsed = json.loads(body)
        # JSON may spell a lone UTF-16 surrogate (`"\ud800"`) that no UTF-8 text can hold: it
        # would pass validation and then fail when the turn is streamed or stored.
        json.dumps(parsed, ensure_ascii=False).encode()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequestError(f"the body is not valid JSON: {exc}") from exc
    except UnicodeEncodeError as exc:
        raise BadRequestError(f"the body is not valid Unicode text: {exc.reason}") from exc
    except RecursionError:  # e.g. 10 KB of `[`: the parser's depth, not a server fault
        raise BadRequestError("the body's JSON is nested too deeply") from None
    request.state.json_body = (len(body), parsed)
    return parsed


async def validated_body(route: Route, call: Call) -> Any:
    """The route's body, read within its limit and validated (None for a route without one)."""
    if route.body is None and route.parse_body is None:
        return None
    limit = route.body_limit or call.runtime.settings.max_body_bytes
    raw = await read_json(call.request, limit)
    if route.parse_body is not None:
        return route.parse_body(raw, call)
    assert route.body is not None
    try:
        return route.body.model_validate(raw)
    except ValidationError as exc:
        raise BadRequestError(f"invalid body: {validation_reasons(exc)}") from None
