"""Platform endpoints on the caller's unified profile.

GET   /v1/me/profile                              the whole profile
PATCH /v1/me/profile                              merge preferences / user-editable account fields
GET   /v1/me/reports/{skill}/{protocol_id}        a completed protocol's report, as Markdown

`DELETE /v1/me` (api.py) removes the profile with everything else the user owns.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from starlette.responses import Response

from agents.registry import Route
from confidant.errors import BadRequestError, NotFoundError, validation_reasons
from confidant.http.routing import Call, json_reply
from confidant.http.schemas import ProfileReply
from confidant.profiles.model import Profile, ProfilePatch
from confidant.profiles.ops import MergeOp, ProfileOp, get_path

MARKDOWN = "text/markdown; charset=utf-8"
_NAME = r"[A-Za-z0-9_-]{1,64}"


async def get_profile(call: Call) -> Response:
    return _profile_json(await call.runtime.store.load_profile(call.user_id))


async def patch_profile(call: Call) -> Response:
    return _profile_json(await call.runtime.store.update_profile(call.user_id, call.body))


def _profile_json(stored: dict[str, Any]) -> Response:
    reply = ProfileReply(profile=Profile.from_stored(stored))
    return json_reply(reply)


def patch_ops(body: Any, call: Any = None) -> list[ProfileOp]:
    """The merge ops of a PATCH body; 400 with the reason for anything not user-editable."""
    try:
        patch = ProfilePatch.model_validate(body)
    except ValidationError as exc:
        raise BadRequestError(f"invalid profile patch: {validation_reasons(exc)}") from None
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


async def get_report(call: Call) -> Response:
    skill, protocol_id = call.params.skill, call.params.protocol_id
    stored = await call.runtime.store.load_profile(call.user_id)
    report = get_path(stored, ("skills", skill, "reports", protocol_id))
    if not isinstance(report, dict) or not isinstance(report.get("markdown"), str):
        raise NotFoundError(f"no completed {protocol_id!r} report for skill {skill!r}")
    filename = f"{skill}-{protocol_id}.md"
    return Response(
        report["markdown"],
        media_type=MARKDOWN,
        headers={"content-disposition": f'attachment; filename="{filename}"'},
    )


ROUTES: tuple[Route, ...] = (
    Route(
        "GET",
        "/v1/me/profile",
        get_profile,
        "the caller's unified profile",
        responses={200: ProfileReply},
    ),
    Route(
        "PATCH",
        "/v1/me/profile",
        patch_profile,
        "merge preferences and the user-editable account fields",
        body=ProfilePatch,
        parse_body=patch_ops,
        responses={200: ProfileReply},
    ),
    Route(
        "GET",
        rf"/v1/me/reports/(?P<skill>{_NAME})/(?P<protocol_id>{_NAME})",
        get_report,
        "the Markdown report of the caller's last completed run of a protocol",
        responses={200: "text/markdown"},
        errors=(404,),
    ),
)
