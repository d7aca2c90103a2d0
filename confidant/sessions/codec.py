"""JSON encoding of the records every backend stores."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from confidant.ports import JobRecord, MemoryRecord


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def loads_dict(text: str | None) -> dict[str, Any]:
    return json.loads(text) if text else {}


def loads_list(text: str | None) -> list[Any]:
    return json.loads(text) if text else []


def memory_to_row(record: MemoryRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "user_id": record.user_id,
        "app": record.app,
        "kind": record.kind,
        "text": record.text,
        "data": dumps(record.data),
        "session_id": record.session_id,
        "created_at": record.created_at.timestamp(),
        "embedding": record.embedding,  # each store encodes it (JSON text, a Firestore Vector)
    }


def memory_from_row(row: dict[str, Any]) -> MemoryRecord:
    return MemoryRecord(
        id=row["id"],
        user_id=row["user_id"],
        app=row["app"],
        kind=row["kind"],
        text=row["text"],
        data=loads_dict(row["data"]),
        session_id=row.get("session_id"),
        created_at=datetime.fromtimestamp(row["created_at"], tz=UTC),
        embedding=_vector(row.get("embedding")),
    )


def _vector(value: Any) -> list[float] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return json.loads(value)
    return [float(x) for x in value]  # a list, or a Firestore Vector (a sequence of floats)


def job_to_row(job: JobRecord) -> dict[str, Any]:
    return {
        "job_id": job.job_id,
        "kind": job.kind,
        "user_id": job.user_id,
        "app": job.app,
        "session_id": job.session_id,
        "turn": job.turn,
        "payload": dumps(job.payload),
        "created_at": job.created_at.timestamp(),
        "status": "pending",
    }


def apply_delta(state: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    merged = dict(state)
    merged.update(delta)
    return merged
