"""The offline task writer: tasks go to a table of the embedded SQLite file (local runs)."""

from __future__ import annotations

import uuid

from confidant.sqlite import SqliteFile
from confidant.tasks.port import TaskDraft, WrittenTask

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
  idempotency_key TEXT PRIMARY KEY, id TEXT NOT NULL, task TEXT NOT NULL);
"""


class LocalTaskWriter(SqliteFile):
    """Each key is written once by construction (the key is the primary key)."""

    schema = _SCHEMA

    @staticmethod
    def _written(task_id: str, key: str) -> WrittenTask:
        return WrittenTask(id=task_id, url=f"local-task://{task_id}", idempotency_key=key)

    async def create_task(self, task: TaskDraft, *, idempotency_key: str) -> WrittenTask:
        async with self._use() as conn:
            await conn.execute(
                "INSERT OR IGNORE INTO tasks VALUES (?, ?, ?)",
                (idempotency_key, uuid.uuid4().hex, task.model_dump_json()),
            )
        found = await self.find_task(idempotency_key)
        assert found is not None
        return found

    async def find_task(self, idempotency_key: str) -> WrittenTask | None:
        row = await self._fetch_one(
            "SELECT id FROM tasks WHERE idempotency_key = ?", (idempotency_key,)
        )
        return None if row is None else self._written(row[0], idempotency_key)

    async def list_tasks(self) -> list[TaskDraft]:
        rows = await self._fetch_all("SELECT task FROM tasks ORDER BY rowid")
        return [TaskDraft.model_validate_json(row[0]) for row in rows]
