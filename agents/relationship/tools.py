"""The orchestrator's profile-update tool: writes through the validated relationship service."""

from __future__ import annotations

import logging
from typing import Any

from google.adk.tools import BaseTool, ToolContext
from google.genai import types

from confidant.errors import ConfidantError
from confidant.relationship.records import PersonFields, ProposalChange, SelfProfileFields
from confidant.relationship.service import RelationshipService

logger = logging.getLogger(__name__)

UPDATE_PROFILE = "update_profile"
STATUS_OK = "ok"
STATUS_ERROR = "error"
SELF_TARGET = "self_profile"
PERSON_TARGET = "person"
LIST_FIELDS = frozenset({"tags", "values"})
PERSON_UPDATABLE = tuple(name for name in PersonFields.model_fields if name != "name")
SELF_UPDATABLE = tuple(SelfProfileFields.model_fields)

UPDATE_PROFILE_DECLARATION = types.FunctionDeclaration(
    name=UPDATE_PROFILE,
    description=(
        "Save one fact the user explicitly asked to keep: in their own self-profile, or in the"
        " profile of the person this conversation is about. Only when the user asks to save or"
        " update profile information."
    ),
    parameters=types.Schema(
        type=types.Type.OBJECT,
        properties={
            "target": types.Schema(type=types.Type.STRING, enum=[SELF_TARGET, PERSON_TARGET]),
            "field": types.Schema(
                type=types.Type.STRING,
                enum=sorted({*SELF_UPDATABLE, *PERSON_UPDATABLE}),
                description=(
                    f"self_profile fields: {', '.join(SELF_UPDATABLE)}; person fields: "
                    f"{', '.join(PERSON_UPDATABLE)}. tags/values take a comma-separated list."
                ),
            ),
            "value": types.Schema(type=types.Type.STRING, description="The new value."),
        },
        required=["target", "field", "value"],
    ),
)


def _error(reason: str) -> dict[str, Any]:
    return {"status": STATUS_ERROR, "reason": reason}


class UpdateProfileTool(BaseTool):
    """Updates one field of the self-profile or of the turn's person (never another user's)."""

    def __init__(self, service: RelationshipService | None, person_id: str | None) -> None:
        super().__init__(
            name=UPDATE_PROFILE, description=UPDATE_PROFILE_DECLARATION.description or ""
        )
        self._service = service
        self._person_id = person_id

    def _get_declaration(self) -> types.FunctionDeclaration:
        return UPDATE_PROFILE_DECLARATION

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        if self._service is None:
            return _error("profiles are not available in this deployment.")
        target, name = args.get("target"), args.get("field")
        value = args.get("value")
        if not isinstance(value, str) or not value.strip():
            return _error("value must be a non-empty string.")
        if target == SELF_TARGET and name in SELF_UPDATABLE:
            person_id = None
        elif target == PERSON_TARGET and name in PERSON_UPDATABLE:
            if not self._person_id:
                return _error("no person is selected in this conversation (person_id).")
            person_id = self._person_id
        else:
            return _error(f"{name!r} is not a field of {target!r}.")
        parsed: Any = value.strip()
        if name in LIST_FIELDS:
            parsed = [item.strip() for item in parsed.split(",") if item.strip()]
        try:
            change = ProposalChange(target=target, person_id=person_id, changes={name: parsed})
            profile = await self._service.apply_change(tool_context.user_id, change)
        except ConfidantError as exc:
            return _error(exc.message)
        except Exception:
            logger.exception("profile update failed")
            return _error("the profile could not be saved right now.")
        return {"status": STATUS_OK, "target": target, "field": name, "profile": profile}
