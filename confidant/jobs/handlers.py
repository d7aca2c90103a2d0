"""The built-in job kinds: emotion snapshots, rolling summaries, long-term memory.

Each handler reads what it needs, makes one model call through the extractor, and returns a
`JobEffect`; it never writes. The turn's payload (built by the chat service) carries the user's
message, the reply, the event seqs the turn wrote and the app's options (e.g. `person_id`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from confidant.jobs import prompts
from confidant.jobs.effects import (
    EMOTIONS,
    DeleteMemory,
    JobEffect,
    Operation,
    PutMemory,
    PutRecord,
    PutSummary,
    effect_key,
)
from confidant.jobs.errors import PoisonJobError, StaleJobError
from confidant.jobs.service import JobDeps, register_job_handler
from confidant.ports import JobRecord, MemoryRecord
from confidant.sessions.records import SessionKey

EMOTION = "emotion"
SUMMARY = "summary"
MEMORY = "memory"
FACT_KIND = "fact"  # the memory kind of extracted facts (crystals keep their own kind)

MAX_SUMMARY_EVENTS = 80  # events one summary step reads; the next turn's job reads on
MAX_EVENT_CHARS = 600
SIMILAR_MEMORIES = 8  # existing memories offered to the consolidation step
MAX_MEMORY_OPERATIONS = 10


# -- payload ------------------------------------------------------------------------------------


def _text(job: JobRecord, name: str, *, required: bool = True) -> str:
    value = job.payload.get(name, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise PoisonJobError(f"{job.kind} job payload needs a non-empty string {name!r}")
    return value


def _int(job: JobRecord, name: str) -> int:
    value = job.payload.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PoisonJobError(f"{job.kind} job payload needs a non-negative integer {name!r}")
    return value


def person_of(job: JobRecord) -> str | None:
    """The person a turn was about (relationship app): payload or the turn's options."""
    options = job.payload.get("options")
    person = job.payload.get("person_id") or (
        options.get("person_id") if isinstance(options, dict) else None
    )
    return str(person) if person else None


# -- emotion --------------------------------------------------------------------------------------


class EmotionReading(BaseModel):
    user_mood: str = Field(min_length=1, max_length=60)
    other_mood: str | None = Field(default=None, max_length=60)
    trend: Literal["improving", "steady", "worsening"] = "steady"
    tags: list[str] = Field(default_factory=list, max_length=8)

    @field_validator("tags")
    @classmethod
    def _short_tags(cls, tags: list[str]) -> list[str]:
        return [tag.strip().lower()[:30] for tag in tags if tag.strip()]


async def emotion_job(job: JobRecord, deps: JobDeps) -> JobEffect:
    message = _text(job, "message")
    previous = await deps.store.emotions(
        job.user_id, app=job.app, session_id=job.session_id, limit=1
    )
    request = "\n\n".join(
        [
            prompts.section(prompts.PREVIOUS_MOOD, previous[-1]["user_mood"] if previous else ""),
            prompts.section(prompts.USER_MESSAGE, message),
            prompts.section(prompts.ASSISTANT_REPLY, _text(job, "reply", required=False)),
        ]
    )
    reading = await deps.extractor.extract(
        prompts.EMOTION_TASK, prompts.EMOTION_INSTRUCTION, request, EmotionReading
    )
    snapshot = reading.model_dump() | {"person_id": person_of(job), "turn": job.turn}
    return JobEffect(
        [
            PutRecord(
                collection=EMOTIONS,
                id=effect_key(job),
                app=job.app,
                session_id=job.session_id,
                created_at=job.created_at.timestamp(),
                data=snapshot,
            )
        ],
        note=reading.user_mood,
    )


# -- summary --------------------------------------------------------------------------------------


class SummaryAnswer(BaseModel):
    summary: str = Field(min_length=1, max_length=2000)


def _event_line(stored: dict[str, Any]) -> str | None:
    event = json.loads(stored["json"])
    parts = (event.get("content") or {}).get("parts") or []
    text = " ".join(p.get("text", "") for p in parts if p.get("text") and not p.get("thought"))
    if not text.strip() or event.get("partial"):
        return None
    who = "user" if event.get("author") == "user" else "assistant"
    return f"{who}: {' '.join(text.split())[:MAX_EVENT_CHARS]}"


