"""AgentConfigStore on Firestore: `agent_configs/{app}` (head) and `.../versions/{n}`."""

from __future__ import annotations

import asyncio
import logging
import random
from datetime import UTC, datetime

from google.api_core.exceptions import Aborted
from google.cloud import firestore
from google.cloud.firestore_v1.async_transaction import AsyncTransaction

from confidant.agentconfig.config import AgentConfig, ConfigVersion
from confidant.agentconfig.store import AGENT_CONFIGS, VERSIONS, version_doc_id

logger = logging.getLogger(__name__)
_ATTEMPTS = 10


class FirestoreAgentConfigStore:
    """One AsyncClient per process, passed in (shared with the session store).

    Versions are stored as JSON-mode dicts (timestamps as ISO strings) so both adapters read
    back exactly what they wrote.
    """

    def __init__(self, client: firestore.AsyncClient) -> None:
        self._client = client

    def _head(self, app: str) -> firestore.AsyncDocumentReference:
        return self._client.collection(AGENT_CONFIGS).document(app)

    def _versions(self, app: str) -> firestore.AsyncCollectionReference:
        return self._head(app).collection(VERSIONS)

    async def head(self, app: str) -> ConfigVersion | None:
        snapshot = await self._head(app).get()
        return ConfigVersion.model_validate(snapshot.to_dict()) if snapshot.exists else None

    async def append(
        self, app: str, config: AgentConfig, *, author: str, rolled_back_from: int | None = None
    ) -> ConfigVersion:
        head_ref = self._head(app)

        @firestore.async_transactional
        async def write(transaction: AsyncTransaction) -> ConfigVersion:
            snapshot = await head_ref.get(transaction=transaction)
            current = snapshot.to_dict() if snapshot.exists else None
            stored = ConfigVersion(
                app=app,
                version=int(current["version"]) + 1 if current else 1,
                config=config,
                author=author,
                created_at=datetime.now(UTC),
                rolled_back_from=rolled_back_from,
            )
            data = stored.to_json()
            # `create`: a concurrent writer of the same number fails and the transaction retries.
            transaction.create(self._versions(app).document(version_doc_id(stored.version)), data)
            transaction.set(head_ref, data)
            return stored

        # Admin changes are rare; concurrent ones contend on the head document. A read inside
        # the transaction can itself be aborted (lock contention), which the commit retries of
        # `async_transactional` do not cover: retry the whole transaction, with jitter.
        for attempt in range(_ATTEMPTS):
            try:
                result: ConfigVersion = await write(self._client.transaction())
                return result
            except (Aborted, ValueError) as exc:
                contended = isinstance(exc, Aborted) or "Failed to commit" in str(exc)
                if not contended or attempt == _ATTEMPTS - 1:
                    raise
                logger.info("agent config write for %s contended (%s); retrying", app, exc)
                await asyncio.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
        raise AssertionError("unreachable")

    async def get_version(self, app: str, version: int) -> ConfigVersion | None:
        snapshot = await self._versions(app).document(version_doc_id(version)).get()
        return ConfigVersion.model_validate(snapshot.to_dict()) if snapshot.exists else None

    async def list_versions(self, app: str, *, limit: int) -> list[ConfigVersion]:
        query = (
            self._head(app)
            .collection(VERSIONS)
            .order_by("version", direction=firestore.Query.DESCENDING)
            .limit(limit)
        )
        return [ConfigVersion.model_validate(doc.to_dict()) async for doc in query.stream()]

    async def close(self) -> None:
        return None  # the client is the process's
