"""Storage-neutral session records and the rules every backend applies to them.

A session is one document: its state, a revision, a lease, and the *tail* — the most recent
events, stored inline so that loading a turn's window is one document read and committing a turn
is one document write. Older events move to immutable chunk documents, a batch at a time, so the
session document stays bounded however long the conversation grows. A pending human-in-the-loop
call never leaves the tail, so a resume always finds it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from confidant.ports import JobRecord, MemoryRecord
from confidant.profiles.ops import ProfileOp
from confidant.profiles.store import ProfileVersion

# Events are stored as JSON text: Firestore map-merge semantics and index costs never touch them.
StoredEvent = dict[str, Any]  # {"seq": int, "json": str}


@dataclass(frozen=True)
class SessionKey:
    user_id: str
    app: str
    session_id: str


@dataclass(frozen=True)
class TailPolicy:
    """How many events stay inline; `flush_batch` more accumulate before a chunk is written."""

    window: int = 40
    flush_batch: int = 24
    max_tail_bytes: int = 600_000
    # Tool calls and results older than this many invocations are left out of the model's
    # window (their text replies stay): they cost tokens and request building every turn.
    # None keeps them all.
    tool_invocations: int | None = 2


@dataclass(frozen=True)
class SessionRecord:
    key: SessionKey
    state: dict[str, Any]
    revision: int
    next_seq: int
    tail: list[StoredEvent]
    created_at: float
    updated_at: float
    summary: str | None = None
    lease_holder: str | None = None
    lease_expires: float = 0.0

    def lease_free(self, now: float) -> bool:
        return self.lease_holder is None or self.lease_expires <= now


@dataclass(frozen=True)
class EventChunk:
    """An immutable run of older events, keyed by its first sequence number."""

    first_seq: int
    last_seq: int
    events: list[StoredEvent]


@dataclass
class TurnWrite:
    """Everything one turn (or one direct append) commits, atomically."""

    expected_revision: int
    events: list[str] = field(default_factory=list)  # event JSON, in order
    state: dict[str, Any] | None = None  # the session-scoped state after the turn
    app_delta: dict[str, Any] = field(default_factory=dict)
    user_delta: dict[str, Any] = field(default_factory=dict)
    memories: list[MemoryRecord] = field(default_factory=list)
    jobs: list[JobRecord] = field(default_factory=list)
    # Writes to the user's unified profile made during the turn (state and protocol tools).
    profile_ops: list[ProfileOp] = field(default_factory=list)
    profile_version: ProfileVersion | None = None  # what the ops were buffered on, if known
    lease_holder: str | None = None  # the lease this write must hold (and releases)
    now: float = 0.0
    # The record as the lease loaded it, and the store's token for that version: a store may
    # then commit without re-reading, on the precondition that nothing else wrote since.
    base: SessionRecord | None = None
    lease_token: object | None = None


def new_record(key: SessionKey, state: dict[str, Any], now: float) -> SessionRecord:
    return SessionRecord(
        key=key, state=state, revision=0, next_seq=0, tail=[], created_at=now, updated_at=now
    )


def acquire_lease(record: SessionRecord, holder: str, now: float, ttl_s: float) -> SessionRecord:
    return replace(record, lease_holder=holder, lease_expires=now + ttl_s)


def renew_lease(
    record: SessionRecord, holder: str, now: float, ttl_s: float
) -> SessionRecord | None:
    """The record with `holder`'s lease extended, or None when `holder` no longer holds it."""
    if record.lease_holder != holder:
        return None
    return replace(record, lease_expires=now + ttl_s)


def release_lease(record: SessionRecord, holder: str) -> SessionRecord:
    if record.lease_holder != holder:
        return record
    return replace(record, lease_holder=None, lease_expires=0.0)


def apply_write(
    record: SessionRecord, write: TurnWrite, policy: TailPolicy
) -> tuple[SessionRecord, EventChunk | None]:
    """The record after `write`, plus the chunk to write when the tail overflows.

    Callers have already checked revision and lease (`check_write`).
    """
    tail = list(record.tail)
    seq = record.next_seq
    for event_json in write.events:
        tail.append({"seq": seq, "json": event_json})
        seq += 1
    tail, chunk = _spill(tail, policy)
    updated = replace(
        record,
        state=record.state if write.state is None else write.state,
        revision=record.revision + 1,
        next_seq=seq,
        tail=tail,
        updated_at=write.now,
    )
    if write.lease_holder is not None:
        updated = release_lease(updated, write.lease_holder)
    return updated, chunk


def check_write(record: SessionRecord, write: TurnWrite, now: float) -> str | None:
    """Why `write` must not commit on `record`, or None when it may."""
    if record.revision != write.expected_revision:
        return f"session revision is {record.revision}, the turn expected {write.expected_revision}"
    if write.lease_holder is None:
        # A lease-less append (direct service use) must not slip into a running turn.
        if not record.lease_free(now):
            return "a turn holds the session's lease"
    elif record.lease_holder != write.lease_holder:
        return "the turn's lease was lost (expired and taken by another turn)"
    return None


def _tail_bytes(tail: list[StoredEvent]) -> int:
    return sum(len(e["json"]) for e in tail)


def _spill(
    tail: list[StoredEvent], policy: TailPolicy
) -> tuple[list[StoredEvent], EventChunk | None]:
    overflow = len(tail) > policy.window + policy.flush_batch
    too_big = _tail_bytes(tail) > policy.max_tail_bytes
    if not (overflow or too_big):
        return tail, None
    keep_from = max(0, len(tail) - policy.window)
    if too_big:
        # Keep only as many recent events as fit in half the byte budget (at least one).
        budget, keep_from = policy.max_tail_bytes // 2, len(tail) - 1
        while keep_from > 0 and _tail_bytes(tail[keep_from - 1 :]) <= budget:
            keep_from -= 1
    keep_from = min(keep_from, _first_pending_call_index(tail))
    if keep_from <= 0:
        return tail, None
    spilled = tail[:keep_from]
    chunk = EventChunk(first_seq=spilled[0]["seq"], last_seq=spilled[-1]["seq"], events=spilled)
    return tail[keep_from:], chunk


def window_of(tail: list[StoredEvent], window: int) -> list[StoredEvent]:
    """The events a turn hands the model: the last `window`, from the oldest pending call on."""
    start = min(max(0, len(tail) - window), _first_pending_call_index(tail))
    return tail[start:]


def _first_pending_call_index(tail: list[StoredEvent]) -> int:
    """Index of the oldest event holding a long-running call that has no response yet."""
    pending: dict[str, int] = {}
    for index, stored in enumerate(tail):
        text = stored["json"]
        if "long_running_tool_ids" not in text and "function_response" not in text:
            continue  # most events: no need to parse
        event = json.loads(text)
        for call_id in event.get("long_running_tool_ids") or []:
            pending.setdefault(call_id, index)
        for part in (event.get("content") or {}).get("parts") or []:
            response = part.get("function_response")
            if response and response.get("id") in pending:
                pending.pop(response["id"])
    return min(pending.values(), default=len(tail))
