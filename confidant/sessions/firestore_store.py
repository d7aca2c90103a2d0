"""The cloud session store on Firestore.

Layout (everything a user owns is under their user document):

    users/{uid}                                         the unified profile (its fields)
    users/{uid}/apps/{app}                              user-scoped state of that app (`user:` keys)
    users/{uid}/apps/{app}/sessions/{sid}               revision, lease, state, summary, tail events
    users/{uid}/apps/{app}/sessions/{sid}/chunks/{seq}  older events, immutable, keyed by first seq
    users/{uid}/memories/{id}                           long-term memories (integration crystals)
    app_states/{app}                                    app-scoped state (`app:` keys)
    jobs/{job_id}                                       outbox of post-turn jobs

A turn costs two transactions: `begin_turn` (read the session, write its lease) and `commit`
(read it again, write it once — plus chunks every `flush_batch` events or `max_tail_bytes`, and
any state, memory and job documents the turn produced).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.async_batch import AsyncWriteBatch
from google.cloud.firestore_v1.async_transaction import AsyncTransaction
from google.cloud.firestore_v1.vector import Vector

from confidant.errors import NotFoundError, SessionBusyError, StaleTurnError
from confidant.ports import JobRecord, MemoryRecord
from confidant.profiles import firestore_profile
from confidant.profiles.ops import ProfileOp
from confidant.profiles.store import MISSING, ProfileVersion
from confidant.sessions import codec
from confidant.sessions.records import (
    EventChunk,
    SessionKey,
    SessionRecord,
    TailPolicy,
    TurnWrite,
    acquire_lease,
    apply_write,
    check_write,
    new_record,
    release_lease,
)
from confidant.sessions.store import EventPage, LoadedSession, SessionExistsError

USERS = "users"
APPS = "apps"
SESSIONS = "sessions"
CHUNKS = "chunks"
MEMORIES = "memories"
APP_STATES = "app_states"
JOBS = "jobs"
EMOTIONS = "emotions"  # users/{uid}/emotions/{job_id}: snapshots written by emotion jobs
JOB_FAILURES = "job_failures"  # poison job deliveries kept for inspection
# Outbox records are idempotency keys for their jobs; Firestore's TTL policy drops them after this.
JOB_RECORD_TTL = timedelta(days=7)
# begin_turn re-reads and retries when another writer slips in between its read and its write.
_LEASE_ATTEMPTS = 5


def outbox_document(job: JobRecord, status: str = "pending") -> dict[str, Any]:
    """An outbox entry: the fields queries need, the job itself as one unindexed JSON string
    (every indexed field costs the turn's commit; measured in bench/jobs.py)."""
    return {
        "status": status,
        "kind": job.kind,
        "user_id": job.user_id,
        "session_id": job.session_id,
        "created_at": job.created_at.timestamp(),
        "job": job.model_dump_json(),
        "expire_at": job.created_at + JOB_RECORD_TTL,
    }


def job_from_document(doc: dict[str, Any]) -> JobRecord:
    return JobRecord.model_validate_json(doc["job"])


def memory_document(record: MemoryRecord) -> dict[str, Any]:
    """A memory as stored: its embedding a Firestore Vector, so vector search can rank it."""
    doc = codec.memory_to_row(record)
    doc["embedding"] = None if record.embedding is None else Vector(record.embedding)
    return doc


class _ProfileChanged(Exception):
    """A fast commit's precondition failed while it carried profile writes."""


def session_ref(client: firestore.AsyncClient, key: SessionKey) -> firestore.AsyncDocumentReference:
    """`users/{uid}/apps/{app}/sessions/{sid}`: the session document, under which its chunks,
    summary, stream log and turn queue live (deleted with it)."""
    return (
        client.collection(USERS)
        .document(key.user_id)
        .collection(APPS)
        .document(key.app)
        .collection(SESSIONS)
        .document(key.session_id)
    )


def _chunk_id(first_seq: int) -> str:
    return f"{first_seq:012d}"  # zero-padded so document order is sequence order


class FirestoreSessionStore:
    """SessionStore on Firestore; one AsyncClient per process, passed in."""

    def __init__(self, client: firestore.AsyncClient, *, policy: TailPolicy | None = None) -> None:
        self.client = client
        self.policy = policy or TailPolicy()

    # -- references -----------------------------------------------------------------------------

    def _user(self, user_id: str) -> firestore.AsyncDocumentReference:
        return self.client.collection(USERS).document(user_id)

    def _user_app(self, user_id: str, app: str) -> firestore.AsyncDocumentReference:
        return self._user(user_id).collection(APPS).document(app)

    def _session(self, key: SessionKey) -> firestore.AsyncDocumentReference:
        return session_ref(self.client, key)

    def _app_state(self, app: str) -> firestore.AsyncDocumentReference:
        return self.client.collection(APP_STATES).document(app)

    # -- documents ------------------------------------------------------------------------------

    @staticmethod
    def _record(key: SessionKey, doc: dict[str, Any]) -> SessionRecord:
        return SessionRecord(
            key=key,
            state=codec.loads_dict(doc.get("state")),
            revision=doc["revision"],
            next_seq=doc["next_seq"],
            tail=codec.loads_list(doc.get("tail")),
            created_at=doc["created_at"],
            updated_at=doc["updated_at"],
            summary=doc.get("summary"),
            lease_holder=doc.get("lease_holder"),
            lease_expires=doc.get("lease_expires", 0.0),
        )

    @staticmethod
    def _doc(record: SessionRecord) -> dict[str, Any]:
        return {
            "user_id": record.key.user_id,
            "app": record.key.app,
            "session_id": record.key.session_id,
            "revision": record.revision,
            "next_seq": record.next_seq,
            "state": codec.dumps(record.state),
            "tail": codec.dumps(record.tail),
            "summary": record.summary,
            "lease_holder": record.lease_holder,
            "lease_expires": record.lease_expires,
            "created_at": record.created_at,
            "updated_at": record.updated_at,
        }

    @staticmethod
    def _state_of(snapshot: firestore.DocumentSnapshot) -> dict[str, Any]:
        return codec.loads_dict(snapshot.get("state")) if snapshot.exists else {}

    async def _scoped_state(self, key: SessionKey) -> tuple[dict[str, Any], dict[str, Any]]:
        app_snap, user_snap = await asyncio.gather(
            self._app_state(key.app).get(), self._user_app(key.user_id, key.app).get()
        )
        return self._state_of(app_snap), self._state_of(user_snap)

    async def _write_scoped_deltas(
        self,
        transaction: AsyncTransaction,
        key: SessionKey,
        app_delta: dict[str, Any],
        user_delta: dict[str, Any],
    ) -> None:
        """Read-modify-write of app and user state inside the transaction (reads first)."""
        refs = []
        if app_delta:
            refs.append((self._app_state(key.app), app_delta))
        if user_delta:
            refs.append((self._user_app(key.user_id, key.app), user_delta))
        snaps = [await ref.get(transaction=transaction) for ref, _ in refs]
        for (ref, delta), snap in zip(refs, snaps, strict=True):
            state = codec.apply_delta(self._state_of(snap), delta)
            # Written whole (no merge) so that the stored state is exactly the merged dict.
            transaction.set(ref, {"state": codec.dumps(state)}, merge=["state"])

    # -- SessionStore ---------------------------------------------------------------------------

    async def create_session(
        self,
        key: SessionKey,
        *,
        state: dict[str, Any],
        app_delta: dict[str, Any],
        user_delta: dict[str, Any],
        now: float,
    ) -> LoadedSession:
        ref = self._session(key)
        record = new_record(key, state, now)

        @firestore.async_transactional
        async def create(transaction: AsyncTransaction) -> None:
            snap = await ref.get(transaction=transaction)
            if snap.exists:
                raise SessionExistsError(f"session {key.session_id!r} already exists")
            await self._write_scoped_deltas(transaction, key, app_delta, user_delta)
            transaction.create(ref, self._doc(record))

        await create(self.client.transaction())
        app_state, user_state = await self._scoped_state(key)
        return LoadedSession(record, app_state, user_state)

    async def load(self, key: SessionKey) -> LoadedSession | None:
        snap, (app_state, user_state) = await asyncio.gather(
            self._session(key).get(), self._scoped_state(key)
        )
        if not snap.exists:
            return None
        return LoadedSession(self._record(key, snap.to_dict()), app_state, user_state)

    async def begin_turn(
        self, key: SessionKey, *, holder: str, now: float, ttl_s: float, create: bool
    ) -> LoadedSession:
        """Read, then write the lease on the precondition that the document is unchanged.

        Two round trips (the state documents are read alongside the first), where a
        transaction costs three; the write's update time is the turn's lease token.
        """
        ref = self._session(key)
        for _ in range(_LEASE_ATTEMPTS):
            snap, (app_state, user_state) = await asyncio.gather(ref.get(), self._scoped_state(key))
            try:
                if not snap.exists:
                    if not create:
                        raise NotFoundError(f"session {key.session_id!r} not found")
                    record = acquire_lease(new_record(key, {}, now), holder, now, ttl_s)
                    result = await ref.create(self._doc(record))
                else:
                    record = self._record(key, snap.to_dict())
                    if not record.lease_free(now):
                        raise SessionBusyError(
                            "another message on this session is still being answered; "
                            "retry when it has finished"
                        )
                    record = acquire_lease(record, holder, now, ttl_s)
                    result = await ref.update(
                        {"lease_holder": holder, "lease_expires": record.lease_expires},
                        option=self.client.write_option(last_update_time=snap.update_time),
                    )
            except (gexc.AlreadyExists, gexc.Conflict, gexc.FailedPrecondition):
                continue  # another writer got there first: look again
            return LoadedSession(record, app_state, user_state, result.update_time)
        raise SessionBusyError("the session is contended; retry shortly")

    async def commit(self, key: SessionKey, write: TurnWrite) -> SessionRecord:
        if (
            write.base is not None
            and write.lease_token is not None
            and not write.app_delta
            and not write.user_delta
            and (not write.profile_ops or write.profile_version is not None)
        ):
            try:
                return await self._commit_on_lease(key, write, write.base, write.lease_token)
            except _ProfileChanged:
                pass  # someone wrote the profile since the turn read it: read it again
        return await self._commit_in_transaction(key, write)

    async def _commit_in_transaction(self, key: SessionKey, write: TurnWrite) -> SessionRecord:
        ref = self._session(key)

        @firestore.async_transactional
        async def apply(transaction: AsyncTransaction) -> SessionRecord:
            snap = await ref.get(transaction=transaction)
            if not snap.exists:
                raise StaleTurnError("the session was deleted while the turn ran")
            record = self._record(key, snap.to_dict())
            reason = check_write(record, write, write.now)
            if reason:
                raise StaleTurnError(reason)
            profile_ref = self._user(key.user_id)
            profile = (
                firestore_profile.stored_profile(await profile_ref.get(transaction=transaction))
                if write.profile_ops
                else {}
            )  # every read of the transaction comes before its first write
            await self._write_scoped_deltas(transaction, key, write.app_delta, write.user_delta)
            if write.profile_ops:
                firestore_profile.write_ops(transaction, profile_ref, profile, write.profile_ops)
            updated, chunks = apply_write(record, write, self.policy)
            transaction.set(ref, self._doc(updated))
            self._write_turn_documents(transaction, ref, write, chunks)
            return updated

        return await apply(self.client.transaction())

    async def _commit_on_lease(
        self, key: SessionKey, write: TurnWrite, base: SessionRecord, token: object
    ) -> SessionRecord:
        """One write RPC: the turn's documents, on the precondition that the session is still
        exactly as this turn's lease left it (any other writer changes its update time), and
        its profile writes on the precondition that the profile is as the turn read it."""
        ref = self._session(key)
        reason = check_write(base, write, write.now)
        if reason:
            raise StaleTurnError(reason)
        updated, chunks = apply_write(base, write, self.policy)
        batch = self.client.batch()
        batch.update(
            ref, self._doc(updated), option=self.client.write_option(last_update_time=token)
        )
        self._write_turn_documents(batch, ref, write, chunks)
        version = write.profile_version
        if write.profile_ops and version is not None:
            firestore_profile.write_ops_on_version(
                batch,
                self._user(key.user_id),
                version,
                write.profile_ops,
                self.client.write_option(last_update_time=version.token)
                if version.token is not MISSING
                else None,
            )
        try:
            await batch.commit()
        except (gexc.FailedPrecondition, gexc.NotFound, gexc.AlreadyExists) as exc:
            if write.profile_ops:
                # The session or the profile changed; the transaction tells which (a stale
                # session still raises StaleTurnError there, and nothing is written).
                raise _ProfileChanged from exc
            raise StaleTurnError(
                "the session changed since this turn took it (lease lost or session deleted)"
            ) from exc
        return updated

    def _write_turn_documents(
        self,
        writer: AsyncTransaction | AsyncWriteBatch,
        ref: firestore.AsyncDocumentReference,
        write: TurnWrite,
        chunks: list[EventChunk],
    ) -> None:
        for chunk in chunks:
            writer.create(
                ref.collection(CHUNKS).document(_chunk_id(chunk.first_seq)),
                {
                    "first_seq": chunk.first_seq,
                    "last_seq": chunk.last_seq,
                    "events": codec.dumps(chunk.events),
                },
            )
        for memory in write.memories:
            writer.set(
                self._user(memory.user_id).collection(MEMORIES).document(memory.id),
                memory_document(memory),
            )
        for job in write.jobs:
            writer.set(self.client.collection(JOBS).document(job.job_id), outbox_document(job))

    async def renew_turn(
        self, key: SessionKey, *, holder: str, now: float, ttl_s: float, token: object | None
    ) -> object | None:
        ref = self._session(key)
        if token is None:
            snap = await ref.get(field_paths=["lease_holder"])
            if not snap.exists or snap.get("lease_holder") != holder:
                return None
            token = snap.update_time
        try:
            result = await ref.update(
                {"lease_expires": now + ttl_s},
                option=self.client.write_option(last_update_time=token),
            )
        except (gexc.FailedPrecondition, gexc.NotFound):
            return None  # someone else wrote the session: the lease is gone
        return result.update_time

    async def end_turn(self, key: SessionKey, *, holder: str) -> None:
        ref = self._session(key)

        @firestore.async_transactional
        async def release(transaction: AsyncTransaction) -> None:
            snap = await ref.get(transaction=transaction)
            if snap.exists and snap.get("lease_holder") == holder:
                record = release_lease(self._record(key, snap.to_dict()), holder)
                transaction.update(
                    ref, {"lease_holder": None, "lease_expires": record.lease_expires}
                )

        await release(self.client.transaction())

    async def list_sessions(self, *, app: str, user_id: str | None) -> list[SessionRecord]:
        if user_id is not None:
            query = self._user_app(user_id, app).collection(SESSIONS)
        else:
            query = self.client.collection_group(SESSIONS).where(
                filter=firestore.FieldFilter("app", "==", app)
            )
        records = []
        # Only the summary fields: the tail stays on the server.
        async for snap in query.select(
            [
                "user_id",
                "app",
                "session_id",
                "revision",
                "next_seq",
                "state",
                "summary",
                "lease_holder",
                "lease_expires",
                "created_at",
                "updated_at",
            ]
        ).stream():
            doc = snap.to_dict()
            key = SessionKey(doc["user_id"], doc["app"], doc["session_id"])
            records.append(self._record(key, doc))
        return sorted(records, key=lambda r: r.updated_at)

    async def read_events(self, key: SessionKey, *, after_seq: int | None, limit: int) -> EventPage:
        start = -1 if after_seq is None else after_seq
        ref = self._session(key)
        snap = await ref.get()
        if not snap.exists:
            raise NotFoundError(f"session {key.session_id!r} not found")
        record = self._record(key, snap.to_dict())
        events = [e for e in record.tail if e["seq"] > start]
        first_tail_seq = record.tail[0]["seq"] if record.tail else record.next_seq
        if start + 1 < first_tail_seq:
            query = (
                ref.collection(CHUNKS)
                .where(filter=firestore.FieldFilter("last_seq", ">", start))
                .order_by("last_seq")
                .limit(limit)
            )
            older: list[dict[str, Any]] = []
            async for chunk in query.stream():
                older += [
                    e
                    for e in codec.loads_list(chunk.get("events"))
                    if start < e["seq"] < first_tail_seq
                ]
                if len(older) > limit:
                    break  # chunks can be large (up to the document bound): read only the page
            events = older + events
        page = events[:limit]
        more = len(events) > limit
        next_after = page[-1]["seq"] if more else None
        return EventPage(record=record, events=page, next_after_seq=next_after)

    async def delete_session(self, key: SessionKey) -> bool:
        ref = self._session(key)
        snap = await ref.get()
        if not snap.exists:
            return False
        await self.client.recursive_delete(ref)  # with its chunks and rolling summary
        outbox = (
            self.client.collection(JOBS)
            .where(filter=firestore.FieldFilter("user_id", "==", key.user_id))
            .where(filter=firestore.FieldFilter("session_id", "==", key.session_id))
        )
        async for doc in outbox.stream():
            await doc.reference.delete()
        emotions = (
            self._user(key.user_id)
            .collection(EMOTIONS)
            .where(filter=firestore.FieldFilter("session_id", "==", key.session_id))
        )
        async for doc in emotions.stream():
            await doc.reference.delete()
        return True

    async def user_state(self, *, app: str, user_id: str) -> dict[str, Any]:
        return self._state_of(await self._user_app(user_id, app).get())

    async def add_memories(self, records: list[MemoryRecord]) -> None:
        batch = self.client.batch()
        for record in records:
            batch.set(
                self._user(record.user_id).collection(MEMORIES).document(record.id),
                memory_document(record),
            )
        await batch.commit()

    async def list_memories(
        self, user_id: str, *, app: str | None = None, limit: int = 20
    ) -> list[MemoryRecord]:
        query = self._user(user_id).collection(MEMORIES)
        if app is not None:
            query = query.where(filter=firestore.FieldFilter("app", "==", app))
        query = query.order_by("created_at", direction=firestore.Query.DESCENDING).limit(limit)
        return [codec.memory_from_row(snap.to_dict()) async for snap in query.stream()]

    async def delete_memory(self, user_id: str, memory_id: str) -> bool:
        ref = self._user(user_id).collection(MEMORIES).document(memory_id)
        if not (await ref.get()).exists:
            return False
        await ref.delete()
        return True

    async def delete_user(self, user_id: str) -> int:
        removed = await self.client.recursive_delete(self._user(user_id))
        # Records outside the user's subtree that name the user: the outbox and poison messages.
        outbox = self.client.collection(JOBS).where(
            filter=firestore.FieldFilter("user_id", "==", user_id)
        )
        failures = self.client.collection(JOB_FAILURES).where(
            filter=firestore.FieldFilter("user_id", "==", user_id)
        )
        async for doc in outbox.stream():
            await doc.reference.delete()
            removed += 1
        async for doc in failures.stream():
            await doc.reference.delete()
            removed += 1
        return removed

    # -- ProfileStore (confidant/profiles/store.py) ----------------------------------------------

    async def load_profile(self, user_id: str) -> dict[str, Any]:
        return firestore_profile.stored_profile(await self._user(user_id).get())

    async def load_profile_version(self, user_id: str) -> ProfileVersion | None:
        return firestore_profile.version_of(await self._user(user_id).get())

    async def update_profile(self, user_id: str, ops: list[ProfileOp]) -> dict[str, Any]:
        ref = self._user(user_id)

        @firestore.async_transactional
        async def apply(transaction: AsyncTransaction) -> dict[str, Any]:
            before = firestore_profile.stored_profile(await ref.get(transaction=transaction))
            return firestore_profile.write_ops(transaction, ref, before, ops)

        return await apply(self.client.transaction())

    async def replace_profile(
        self, user_id: str, profile: dict[str, Any], *, expected: dict[str, Any]
    ) -> bool:
        ref = self._user(user_id)

        @firestore.async_transactional
        async def replace(transaction: AsyncTransaction) -> bool:
            if firestore_profile.stored_profile(await ref.get(transaction=transaction)) != expected:
                return False
            transaction.set(ref, profile)  # subcollections are untouched by a set
            return True

        return await replace(self.client.transaction())

    async def list_profile_users(self, *, after: str | None, limit: int) -> list[str]:
        query = self.client.collection(USERS).select([]).order_by("__name__").limit(limit)
        if after is not None:
            query = query.start_after({"__name__": self._user(after)})
        return [snap.id async for snap in query.stream()]

    async def close(self) -> None:
        return None  # the client is the process's; the composition root closes it
