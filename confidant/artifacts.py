"""Artifacts beyond what ADK's service offers: erasing everything a user's sessions saved."""

from __future__ import annotations

from google.adk.artifacts import BaseArtifactService

import agents
from confidant.sessions.store import SessionStore


async def erase_user_artifacts(
    service: BaseArtifactService, store: SessionStore, user_id: str
) -> int:
    """Delete every artifact of every session the user has (run before the sessions go)."""
    removed = 0
    for app in agents.app_names():
        for record in await store.list_sessions(app=app, user_id=user_id):
            scope = {"app_name": app, "user_id": user_id, "session_id": record.key.session_id}
            for name in await service.list_artifact_keys(**scope):
                await service.delete_artifact(filename=name, **scope)
                removed += 1
    return removed