async def summary_job(job: JobRecord, deps: JobDeps) -> JobEffect:
    last_seq = _int(job, "last_seq")
    previous = await deps.store.summary(job.user_id, job.app, job.session_id)
    covered = previous["covers_seq"] if previous else -1
    if covered >= last_seq:
        raise StaleJobError(f"the summary already covers seq {covered} (this job: {last_seq})")
    page = await deps.sessions.read_events(  # NotFoundError → GONE
        SessionKey(job.user_id, job.app, job.session_id),
        after_seq=covered,
        limit=MAX_SUMMARY_EVENTS,
    )
    events = [e for e in page.events if e["seq"] <= last_seq]
    if not events:
        raise StaleJobError(f"no events after seq {covered}")
    lines = [line for e in events if (line := _event_line(e))]
    request = "\n\n".join(
        [
            prompts.section(prompts.PREVIOUS_SUMMARY, previous["text"] if previous else ""),
            prompts.section(prompts.NEW_EVENTS, "\n".join(lines)),
        ]
    )
    answer = await deps.extractor.extract(
        prompts.SUMMARY_TASK, prompts.SUMMARY_INSTRUCTION, request, SummaryAnswer
    )
    # Honest coverage: a long gap is summarised in steps of MAX_SUMMARY_EVENTS.
    covers = events[-1]["seq"]
    return JobEffect([PutSummary(answer.summary.strip(), covers, job.turn)], note=f"≤{covers}")


# -- memory ---------------------------------------------------------------------------------------


class MemoryOperation(BaseModel):
    op: Literal["add", "update", "delete"]
    id: str | None = None
    text: str | None = Field(default=None, max_length=500)


class MemoryPlan(BaseModel):
    operations: list[MemoryOperation] = Field(default_factory=list)


async def memory_job(job: JobRecord, deps: JobDeps) -> JobEffect:
    message = _text(job, "message")
    [query] = await deps.embedder.embed([message], task="query")
    similar = await deps.store.search_memories(job.user_id, query, app=None, limit=SIMILAR_MEMORIES)
    # Only extracted facts may be changed; crystals and other kinds are offered as context.
    facts = {m.id: m for m in similar if m.kind == FACT_KIND}
    request = "\n\n".join(
        [
            prompts.section(prompts.USER_MESSAGE, message),
            prompts.section(
                prompts.EXISTING_MEMORIES,
                "\n".join(f"- [{m.id}] {' '.join(m.text.split())}" for m in facts.values()),
            ),
        ]
    )
    plan = await deps.extractor.extract(
        prompts.MEMORY_TASK, prompts.MEMORY_INSTRUCTION, request, MemoryPlan
    )
    return await _memory_effect(job, deps, plan, facts)


async def _memory_effect(
    job: JobRecord, deps: JobDeps, plan: MemoryPlan, facts: dict[str, MemoryRecord]
) -> JobEffect:
    now = datetime.now(UTC)
    writes: list[MemoryRecord] = []
    deletes: list[str] = []
    for index, op in enumerate(plan.operations[:MAX_MEMORY_OPERATIONS]):
        text = " ".join((op.text or "").split())
        if op.op == "delete" and op.id in facts:
            deletes.append(op.id)
        elif op.op == "update" and op.id in facts and text:
            old = facts[op.id]
            writes.append(
                old.model_copy(
                    update={
                        "text": text,
                        "data": old.data | {"updated_at": now.isoformat(), "previous": old.text},
                    }
                )
            )
        elif op.op == "add" and text:
            writes.append(
                MemoryRecord(
                    id=f"{effect_key(job)}-{index}",  # stable across retries of this job
                    user_id=job.user_id,
                    app=job.app,
                    kind=FACT_KIND,
                    text=text,
                    data={"turn": job.turn},
                    session_id=job.session_id,
                    created_at=now,
                )
            )
        # Anything else (an id that was not offered, an empty text) is ignored: the model
        # may only touch the user's own memories it was shown.
    vectors = await deps.embedder.embed([m.text for m in writes], task="document") if writes else []
    operations: list[Operation] = [
        PutMemory(m.model_copy(update={"embedding": v}))
        for m, v in zip(writes, vectors, strict=True)
    ]
    operations += [DeleteMemory(memory_id) for memory_id in deletes]
    return JobEffect(operations, note=f"{len(writes)} written, {len(deletes)} deleted")


register_job_handler(EMOTION, emotion_job)
register_job_handler(SUMMARY, summary_job)
register_job_handler(MEMORY, memory_job)
