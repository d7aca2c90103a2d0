"""Admin endpoints of the agent registry (admins only: 403 for everyone else).

GET    /v1/admin/apps/{app}/config      the app's current agent config and its version
PUT    /v1/admin/apps/{app}/config      store a new version (the body is the whole config)
GET    /v1/admin/apps/{app}/versions    every version, newest first (`?limit=`, default 50)
POST   /v1/admin/apps/{app}/rollback    `{"version": n}`: a new version with version n's config

An admin is a caller whose Firebase ID token carries the custom claim `CONFIDANT_ADMIN_CLAIM`
(default `admin`) set to true; in local mode (`X-User-Id` identity) a user listed in
`CONFIDANT_ADMIN_USERS`.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

import agents
from confidant.agentconfig import AgentConfig, AgentConfigService, ConfigVersion
from confidant.agentconfig.config import parse_agent_config
from confidant.bootstrap import Runtime
from confidant.errors import BadRequestError, ConfidantError, ForbiddenError, NotFoundError
from confidant.ports import Identity
from confidant.settings import Settings

PREFIX = "/v1/admin/"
MAX_CONFIG_BODY_BYTES = 64_000
MAX_VERSIONS_PAGE = 200
_PATH = re.compile(r"^/v1/admin/apps/(?P<app>[^/]+)/(?P<what>config|versions|rollback)$")
_METHODS = {"config": ("GET", "PUT"), "versions": ("GET",), "rollback": ("POST",)}


class _MethodNotAllowed(ConfidantError):
    status = 405
    code = "method_not_allowed"


class _Unavailable(ConfidantError):
    status = 503
    code = "unavailable"


def is_admin(identity: Identity, settings: Settings) -> bool:
    if identity.claims.get(settings.admin_claim) is True:
        return True
    # The header verifier exists only in local mode (Settings refuse it in the cloud).
    return settings.auth == "header" and identity.user_id in settings.admin_users


async def handle(request: Request, runtime: Runtime, identity: Identity) -> Response:
    if not is_admin(identity, runtime.settings):
        raise ForbiddenError("this endpoint is for admins only")
    match = _PATH.match(request.url.path.rstrip("/"))
    if match is None:
        raise NotFoundError(f"no route for {request.method} {request.url.path}")
    app, what = match["app"], match["what"]
    if request.method not in _METHODS[what]:
        raise _MethodNotAllowed(f"use {' or '.join(_METHODS[what])}")
    if app not in agents.app_names():
        raise NotFoundError(f"unknown app {app!r}; served apps: {', '.join(agents.app_names())}")
    service = runtime.agent_configs
    if service is None:
        raise _Unavailable("the agent registry is not configured")
    if what == "versions":
        versions = await service.versions(app, limit=_limit(request))
        return JSONResponse({"app": app, "versions": [v.to_json() for v in versions]})
    if what == "rollback":
        version = await service.rollback(
            app, _rollback_version(await _body(request, runtime)), author=identity.user_id
        )
        return JSONResponse(_config_json(app, version))
    if request.method == "PUT":
        config = parse_agent_config(
            await _body(request, runtime), models=service.models, allow_stdio=service.allow_stdio
        )
        return JSONResponse(
            _config_json(app, await service.update(app, config, author=identity.user_id))
        )
    return JSONResponse(_config_json(app, await _current(service, app)))


async def _current(service: AgentConfigService, app: str) -> ConfigVersion | None:
    # An admin reads the store, not this instance's cache.
    return await service.store.head(app)


def _config_json(app: str, version: ConfigVersion | None) -> dict[str, Any]:
    config = version.config if version else AgentConfig()
    return {
        "app": app,
        "version": version.version if version else 0,
        "author": version.author if version else None,
        "created_at": version.created_at.isoformat() if version else None,
        "rolled_back_from": version.rolled_back_from if version else None,
        "config": config.model_dump(mode="json"),
    }


async def _body(request: Request, runtime: Runtime) -> Any:
    from confidant.http.api import read_json

    return await read_json(request, MAX_CONFIG_BODY_BYTES)


def _rollback_version(body: Any) -> int:
    version = body.get("version") if isinstance(body, dict) else None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BadRequestError('the body must be {"version": n} with n a stored version (>= 1)')
    return version


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit", "50")
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_VERSIONS_PAGE:
        raise BadRequestError(f"limit must be an integer between 1 and {MAX_VERSIONS_PAGE}")
    return int(raw)
