"""The relationship app's HTTP endpoints (AppSpec.routes).

POST   /v1/relationship/analyze|advise|script   one specialist answers (no router); same body,
                                                stream protocol, identity, crisis guard and
                                                session semantics as POST /v1/chat
GET    /v1/relationship/persons                 the caller's persons
POST   /v1/relationship/persons                 create one (201)
GET    /v1/relationship/persons/{id}            one person
PUT    /v1/relationship/persons/{id}            replace it
DELETE /v1/relationship/persons/{id}            delete it (204)
GET    /v1/relationship/self-profile            the caller's self-profile
PUT    /v1/relationship/self-profile            replace it
GET    /v1/relationship/proposals?status=       profile proposals (pending by default; `all`)
POST   /v1/relationship/proposals/{id}/accept   apply a pending proposal
POST   /v1/relationship/proposals/{id}/reject   reject it (never proposed again verbatim)

Handlers receive `(request, runtime, user_id, match)`; the user id comes from the verified
identity only. The HTTP layer is imported when a handler runs: agents/ is imported by it.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agents.registry import Route
from agents.relationship.roles import STRATEGY_MODES
from confidant.errors import BadRequestError, ConfidantError
from confidant.relationship.service import RelationshipService

PREFIX = "/v1/relationship"
MAX_PROFILE_BODY_BYTES = 32_000
_STRATEGY_PATH = rf"{PREFIX}/(?P<mode>{'|'.join(STRATEGY_MODES)})"
_PERSONS_PATH = rf"{PREFIX}/persons"
_PERSON_PATH = rf"{PREFIX}/persons/(?P<person_id>[A-Za-z0-9_-]{{1,64}})"
_SELF_PROFILE_PATH = rf"{PREFIX}/self-profile"
_PROPOSALS_PATH = rf"{PREFIX}/proposals"
_DECISION_PATH = (
    rf"{PREFIX}/proposals/(?P<proposal_id>[A-Za-z0-9_-]{{1,64}})/(?P<verdict>accept|reject)"
)


class _Unavailable(ConfidantError):
    status = 503
    code = "unavailable"


def _service(runtime: Any) -> RelationshipService:
    service = getattr(runtime, "relationship", None)
    if service is None:
        raise _Unavailable("the relationship store is not configured")
    return service


async def _body(request: Request, runtime: Any, limit: int) -> Any:
    from confidant.http.api import read_json

    return await read_json(request, limit)


async def _object_body(request: Request, runtime: Any) -> dict[str, Any]:
    body = await _body(request, runtime, MAX_PROFILE_BODY_BYTES)
    if not isinstance(body, dict):
        raise BadRequestError("the body must be a JSON object")
    return body


async def strategy(request: Request, runtime: Any, user_id: str, match: re.Match[str]) -> Response:
    """A chat turn whose options force one specialist: the one ChatService lifecycle."""
    from agents.relationship.agent import APP_NAME
    from confidant.chat.requests import parse_chat_request
    from confidant.http.api import chat_reply

    settings = runtime.settings
    body = await _body(request, runtime, settings.max_body_bytes)
    if isinstance(body, dict) and body.get("app", APP_NAME) != APP_NAME:
        raise BadRequestError(f"this endpoint serves the {APP_NAME} app only")
    chat_request = parse_chat_request(
        body,
        default_app=APP_NAME,
        default_locale=settings.default_locale,
        max_message_chars=settings.max_message_chars,
        app=APP_NAME,
    )
    if chat_request.options.get("mode") not in (None, match["mode"]):
        raise BadRequestError(f"`mode` contradicts the endpoint ({match['mode']})")
    options = {**chat_request.options, "mode": match["mode"]}
    return await chat_reply(
        request, runtime, user_id, chat_request.model_copy(update={"options": options})
    )


async def list_persons(
    request: Request, runtime: Any, user_id: str, match: re.Match[str]
) -> Response:
    persons = await _service(runtime).list_persons(user_id)
    return JSONResponse({"persons": [p.model_dump() for p in persons]})


async def create_person(
    request: Request, runtime: Any, user_id: str, match: re.Match[str]
) -> Response:
    person = await _service(runtime).create_person(user_id, await _object_body(request, runtime))
    return JSONResponse(person.model_dump(), status_code=201)


async def get_person(
    request: Request, runtime: Any, user_id: str, match: re.Match[str]
) -> Response:
    person = await _service(runtime).get_person(user_id, match["person_id"])
    return JSONResponse(person.model_dump())


async def replace_person(
    request: Request, runtime: Any, user_id: str, match: re.Match[str]
) -> Response:
    body = await _object_body(request, runtime)
    person = await _service(runtime).replace_person(user_id, match["person_id"], body)
    return JSONResponse(person.model_dump())


async def delete_person(
    request: Request, runtime: Any, user_id: str, match: re.Match[str]
) -> Response:
    await _service(runtime).delete_person(user_id, match["person_id"])
    return Response(status_code=204)


async def get_self_profile(
    request: Request, runtime: Any, user_id: str, match: re.Match[str]
) -> Response:
    return JSONResponse((await _service(runtime).get_self_profile(user_id)).model_dump())


async def replace_self_profile(
    request: Request, runtime: Any, user_id: str, match: re.Match[str]
) -> Response:
    body = await _object_body(request, runtime)
    profile = await _service(runtime).replace_self_profile(user_id, body)
    return JSONResponse(profile.model_dump())


async def list_proposals(
    request: Request, runtime: Any, user_id: str, match: re.Match[str]
) -> Response:
    status = request.query_params.get("status", "pending")
    if status not in ("pending", "accepted", "rejected", "all"):
        raise BadRequestError("status must be pending, accepted, rejected or all")
    proposals = await _service(runtime).list_proposals(user_id, None if status == "all" else status)
    return JSONResponse({"proposals": [p.model_dump() for p in proposals]})


async def decide_proposal(
    request: Request, runtime: Any, user_id: str, match: re.Match[str]
) -> Response:
    proposal = await _service(runtime).decide(
        user_id, match["proposal_id"], accept=match["verdict"] == "accept"
    )
    return JSONResponse(proposal.model_dump())


ROUTES: tuple[Route, ...] = (
    Route("POST", _STRATEGY_PATH, strategy, "strategy"),
    Route("GET", _PERSONS_PATH, list_persons, "list persons"),
    Route("POST", _PERSONS_PATH, create_person, "create person"),
    Route("GET", _PERSON_PATH, get_person, "get person"),
    Route("PUT", _PERSON_PATH, replace_person, "replace person"),
    Route("DELETE", _PERSON_PATH, delete_person, "delete person"),
    Route("GET", _SELF_PROFILE_PATH, get_self_profile, "get self-profile"),
    Route("PUT", _SELF_PROFILE_PATH, replace_self_profile, "replace self-profile"),
    Route("GET", _PROPOSALS_PATH, list_proposals, "list profile proposals"),
    Route("POST", _DECISION_PATH, decide_proposal, "accept or reject a proposal"),
)
