"""Real session-store adapters for tests: a SQLite file, and Firestore on the emulator."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore

from confidant.sessions.firestore_store import FirestoreSessionStore
from confidant.sessions.records import TailPolicy
from confidant.sessions.sqlite_store import SqliteSessionStore
from confidant.sessions.store import SessionStore

EMULATOR_PROJECT = "confidant-test"


def emulator_client() -> firestore.AsyncClient:
    """A client for the emulator named by FIRESTORE_EMULATOR_HOST."""
    return firestore.AsyncClient(project=EMULATOR_PROJECT, credentials=AnonymousCredentials())


@asynccontextmanager
async def sqlite_store(tmp_path, policy: TailPolicy | None = None) -> AsyncIterator[SessionStore]:  # type: ignore[no-untyped-def]
    store = SqliteSessionStore(str(tmp_path / f"{uuid.uuid4().hex}.db"), policy=policy)
    try:
        yield store
    finally:
        await store.close()


@asynccontextmanager
async def firestore_store(policy: TailPolicy | None = None) -> AsyncIterator[SessionStore]:
    yield FirestoreSessionStore(emulator_client(), policy=policy)
