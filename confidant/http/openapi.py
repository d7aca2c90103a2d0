"""`GET /openapi.json`: the OpenAPI 3.1 document, generated from the route table.

Nothing here is written beside the handlers: each operation comes from its `agents.Route`
declaration (method, path, params / body / response models, errors), and the schemas from
the same pydantic models the dispatcher validates with (`model_json_schema` is JSON Schema
2020-12, which OpenAPI 3.1 uses as is).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, RootModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from agents.registry import Route, RouteReply
from confidant.http.routing import compiled, params_model
from confidant.http.schemas import ErrorBody

REF_TEMPLATE = "#/components/schemas/{model}"
_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>")
_STATUS_TEXT = {
    200: "OK",
    201: "Created",
    204: "No content",
    400: "Bad input (the reason is in the message)",
    401: "No verified identity",
    403: "Not allowed (admin endpoints without the admin claim)",
    404: "Not found (also another user's)",
    409: "Conflict (the session is busy or changed)",
    413: "The body is too large",
    429: "Too many requests",
    503: "A backend is unavailable; nothing was stored, the request may be retried",
}
SECURITY_SCHEMES = {
    "firebase": {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": "A Firebase / Identity Platform ID token (cloud mode)",
    },
    "userIdHeader": {
        "type": "apiKey",
        "in": "header",
        "name": "X-User-Id",
        "description": "The user id itself (local mode only)",
    },
}


def path_template(regex: str) -> tuple[str, dict[str, str]]:
    """`/v1/x/(?P<id>[a-z]+)` → (`/v1/x/{id}`, {"id": "[a-z]+"}); the rest must be literal."""
    template, groups, position = "", {}, 0
    for found in _GROUP.finditer(regex):
        if found.start() < position:
            continue  # a group nested in one already read
        template += regex[position : found.start()]
        depth, end = 1, found.end()
        while depth:
            char = regex[end]
            if char == "\\":
                end += 1
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            end += 1
        groups[found["name"]] = regex[found.end() : end - 1]
        template += "{" + found["name"] + "}"
        position = end
    template += regex[position:]
    template = re.sub(r"\\(.)", r"\1", template)
    if re.search(r"[()\[\]{}*+?|^$]", re.sub(r"\{\w+\}", "", template)):
        raise ValueError(f"route path {regex!r}: only named groups may be patterns")
    return template, groups


def error_statuses(route: Route) -> list[int]:
    statuses = set(route.errors)
    if route.rate_limited:  # http/limits.py
        statuses.add(429)
    if route.access != "public":
        statuses |= {401, 503}
    if route.access == "admin":
        statuses.add(403)
    if route.body is not None or route.parse_body is not None:
        statuses |= {400, 413}
    if compiled(route.path).groupindex or route.params is not None:
        statuses.add(400)
    return sorted(statuses)


def _reply_models(reply: RouteReply) -> Iterable[type[BaseModel]]:
    if isinstance(reply, type):
        yield reply
    elif isinstance(reply, Mapping):
        yield from (model for model in reply.values() if model is not None)


def _non_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A parameter's schema without `null`: a query string has no null."""
    options = schema.get("anyOf")
    if not options:
        return schema
    kept = [option for option in options if option != {"type": "null"}]
    rest = {key: value for key, value in schema.items() if key not in ("anyOf", "default")}
    if schema.get("default") is not None:
        rest["default"] = schema["default"]
    return {**kept[0], **rest} if len(kept) == 1 else {**rest, "anyOf": kept}


SSE = "text/event-stream"


