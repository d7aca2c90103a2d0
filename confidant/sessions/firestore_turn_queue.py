"""The turn queue (confidant/sessions/turn_queue.py) on Firestore."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore

from confidant.sessions.firestore_store import session_ref
from confidant.sessions.records import SessionKey

TURN_QUEUE = "turn_queue"  # sessions/{sid}/turn_queue/{ticket}
TURN_CONTROL = "turn_control"  # sessions/{sid}/turn_control/interrupt
INTERRUPT = "interrupt"


def _expire_at(expires: float) -> datetime:
    # Firestore's TTL policy on `expire_at` (infra firestore.tf) deletes a ticket once it no
    # longer counts (`line` skips it from `expires` on), so a dead waiter's ticket is not kept.
    return datetime.fromtimestamp(expires, UTC)


class FirestoreTurnQueue:
    """Documents under the session document (deleted with it): one per ticket, and one
    interrupt request. Each operation is one document write or one small query, never a
    transaction, so waiters do not contend with each other."""

    def __init__(self, client: firestore.AsyncClient) -> None:
        self._client = client

    def _session(self, key: SessionKey) -> firestore.AsyncDocumentReference:
        return session_ref(self._client, key)

    def _interrupt(self, key: SessionKey) -> firestore.AsyncDocumentReference:
        return self._session(key).collection(TURN_CONTROL).document(INTERRUPT)

    async def join(self, key: SessionKey, ticket: str, *, now: float, ttl_s: float) -> None:
        # `set`, not `create`: a ticket that expired while its process stalled joins again, at
        # the end (a new server timestamp).
        await (
            self._session(key)
            .collection(TURN_QUEUE)
            .document(ticket)
            .set(
                {
                    "joined": firestore.SERVER_TIMESTAMP,
                    "expires": now + ttl_s,
                    "expire_at": _expire_at(now + ttl_s),
                }
            )
        )

    async def line(self, key: SessionKey, *, now: float) -> list[str]:
        query = self._session(key).collection(TURN_QUEUE).order_by("joined")
        tickets: list[str] = []
        async for snap in query.stream():
            doc: dict[str, Any] = snap.to_dict() or {}
            if doc.get("expires", 0.0) > now:
                tickets.append(snap.id)
        return tickets

    async def refresh(self, key: SessionKey, ticket: str, *, now: float, ttl_s: float) -> None:
        ref = self._session(key).collection(TURN_QUEUE).document(ticket)
        with contextlib.suppress(gexc.NotFound):  # already gone: `line` no longer lists it
            await ref.update({"expires": now + ttl_s, "expire_at": _expire_at(now + ttl_s)})

    async def leave(self, key: SessionKey, ticket: str) -> None:
        await self._session(key).collection(TURN_QUEUE).document(ticket).delete()

    async def request_interrupt(self, key: SessionKey, holder: str) -> None:
        await self._interrupt(key).set({"holder": holder})

    async def interrupt_requested(self, key: SessionKey) -> str | None:
        snap = await self._interrupt(key).get()
        return snap.get("holder") if snap.exists else None

    async def clear_interrupt(self, key: SessionKey) -> None:
        await self._interrupt(key).delete()
