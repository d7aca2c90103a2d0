"""Profile proposals (seed 001's profile extraction): after a conversation, one model call
proposes self-profile and person updates, filed as pending proposals for the user to accept or
reject. Rejected changes are never proposed again verbatim (RelationshipService.propose).

`ProfileProposalJob.run` is the post-turn job body: wire it as a job kind into the job service.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.events import Event
from google.adk.models import BaseLlm, LlmRequest
from google.genai import types
from pydantic import ValidationError

from agents.relationship import prompts, roles
from confidant.relationship.records import Proposal, ProposalChange
from confidant.relationship.service import RelationshipService
from confidant.sessions.records import SessionKey
from confidant.sessions.store import SessionStore

logger = logging.getLogger(__name__)

JOB_KIND = "profile_proposal"
MAX_CONVERSATION_CHARS = 6000  # the newest part of the conversation is what matters
CONVERSATION_EVENTS = 40
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def render_extractor_instruction(
    self_profile: Mapping[str, Any] | None, person: Mapping[str, Any] | None
) -> str:
    current = {"self_profile": dict(self_profile or {}), "person": dict(person or {})}
    for profile in current.values():
        profile.pop("updated_at", None)
        profile.pop("created_at", None)
    lines = [
        prompts.EXTRACTOR_INSTRUCTION,
        f"{prompts.AGENT_MARKER}: {roles.EXTRACTOR}",
        f"{prompts.CURRENT_PROFILES_HEADER}\n{json.dumps(current, ensure_ascii=False)}",
    ]
    if person:
        lines.append(f"{prompts.PERSON_MARKER}: {person.get('name', '')}")
    return "\n\n".join(lines)


def parse_proposals(text: str, person_id: str | None) -> list[ProposalChange]:
    """The valid changes in the extractor's answer (anything malformed is dropped)."""
    try:
        answer = json.loads(_FENCE.sub("", text.strip()))
    except (json.JSONDecodeError, TypeError):
        return []
    items = answer.get("proposals") if isinstance(answer, dict) else None
    changes: list[ProposalChange] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        target = item.get("target")
        if target == "person" and not person_id:
            continue
        try:
            changes.append(
                ProposalChange(
                    target=target,
                    person_id=person_id if target == "person" else None,
                    changes=item.get("changes") or {},
                    reason=str(item.get("reason") or "")[:300],
                )
            )
        except ValidationError:
            continue
    return changes


def conversation_text(events: Sequence[Event]) -> str:
    lines = []
    for event in events:
        if not event.content or not event.content.parts:
            continue
        text = "".join(p.text for p in event.content.parts if p.text and not p.thought)
        if text.strip():
            speaker = "user" if event.author == "user" else "coach"
            lines.append(f"{speaker}: {text.strip()}")
    return "\n".join(lines)[-MAX_CONVERSATION_CHARS:]


class ProfileProposalExtractor:
    """One non-streaming model call → validated changes → pending proposals."""

    def __init__(self, model: BaseLlm, service: RelationshipService) -> None:
        self._model = model
        self._service = service

    async def propose(
        self,
        *,
        user_id: str,
        conversation: str,
        person_id: str | None = None,
        session_id: str | None = None,
    ) -> list[Proposal]:
        if not conversation.strip():
            return []
        person = await self._service.find_person(user_id, person_id) if person_id else None
        if person_id and person is None:
            person_id = None  # the person was deleted meanwhile: propose self-profile only
        self_profile = await self._service.get_self_profile(user_id)
        request = LlmRequest(
            model=self._model.model,
            contents=[types.UserContent(conversation)],
            config=types.GenerateContentConfig(
                system_instruction=render_extractor_instruction(
                    self_profile.model_dump(), person.model_dump() if person else None
                ),
                response_mime_type="application/json",
                temperature=0.0,
            ),
        )
        text = ""
        async for response in self._model.generate_content_async(request, stream=False):
            if response.content and response.content.parts:
                text = "".join(p.text or "" for p in response.content.parts if not p.thought)
        changes = parse_proposals(text, person_id)
        return await self._service.propose(user_id, changes, session_id=session_id)


class ProfileProposalJob:
    """The post-turn job: read the session's recent conversation and file proposals."""

    def __init__(self, store: SessionStore, extractor: ProfileProposalExtractor) -> None:
        self._store = store
        self._extractor = extractor

    async def run(
        self, *, user_id: str, app: str, session_id: str, person_id: str | None = None
    ) -> list[Proposal]:
        loaded = await self._store.load(SessionKey(user_id, app, session_id))
        if loaded is None:
            return []
        events = [Event.model_validate_json(e["json"]) for e in loaded.record.tail]
        conversation = conversation_text(events[-CONVERSATION_EVENTS:])
        return await self._extractor.propose(
            user_id=user_id, conversation=conversation, person_id=person_id, session_id=session_id
        )