class _Document:
    def __init__(self, routes: Sequence[Route], stream_part: type[BaseModel]) -> None:
        self.routes = routes
        self.stream_part = stream_part
        wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = [
            (ErrorBody, "serialization"),
            (stream_part, "serialization"),
        ]
        for route in routes:
            if route.body is not None:
                wanted.append((route.body, "validation"))
            for reply in route.responses.values():
                wanted += [(model, "serialization") for model in _reply_models(reply)]
        unique = list(dict.fromkeys(wanted))
        self.refs, defs = models_json_schema(unique, ref_template=REF_TEMPLATE)
        self.schemas: dict[str, Any] = dict(defs.get("$defs", {}))

    def ref(self, model: type[BaseModel], mode: JsonSchemaMode) -> dict[str, Any]:
        return self.refs[(model, mode)]

    def content(self, reply: RouteReply) -> dict[str, Any] | None:
        if reply is None:
            return None
        if isinstance(reply, str):
            return {reply: {"schema": {"type": "string"}}}
        if isinstance(reply, type):
            return {"application/json": {"schema": self.ref(reply, "serialization")}}
        content = {}
        for media, model in reply.items():
            if model is None and media == SSE:
                content[media] = {"schema": self.sse_event()}
            else:
                content[media] = {"schema": self.ref(model, "serialization") if model else {}}
        return content

    def sse_event(self) -> dict[str, Any]:
        """One server-sent event of the chat stream (before OpenAPI 3.2's `itemSchema`, a
        `text/event-stream` schema describes each event): its `data` is a StreamPart as JSON,
        or `[DONE]`, the stream's last event."""
        self.schemas["ServerSentEvent"] = {
            "type": "object",
            "description": "One `data:` frame of the AI SDK UI message stream",
            "properties": {
                "data": {
                    "type": "string",
                    "if": {"const": "[DONE]"},
                    "else": {
                        "contentMediaType": "application/json",
                        "contentSchema": self.ref(self.stream_part, "serialization"),
                    },
                },
                "event": {"type": "string"},
                "id": {"type": "string"},
            },
            "required": ["data"],
        }
        return {"$ref": REF_TEMPLATE.format(model="ServerSentEvent")}

    def parameters(self, route: Route, path_groups: dict[str, str]) -> list[dict[str, Any]]:
        model = params_model(route)
        schema = model.model_json_schema(ref_template=REF_TEMPLATE)
        self.schemas.update(schema.get("$defs", {}))
        required = set(schema.get("required", ()))
        found = []
        for name, prop in schema.get("properties", {}).items():
            prop = _non_null({k: v for k, v in prop.items() if k != "title"})
            where = "path" if name in path_groups else "query"
            if where == "path" and "pattern" not in prop:
                prop["pattern"] = f"^(?:{path_groups[name]})$"
            parameter = {"name": name, "in": where, "required": where == "path" or name in required}
            if "description" in prop:
                parameter["description"] = prop.pop("description")
            found.append(parameter | {"schema": prop})
        return found

    def operation(self, route: Route) -> tuple[str, str, dict[str, Any]]:
        template, groups = path_template(route.path)
        responses: dict[str, Any] = {}
        for status, reply in route.responses.items():
            responses[str(status)] = {"description": _STATUS_TEXT.get(status, "OK")}
            if (content := self.content(reply)) is not None:
                responses[str(status)]["content"] = content
        for status in error_statuses(route):
            responses.setdefault(str(status), {"description": _STATUS_TEXT.get(status, "Error")})
            responses[str(status)].setdefault("content", self.content(ErrorBody))
        if groups:
            # functions-framework routes `/{path:path}` before our code, and Starlette's path
            # pattern stops at a newline: such a path gets the framework's plain-text 404.
            responses.setdefault("404", {"description": _STATUS_TEXT[404]})
            content = responses["404"].setdefault("content", self.content(ErrorBody))
            content["text/plain"] = {"schema": {"type": "string"}}
        operation: dict[str, Any] = {
            "operationId": _operation_id(route.method, template),
            "summary": route.name or f"{route.method} {template}",
            "tags": [_tag(template)],
            "responses": responses,
        }
        if parameters := self.parameters(route, groups):
            operation["parameters"] = parameters
        if route.body is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": self.ref(route.body, "validation")}},
            }
        operation["security"] = (
            [] if route.access == "public" else [{"firebase": []}, {"userIdHeader": []}]
        )
        return template, route.method.lower(), operation

    def render(self, title: str, version: str, description: str) -> dict[str, Any]:
        paths: dict[str, dict[str, Any]] = {}
        for route in self.routes:
            template, method, operation = self.operation(route)
            paths.setdefault(template, {})[method] = operation
        return {
            "openapi": "3.1.0",
            "info": {"title": title, "version": version, "description": description},
            "paths": paths,
            "components": {"schemas": self.schemas, "securitySchemes": SECURITY_SCHEMES},
        }


def _operation_id(method: str, template: str) -> str:
    words = re.sub(r"[^A-Za-z0-9]+", "_", template.replace("{", "by_")).strip("_")
    return f"{method.lower()}_{words}"


def _tag(template: str) -> str:
    segments = [s for s in template.split("/") if s and s != "v1" and not s.startswith("{")]
    return segments[0] if segments else "platform"


def openapi_document(
    routes: Sequence[Route],
    *,
    stream_part: type[BaseModel],
    title: str,
    version: str,
    description: str = "",
) -> dict[str, Any]:
    """The document of `routes`; a `text/event-stream` reply declared without a model is a
    stream of `stream_part` frames (the chat stream)."""
    return _Document(routes, stream_part).render(title, version, description)


def named_root(name: str, annotation: Any) -> type[RootModel[Any]]:
    """A root model of `annotation` shown in the document as `name` (e.g. the StreamPart union)."""
    return type(name, (RootModel[annotation],), {"__module__": __name__})
