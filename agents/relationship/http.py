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

Handlers receive the HTTP layer's `Call` (request, runtime, user id, validated params and
body); the user id comes from the verified identity only. Each route declares its models, so
the dispatcher validates with them and /openapi.json shows them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel
from starlette.responses import Response

from agents.registry import Route
from agents.relationship.roles import STRATEGY_MODES
from confidant.chat.requests import ChatBody, ChatRequest, parse_chat_request
from confidant.errors import BadRequestError, ConfidantError
from confidant.http.routing import json_reply
from confidant.relationship.records import (
    Person,
    PersonFields,
    Proposal,
    SelfProfile,
    SelfProfileFields,
)
from confidant.relationship.service import RelationshipService
from confidant.streaming.parts import ChatReply

PREFIX = "/v1/relationship"
MAX_PROFILE_BODY_BYTES = 32_000
_STRATEGY_PATH = rf"{PREFIX}/(?P<mode>{'|'.join(STRATEGY_MODES)})"
_PERSONS_PATH = rf"{PREFIX}/persons"
# Ids never start with `_`: Firestore reserves `__…__` document ids.
_PERSON_PATH = rf"{PREFIX}/persons/(?P<person_id>[A-Za-z0-9-][A-Za-z0-9_-]{{0,63}})"
_SELF_PROFILE_PATH = rf"{PREFIX}/self-profile"
_PROPOSALS_PATH = rf"{PREFIX}/proposals"
_DECISION_PATH = (
    rf"{PREFIX}/proposals/(?P<proposal_id>[A-Za-z0-9-][A-Za-z0-9_-]{{0,63}})"
    r"/(?P<verdict>accept|reject)"
)


class PersonList(BaseModel):
    persons: list[Person]


class ProposalsQuery(BaseModel):
    status: Literal["pending", "accepted", "rejected", "all"] = "pending"


class ProposalList(BaseModel):
    proposals: list[Proposal]


class _Unavailable(ConfidantError):
    status = 503
    code = "unavailable"


def _service(call: Any) -> RelationshipService:
    service = getattr(call.runtime, "relationship", None)
    if service is None:
        raise _Unavailable("the relationship store is not configured")
    return service


def strategy_request(body: Any, call: Any) -> ChatRequest:
    """The chat body of a strategy endpoint, its options forcing the path's specialist."""
    from agents.relationship.agent import APP_NAME

    settings = call.runtime.settings
    if isinstance(body, dict) and body.get("app", APP_NAME) != APP_NAME:
        raise BadRequestError(f"this endpoint serves the {APP_NAME} app only")
    chat_request = parse_chat_request(
        body,
        default_app=APP_NAME,
        default_locale=settings.default_locale,
        max_message_chars=settings.max_message_chars,
        app=APP_NAME,
    )
    mode = call.params.mode
    if chat_request.options.get("mode") not in (None, mode):
        raise BadRequestError(f"`mode` contradicts the endpoint ({mode})")
    return chat_request.model_copy(update={"options": {**chat_request.options, "mode": mode}})


async def strategy(call: Any) -> Response:
    """A chat turn whose options force one specialist: the one ChatService lifecycle."""
    from confidant.http.api import chat_reply

    return await chat_reply(call.request, call.runtime, call.user_id, call.body)


async def list_persons(call: Any) -> Response:
    return json_reply(PersonList(persons=await _service(call).list_persons(call.user_id)))


async def create_person(call: Any) -> Response:
    person = await _service(call).create_person(call.user_id, call.body.model_dump())
    return json_reply(person, 201)


async def get_person(call: Any) -> Response:
    return json_reply(await _service(call).get_person(call.user_id, call.params.person_id))


async def replace_person(call: Any) -> Response:
    person = await _service(call).replace_person(
        call.user_id, call.params.person_id, call.body.model_dump()
    )
    return json_reply(person)


async def delete_person(call: Any) -> Response:
    await _service(call).delete_person(call.user_id, call.params.person_id)
    return Response(status_code=204)


async def get_self_profile(call: Any) -> Response:
    return json_reply(await _service(call).get_self_profile(call.user_id))


async def replace_self_profile(call: Any) -> Response:
    profile = await _service(call).replace_self_profile(call.user_id, call.body.model_dump())
    return json_reply(profile)


async def list_proposals(call: Any) -> Response:
    status = call.params.status
    proposals = await _service(call).list_proposals(
        call.user_id, None if status == "all" else status
    )
    return json_reply(ProposalList(proposals=proposals))


async def decide_proposal(call: Any) -> Response:
    params = call.params
    proposal = await _service(call).decide(
        call.user_id, params.proposal_id, accept=params.verdict == "accept"
    )
    return json_reply(proposal)


_PROFILE_BODY = {"body_limit": MAX_PROFILE_BODY_BYTES}
ROUTES: tuple[Route, ...] = (
    Route(
        "POST",
        _STRATEGY_PATH,
        strategy,
        "strategy",
        body=ChatBody,
        parse_body=strategy_request,
        responses={200: {"text/event-stream": None, "application/json": ChatReply}},
        errors=(404, 409),
    ),
    Route("GET", _PERSONS_PATH, list_persons, "list persons", responses={200: PersonList}),
    Route(
        "POST",
        _PERSONS_PATH,
        create_person,
        "create person",
        body=PersonFields,
        responses={201: Person},
        errors=(409,),
        **_PROFILE_BODY,
    ),
    Route("GET", _PERSON_PATH, get_person, "get person", responses={200: Person}, errors=(404,)),
    Route(
        "PUT",
        _PERSON_PATH,
        replace_person,
        "replace person",
        body=PersonFields,
        responses={200: Person},
        errors=(404,),
        **_PROFILE_BODY,
    ),
    Route(
        "DELETE",
        _PERSON_PATH,
        delete_person,
        "delete person",
        responses={204: None},
        errors=(404,),
    ),
    Route(
        "GET",
        _SELF_PROFILE_PATH,
        get_self_profile,
        "get self-profile",
        responses={200: SelfProfile},
    ),
    Route(
        "PUT",
        _SELF_PROFILE_PATH,
        replace_self_profile,
        "replace self-profile",
        body=SelfProfileFields,
        responses={200: SelfProfile},
        **_PROFILE_BODY,
    ),
    Route(
        "GET",
        _PROPOSALS_PATH,
        list_proposals,
        "list profile proposals",
        params=ProposalsQuery,
        responses={200: ProposalList},
    ),
    Route(
        "POST",
        _DECISION_PATH,
        decide_proposal,
        "accept or reject a proposal",
        responses={200: Proposal},
        errors=(404,),
    ),
)
