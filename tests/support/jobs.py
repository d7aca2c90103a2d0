"""JobRecord builders shared by job bus tests."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from confidant.ports import JobRecord


def make_job(kind: str = "emotion", *, turn: int = 1, **overrides: Any) -> JobRecord:
    session_id = overrides.pop("session_id", f"s-{uuid.uuid4().hex[:8]}")
    fields: dict[str, Any] = {
        "job_id": f"{session_id}:{turn}:{kind}",
        "kind": kind,
        "user_id": "user-1",
        "app": "onemind",
        "session_id": session_id,
        "turn": turn,
        "payload": {"locale": "zh", "text": "今天有点累"},
        "created_at": datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC),
    }
    fields.update(overrides)
    return JobRecord(**fields)
