"""Storage-neutral session records and the rules every backend applies to them.

A session is one document: its state, a revision, a lease, and the *tail* — the most recent
events, stored inline so that loading a turn's window is one document read and committing a turn
is one document write. Older events move to immutable chunk documents, a batch at a time, so the
session document stays bounded however long the conversation grows. A pending human-in-the-loop
call never leaves the tail, so a resume always finds it.

Bounded in bytes, not only in events (Firestore refuses documents over 1 MiB): sizes are measured
as stored (UTF-8 of the JSON text, escapes included). The tail spills when it passes its budget
(`max_tail_bytes`, less the state's size), and a spill is cut into as many chunks as it takes to
keep each under `max_document_bytes`. A single event larger than `max_event_bytes` is stored
shrunk (`shrink_event`): its tool payloads (function responses, call arguments) are replaced by a
marker holding their size and a prefix, largest first until it fits; the text the user saw stays
intact (message and reply lengths are limited upstream; tool results are not).
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
    # Inline events' budget (the state and summary's size comes off it); a spill keeps half, so
    # the latest exchange with a large tool result usually stays in the window.
    max_tail_bytes: int = 800_000
    # Every stored document (session or chunk) stays under this; Firestore's limit is 1 MiB and
    # the rest is room for names, the lease and the other fields.
    max_document_bytes: int = 900_000
    # A larger event is stored with its tool payloads cut (see `shrink_event`).
    max_event_bytes: int = 400_000
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
) -> tuple[SessionRecord, list[EventChunk]]:
    """The record after `write`, plus the chunks to write when the tail overflows.

    Callers have already checked revision and lease (`check_write`).
    """
    tail = list(record.tail)
    seq = record.next_seq
    for event_json in write.events:
        tail.append({"seq": seq, "json": shrink_event(event_json, policy.max_event_bytes)})
        seq += 1
    state = record.state if write.state is None else write.state
    beside_tail = stored_bytes(state) + stored_bytes(record.summary) + _DOCUMENT_FIELDS_BYTES
    tail, chunks = _spill(tail, policy, beside_tail=beside_tail)
    updated = replace(
        record,
        state=state,
        revision=record.revision + 1,
        next_seq=seq,
        tail=tail,
        updated_at=write.now,
    )
    if write.lease_holder is not None:
        updated = release_lease(updated, write.lease_holder)
    return updated, chunks


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


# Names, revision, lease, timestamps: what a session document holds beside state, summary, tail.
_DOCUMENT_FIELDS_BYTES = 4_096


def stored_bytes(value: Any) -> int:
    """Bytes `value` takes stored as JSON text (Firestore counts UTF-8 bytes, plus one)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode())


def _tail_bytes(tail: list[StoredEvent]) -> int:
    return sum(stored_bytes(e) + 1 for e in tail)


def _spill(
    tail: list[StoredEvent], policy: TailPolicy, *, beside_tail: int = 0
) -> tuple[list[StoredEvent], list[EventChunk]]:
    overflow = len(tail) > policy.window + policy.flush_batch
    # The session document holds the state and summary beside the tail: the tail gets the rest.
    budget = min(policy.max_tail_bytes, policy.max_document_bytes - beside_tail)
    too_big = _tail_bytes(tail) > budget
    if not (overflow or too_big):
        return tail, []
    keep_from = max(0, len(tail) - policy.window)
    if too_big:
        # Keep only as many recent events as fit in half the byte budget (at least one).
        keep_from, kept = len(tail) - 1, stored_bytes(tail[-1])
        while keep_from > 0 and kept + stored_bytes(tail[keep_from - 1]) + 1 <= budget // 2:
            keep_from -= 1
            kept += stored_bytes(tail[keep_from]) + 1
    keep_from = min(keep_from, _first_pending_call_index(tail))
    if keep_from <= 0:
        return tail, []
    return tail[keep_from:], _chunks(tail[:keep_from], policy.max_document_bytes)


def _chunks(events: list[StoredEvent], max_bytes: int) -> list[EventChunk]:
    """`events` cut into runs that each stay under `max_bytes` stored (each event is smaller)."""
    runs: list[list[StoredEvent]] = [[]]
    size = 0
    for event in events:
        event_size = stored_bytes(event) + 1
        if runs[-1] and size + event_size > max_bytes:
            runs.append([])
            size = 0
        runs[-1].append(event)
        size += event_size
    return [EventChunk(first_seq=r[0]["seq"], last_seq=r[-1]["seq"], events=r) for r in runs]


# What replaces a tool payload too large to store; the model sees it in later turns' windows.
TRUNCATED_MARKER = "confidant_truncated"
_PREVIEW_CHARS = 2_000


def shrink_event(event_json: str, max_bytes: int) -> str:
    """`event_json`, or when it is larger than `max_bytes` stored, the event with its largest
    tool payloads replaced by a marker until it fits. Text parts are never cut: message and
    reply lengths are limited upstream, tool results are not."""
    if stored_bytes(event_json) <= max_bytes:
        return event_json
    event = json.loads(event_json)
    payloads = []  # (size, part, key) for every tool payload, largest first
    for part in (event.get("content") or {}).get("parts") or []:
        for key, inner in (("function_response", "response"), ("function_call", "args")):
            if isinstance(part.get(key), dict) and part[key].get(inner) is not None:
                payloads.append((stored_bytes(part[key][inner]), part[key], inner))
    for size, holder, key in sorted(payloads, key=lambda p: -p[0]):
        text = json.dumps(holder[key], ensure_ascii=False, default=str)
        holder[key] = {
            TRUNCATED_MARKER: True,
            "original_bytes": size,
            "preview": text[:_PREVIEW_CHARS],
        }
        shrunk = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
        if stored_bytes(shrunk) <= max_bytes:
            break
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


def from_oldest_pending_call(tail: list[StoredEvent]) -> list[StoredEvent]:
    """The tail's events from its oldest unanswered long-running call on (none when nothing
    waits): every pending call and every response to one is among them, so they alone say what
    a paused run waits for, without parsing the whole tail."""
    return tail[_first_pending_call_index(tail) :]


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
