"""A real runtime (SQLite file or Firestore emulator) whose turns record jobs without running
them, so a test decides when and how often each job is delivered."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from confidant.bootstrap import Runtime, build_runtime
from confidant.chat.requests import parse_chat_request
from confidant.ports import JobRecord
from confidant.settings import Settings
from tests.conftest import TEST_PROJECT


class RecordingBus:
    """A JobBus that keeps what it is given (or fails, when `down`)."""

    def __init__(self) -> None:
        self.published: list[JobRecord] = []
        self.down = False

    async def publish(self, jobs: Sequence[JobRecord]) -> None:
        if self.down:
            raise ConnectionError("the bus is down")
        self.published.extend(jobs)

    async def close(self) -> None:
        return None

    def of_kind(self, kind: str) -> list[JobRecord]:
        return [job for job in self.published if job.kind == kind]


@asynccontextmanager
async def job_runtime(backend: str, tmp_path: Any, **overrides: Any) -> AsyncIterator[Runtime]:
    if backend == "firestore":
        settings = Settings(
            store="firestore",
            auth="firebase",
            firebase_project_id="confidant-test-auth",
            project_id=TEST_PROJECT,
            model="offline",
            **overrides,
        )
    else:
        defaults = {"sqlite_path": str(tmp_path / "jobs.db"), "model": "offline"}
        settings = Settings(**(defaults | overrides))
    runtime = build_runtime(settings)
    runtime.chat.jobs = RecordingBus()
    try:
        yield runtime
    finally:
        await runtime.close()


def bus_of(runtime: Runtime) -> RecordingBus:
    assert isinstance(runtime.chat.jobs, RecordingBus)
    return runtime.chat.jobs


async def say(runtime: Runtime, user_id: str, session_id: str, message: str) -> str:
    """One committed chat turn; returns the reply text."""
    request = parse_chat_request(
        {"message": message, "session_id": session_id},
        default_app="onemind",
        default_locale="en",
        max_message_chars=8000,
        app=None,
    )
    prepared = await runtime.chat.prepare(user_id, request)
    async for _ in prepared.stream():
        pass
    assert prepared.result.error is None, prepared.result.error
    return prepared.result.text


def new_user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"
