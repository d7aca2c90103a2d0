"""The task writer port: create a task in an external task system, findable by its key."""

from __future__ import annotations

from datetime import date
from typing import Literal, Protocol

from pydantic import BaseModel, Field

Priority = Literal["low", "medium", "high", "urgent"]


class TaskDraft(BaseModel):
    """A task as taskflow hands it to the writer (already reviewed and approved)."""

    title: str = Field(min_length=1, max_length=200)
    description: str = ""
    due_date: date | None = None
    priority: Priority = "medium"
    status: str = "Not started"
    tags: list[str] = Field(default_factory=list)
    task_type: str = ""
    area: str = ""


class WrittenTask(BaseModel):
    """What the task system answered: its id and a link for the user."""

    id: str
    url: str = ""
    idempotency_key: str


class TaskSystemError(RuntimeError):
    """The task system could not be reached or kept failing (worth retrying later)."""


class TaskRejectedError(ValueError):
    """The task system refused the task (validation): retrying the same task cannot help."""


class TaskWriter(Protocol):
    async def create_task(self, task: TaskDraft, *, idempotency_key: str) -> WrittenTask:
        """Create the task, storing `idempotency_key` on it."""
        ...

    async def find_task(self, idempotency_key: str) -> WrittenTask | None:
        """The task created with this key, if any (reconciles an attempt of unknown outcome)."""
        ...

    async def close(self) -> None: ...
