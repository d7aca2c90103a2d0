"""`GET /v1/sessions/{id}/artifacts[/{filename}]`: the files a session's agents saved.

Owner checks: the user id comes from the verified identity, the session must be the caller's
(404 otherwise, as for a missing one), and the artifact service is addressed by that same
(app, user, session), so another user's files are never reachable.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from confidant.bootstrap import Runtime
from confidant.errors import BadRequestError, NotFoundError
from confidant.sessions.records import SessionKey

ARTIFACT_PATH = re.compile(r"^/v1/sessions/([^/]+)/artifacts(?:/([^/]+))?$")
_FILENAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


async def artifact_response(
    request: Request, runtime: Runtime, key: SessionKey, filename: str | None
) -> Response:
    service = runtime.artifacts
    if service is None:
        raise NotFoundError("artifacts are not enabled on this deployment")
    if await runtime.store.load(key) is None:
        raise NotFoundError(f"session {key.session_id!r} not found")
    scope = {"app_name": key.app, "user_id": key.user_id, "session_id": key.session_id}
    if filename is None:
        names = await service.list_artifact_keys(**scope)
        listed = [
            {"filename": name, "versions": await service.list_versions(filename=name, **scope)}
            for name in names
            if not name.startswith("user:")  # user-scoped files are not this session's
        ]
        return JSONResponse({"session_id": key.session_id, "artifacts": listed})
    if not _FILENAME.match(filename):
        raise BadRequestError("malformed artifact name")
    raw_version = request.query_params.get("version")
    if raw_version is not None and not raw_version.isdigit():
        raise BadRequestError("`version` must be a non-negative integer")
    version = int(raw_version) if raw_version is not None else None
    part = await service.load_artifact(filename=filename, version=version, **scope)
    if part is None or part.inline_data is None or part.inline_data.data is None:
        raise NotFoundError(f"artifact {filename!r} not found")
    return Response(
        part.inline_data.data,
        media_type=part.inline_data.mime_type or "application/octet-stream",
        headers={"content-disposition": f'attachment; filename="{filename}"'},
    )
