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

from typing import Any

from starlette.responses import Response

import agents
from agents.registry import Route
from confidant.agentconfig import AgentConfig, AgentConfigService, ConfigVersion
from confidant.agentconfig.config import parse_agent_config
from confidant.errors import ConfidantError, NotFoundError
from confidant.http import schemas
from confidant.http.routing import Call, json_reply
from confidant.ports import Identity
from confidant.settings import Settings

PREFIX = "/v1/admin/"
MAX_CONFIG_BODY_BYTES = 64_000
_APP = r"/v1/admin/apps/(?P<app>[A-Za-z0-9_-]{1,64})"  # other names: 404, like unknown ones


class _Unavailable(ConfidantError):
    status = 503
    code = "unavailable"


def is_admin(identity: Identity, settings: Settings) -> bool:
    if identity.claims.get(settings.admin_claim) is True:
        return True
    # The header verifier exists only in local mode (Settings refuse it in the cloud).
    return settings.auth == "header" and identity.user_id in settings.admin_users


def _service(call: Call) -> tuple[str, AgentConfigService]:
    """The path's app (404 when it is not served) and the registry (503 when not configured)."""
    app = call.params.app
    if app not in agents.app_names():
        raise NotFoundError(f"unknown app {app!r}; served apps: {', '.join(agents.app_names())}")
    service = call.runtime.agent_configs
    if service is None:
        raise _Unavailable("the agent registry is not configured")
    return app, service


async def get_config(call: Call) -> Response:
    app, service = _service(call)
    # An admin reads the store, not this instance's cache.
    return _config_json(app, await service.store.head(app))


async def put_config(call: Call) -> Response:
    app, service = _service(call)
    config = parse_agent_config(call.body, models=service.models, allow_stdio=service.allow_stdio)
    return _config_json(app, await service.update(app, config, author=call.user_id))


async def list_versions(call: Call) -> Response:
    app, service = _service(call)
    versions = await service.versions(app, limit=call.params.limit)
    listed = schemas.VersionList(app=app, versions=versions)
    return json_reply(listed)


async def rollback(call: Call) -> Response:
    app, service = _service(call)
    version = await service.rollback(app, call.body.version, author=call.user_id)
    return _config_json(app, version)


def _config_json(app: str, version: ConfigVersion | None) -> Response:
    reply = schemas.ConfigReply(
        app=app,
        version=version.version if version else 0,
        author=version.author if version else None,
        created_at=version.created_at.isoformat() if version else None,
        rolled_back_from=version.rolled_back_from if version else None,
        config=version.config if version else AgentConfig(),
    )
    return json_reply(reply)


def _raw(body: Any, call: Call) -> Any:
    # Validated by the handler, against this deployment's allowed models (parse_agent_config).
    return body


# Every admin route: 403 without the admin claim, 404 for an app that is not served.
_ADMIN: dict[str, Any] = {"access": "admin", "errors": (404,), "params": schemas.AdminAppParams}
_CONFIG_BODY: dict[str, Any] = {"body_limit": MAX_CONFIG_BODY_BYTES}
_CONFIG = {200: schemas.ConfigReply}
ROUTES: tuple[Route, ...] = (
    Route(
        "GET",
        rf"{_APP}/config",
        get_config,
        "the app's current agent config and its version",
        responses=_CONFIG,
        **_ADMIN,
    ),
    Route(
        "PUT",
        rf"{_APP}/config",
        put_config,
        "store a new version (the body is the whole config)",
        body=AgentConfig,
        parse_body=_raw,
        responses=_CONFIG,
        **_CONFIG_BODY,
        **_ADMIN,
    ),
    Route(
        "GET",
        rf"{_APP}/versions",
        list_versions,
        "every version, newest first",
        responses={200: schemas.VersionList},
        **(_ADMIN | {"params": schemas.VersionsParams}),
    ),
    Route(
        "POST",
        rf"{_APP}/rollback",
        rollback,
        "a new version carrying version n's config",
        body=schemas.RollbackBody,
        responses=_CONFIG,
        **_CONFIG_BODY,
        **_ADMIN,
    ),
)
