"""`GET /v1/sessions/{id}/artifacts[/{filename}]`: the files a session's agents saved.

Owner checks: the user id comes from the verified identity, the session must be the caller's
(404 otherwise, as for a missing one), and the artifact service is addressed by that same
(app, user, session), so another user's files are never reachable.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from confidant.errors import NotFoundError
from confidant.http.routing import Call, json_reply
from confidant.http.schemas import ArtifactInfo, ArtifactList
from confidant.sessions.records import SessionKey


async def _scope(call: Call) -> tuple[Any, dict[str, str]]:
    """The artifact service and the caller's session it is addressed with."""
    params, runtime = call.params, call.runtime
    key = SessionKey(call.user_id, params.app or runtime.settings.default_app, params.session_id)
    service = runtime.artifacts
    if service is None:
        raise NotFoundError("artifacts are not enabled on this deployment")
    if await runtime.store.load(key) is None:
        raise NotFoundError(f"session {key.session_id!r} not found")
    return service, {"app_name": key.app, "user_id": key.user_id, "session_id": key.session_id}


async def list_artifacts(call: Call) -> Response:
    service, scope = await _scope(call)
    names = await service.list_artifact_keys(**scope)
    listed = [
        ArtifactInfo(filename=name, versions=await service.list_versions(filename=name, **scope))
        for name in names
        if not name.startswith("user:")  # user-scoped files are not this session's
    ]
    reply = ArtifactList(session_id=call.params.session_id, artifacts=listed)
    return json_reply(reply)


async def download_artifact(call: Call) -> Response:
    service, scope = await _scope(call)
    filename = call.params.filename
    part = await service.load_artifact(filename=filename, version=call.params.version, **scope)
    if part is None or part.inline_data is None or part.inline_data.data is None:
        raise NotFoundError(f"artifact {filename!r} not found")
    return Response(
        part.inline_data.data,
        media_type=part.inline_data.mime_type or "application/octet-stream",
        headers={"content-disposition": f'attachment; filename="{filename}"'},
    )
