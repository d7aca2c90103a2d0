"""Platform endpoints on the caller's unified profile.

GET   /v1/me/profile                              the whole profile
PATCH /v1/me/profile                              merge preferences / user-editable account fields
GET   /v1/me/reports/{skill}/{protocol_id}        a completed protocol's report, as Markdown

`DELETE /v1/me` (api.py) removes the profile with everything else the user owns.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from confidant.errors import BadRequestError, ConfidantError, NotFoundError
from confidant.profiles.model import Profile, ProfilePatch
from confidant.profiles.ops import MergeOp, ProfileOp, get_path

PROFILE_PATH = "/v1/me/profile"
_REPORT_PATH = re.compile(r"^/v1/me/reports/([A-Za-z0-9_-]{1,64})/([A-Za-z0-9_-]{1,64})$")
MARKDOWN = "text/markdown; charset=utf-8"


class _MethodNotAllowed(ConfidantError):
    status = 405
    code = "method_not_allowed"


def serves(path: str) -> bool:
    return path == PROFILE_PATH or _REPORT_PATH.match(path) is not None


async def handle(request: Request, runtime: Any, user_id: str, read_json: Any) -> Response:
    """Dispatch one `/v1/me/...` profile request (api.py checks `serves` first)."""
    path = request.url.path.rstrip("/")
    store = runtime.store
    report = _REPORT_PATH.match(path)
    if report:
        _allow(request.method, ("GET",))
        return await _report(store, user_id, report.group(1), report.group(2))
    _allow(request.method, ("GET", "PATCH"))
    if request.method == "GET":
        return JSONResponse(_profile_json(await store.load_profile(user_id)))
    body = await read_json(request, runtime.settings.max_body_bytes)
    ops = patch_ops(body)
    return JSONResponse(_profile_json(await store.update_profile(user_id, ops)))


def _allow(method: str, allowed: tuple[str, ...]) -> None:
    if method not in allowed:
        raise _MethodNotAllowed(f"use {' or '.join(allowed)}")


def _profile_json(stored: dict[str, Any]) -> dict[str, Any]:
    return {"profile": Profile.from_stored(stored).model_dump(mode="json")}


def patch_ops(body: Any) -> list[ProfileOp]:
    """The merge ops of a PATCH body; 400 with the reason for anything not user-editable."""
    try:
        patch = ProfilePatch.model_validate(body)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}"
            for err in exc.errors()
        )
        raise BadRequestError(f"invalid profile patch: {problems}") from None
    ops: list[ProfileOp] = []
    for section in ("account", "preferences"):
        value = getattr(patch, section)
        if value is not None:
            # Only the fields the body names: an absent field stays as stored.
            fields = value.model_dump(exclude_unset=True)
            if fields:
                ops.append(MergeOp((section,), fields))
    if not ops:
        raise BadRequestError("the patch changes nothing: send `account` and/or `preferences`")
    return ops


async def _report(store: Any, user_id: str, skill: str, protocol_id: str) -> Response:
    stored = await store.load_profile(user_id)
    report = get_path(stored, ("skills", skill, "reports", protocol_id))
    if not isinstance(report, dict) or not isinstance(report.get("markdown"), str):
        raise NotFoundError(f"no completed {protocol_id!r} report for skill {skill!r}")
    filename = f"{skill}-{protocol_id}.md"
    return Response(
        report["markdown"],
        media_type=MARKDOWN,
        headers={"content-disposition": f'attachment; filename="{filename}"'},
    )
