"""AgentConfigStore on Firestore: `agent_configs/{app}` (head) and `.../versions/{n}`."""

from __future__ import annotations

from datetime import UTC, datetime

from google.cloud import firestore
from google.cloud.firestore_v1.async_transaction import AsyncTransaction

from confidant.agentconfig.config import AgentConfig, ConfigVersion
from confidant.agentconfig.store import AGENT_CONFIGS, VERSIONS, version_doc_id


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

        # Admin changes are rare; concurrent ones contend on the head document and retry.
        result: ConfigVersion = await write(self._client.transaction(max_attempts=20))
        return result

    async def get_version(self, app: str, version: int) -> ConfigVersion | None:
        snapshot = await self._versions(app).document(version_doc_id(version)).get()
        return ConfigVersion.model_validate(snapshot.to_dict()) if snapshot.exists else None

    async def list_versions(self, app: str, *, limit: int) -> list[ConfigVersion]:
        query = self._versions(app).order_by(
            "version", direction=firestore.Query.DESCENDING
        ).limit(limit)
        return [ConfigVersion.model_validate(doc.to_dict()) async for doc in query.stream()]

    async def close(self) -> None:
        return None  # the client is the process's
