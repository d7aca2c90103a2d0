"""The post-turn job pipeline on each backend (SQLite file; Firestore on the emulator):
real chat turns record jobs, and the tests deliver them — once, twice, concurrently, in
reverse order, malformed — and read what the stores hold."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.cloud import firestore
from google.genai import errors as genai_errors

from confidant.bootstrap import Runtime
from confidant.chat.context import (
    EMOTIONS,
    MEMORY_HITS,
    SUMMARY,
    ContextRequest,
    load_context,
)
from confidant.cli.exits import ExitCode
from confidant.cli.main import build_parser
from confidant.embeddings import HashedEmbedder
from confidant.jobs.effects import REPLAYABLE_STATUSES, JobEffect, JobOutcome, PutSummary
from confidant.jobs.extractor import Extractor
from confidant.jobs.handlers import FACT_KIND
from confidant.jobs.service import JobDeps, JobService
from confidant.jobs.sqlite_store import cosine
from confidant.ports import JobRecord, MemoryRecord
from confidant.sessions.records import SessionKey
from tests.conftest import TEST_PROJECT
from tests.support.job_runtime import bus_of, job_runtime, new_user, say

APP = "onemind"


@pytest.fixture(params=["sqlite", "firestore"])
async def runtime(request, tmp_path) -> AsyncIterator[Runtime]:  # type: ignore[no-untyped-def]
    if request.param == "firestore":
        request.getfixturevalue("firestore_emulator")
    async with job_runtime(request.param, tmp_path) as runtime:
        yield runtime


async def _last_seq(runtime: Runtime, user: str, session: str) -> int:
    loaded = await runtime.store.load(SessionKey(user, APP, session))
    assert loaded is not None
    return loaded.record.next_seq - 1


async def test_a_turns_jobs_leave_a_snapshot_a_summary_and_memories(runtime: Runtime) -> None:
    user = new_user()
    await say(runtime, user, "s", "I am a teacher and I feel stuck with my thesis")
    await say(runtime, user, "s", "My sister lives in Berlin and I'm afraid of calling her")
    jobs = bus_of(runtime).published
    assert sorted(job.kind for job in jobs) == ["emotion"] * 2 + ["memory"] * 2 + ["summary"] * 2
    for job in jobs:  # in commit order, as a healthy transport delivers them
        assert await runtime.job_service.handle(job) is JobOutcome.DONE, job.kind

    emotions = await runtime.job_store.emotions(user, app=APP, session_id="s", limit=5)
    assert [e["user_mood"] for e in emotions] == ["stuck", "afraid"]  # oldest first
    assert [e["trend"] for e in emotions] == ["steady", "worsening"]
    assert emotions[1]["other_mood"] is None  # the sister is mentioned, her mood is not

    summary = await runtime.job_store.summary(user, APP, "s")
    assert summary is not None
    assert summary["covers_seq"] == await _last_seq(runtime, user, "s")
    assert "teacher" in summary["text"] and "Berlin" in summary["text"]

    memories = await runtime.store.list_memories(user)
    assert sorted(m.text for m in memories) == [
        "I am a teacher and I feel stuck with my thesis",
        "My sister lives in Berlin and I'm afraid of calling her",
    ]
    assert all(m.kind == FACT_KIND and m.embedding for m in memories)

    # The next turn's context: the summary and the memories nearest to its message.
    loaded = await load_context(
        runtime.chat.context_sources,
        [SUMMARY, MEMORY_HITS, EMOTIONS],
        ContextRequest(user, APP, "s", "how is my sister in Berlin", "en"),
    )
    assert loaded[SUMMARY] == summary
    assert loaded[EMOTIONS] == emotions  # the trajectory, oldest first
    assert loaded[MEMORY_HITS][0].text.startswith("My sister lives in Berlin")


async def test_a_later_fact_updates_the_memory_it_changes(runtime: Runtime) -> None:
    user = new_user()
    await say(runtime, user, "s", "I am a teacher in a small town")
    await say(runtime, user, "s", "I am a nurse now, and my cat is called Miso")
    for job in bus_of(runtime).of_kind("memory"):
        assert await runtime.job_service.handle(job) is JobOutcome.DONE
    texts = sorted(m.text for m in await runtime.store.list_memories(user))
    assert texts == ["I am a nurse now, and my cat is called Miso"] or texts == [
        "I am a nurse now, and my cat is called Miso",
    ]
    [memory] = await runtime.store.list_memories(user)
    assert memory.data["previous"] == "I am a teacher in a small town"


async def test_redelivered_and_concurrent_deliveries_have_one_effect(runtime: Runtime) -> None:
    user = new_user()
    await say(runtime, user, "s", "I have two kids and I am tired")
    bus = bus_of(runtime)
    [memory_job] = bus.of_kind("memory")
    [emotion_job] = bus.of_kind("emotion")
    outcomes = await asyncio.gather(*(runtime.job_service.handle(memory_job) for _ in range(3)))
    await _one_effect(runtime, memory_job, outcomes)
    assert await runtime.job_service.handle(memory_job) is JobOutcome.DUPLICATE
    assert [m.text for m in await runtime.store.list_memories(user)] == [
        "I have two kids and I am tired"
    ]
    both = await asyncio.gather(
        runtime.job_service.handle(emotion_job), runtime.job_service.handle(emotion_job)
    )
    await _one_effect(runtime, emotion_job, both)
    assert await runtime.job_service.handle(emotion_job) is JobOutcome.DUPLICATE
    assert len(await runtime.job_store.emotions(user, app=APP, session_id=None, limit=5)) == 1


async def _one_effect(runtime: Runtime, job: JobRecord, outcomes: list[JobOutcome]) -> None:
    """At most one delivery applied the effect; each other one saw its mark, or (when the
    database aborted its contended transaction) asked for a redelivery. When every one was
    aborted (the emulator times out contended locks under load), Pub/Sub's redelivery applies
    it: the effect still happens once."""
    assert outcomes.count(JobOutcome.DONE) <= 1, outcomes
    assert set(outcomes) <= {JobOutcome.DONE, JobOutcome.DUPLICATE, JobOutcome.RETRY}, outcomes
    if JobOutcome.DONE not in outcomes:
        assert JobOutcome.RETRY in outcomes, outcomes
        assert await runtime.job_service.handle(job) is JobOutcome.DONE


async def test_summaries_delivered_in_reverse_order_never_move_back(runtime: Runtime) -> None:
    user = new_user()
    await say(runtime, user, "s", "I keep putting off my thesis")
    await say(runtime, user, "s", "I am afraid it will not be good enough")
    first, second = bus_of(runtime).of_kind("summary")
    assert first.turn < second.turn
    assert await runtime.job_service.handle(second) is JobOutcome.DONE
    after_second = await runtime.job_store.summary(user, APP, "s")
    assert await runtime.job_service.handle(first) is JobOutcome.STALE
    assert await runtime.job_store.summary(user, APP, "s") == after_second
    # The store refuses an older summary even when the handler's early check was passed.
    older = JobEffect([PutSummary("an older summary", first.payload["last_seq"], first.turn)])
    job = first.model_copy(update={"turn": first.turn + 100})  # a fresh mark
    assert await runtime.job_store.apply(job, older, now=0.0) is JobOutcome.STALE
    assert await runtime.job_store.summary(user, APP, "s") == after_second


async def test_poison_messages_are_acknowledged_and_recorded(runtime: Runtime) -> None:
    user = new_user()
    await say(runtime, user, "s", "hello")
    [emotion_job] = bus_of(runtime).of_kind("emotion")
    assert await runtime.job_service.handle_push(b"{not json") is JobOutcome.POISON
    assert await runtime.job_service.handle_push(b'{"message": {}}') is JobOutcome.POISON
    no_text = emotion_job.model_copy(update={"payload": {}})
    assert await runtime.job_service.handle(no_text) is JobOutcome.POISON
    unknown = emotion_job.model_copy(update={"kind": "horoscope"})
    assert await runtime.job_service.handle(unknown) is JobOutcome.POISON
    failures = await runtime.job_store.failures()
    reasons = " | ".join(f["reason"] for f in failures[:4])
    assert "not JSON" in reasons and "no base64 'data'" in reasons
    assert "'message'" in reasons and "horoscope" in reasons
    # Marked: a redelivery of the poison job is not retried either.
    assert await runtime.job_store.job_status(no_text) == "poison"
    assert await runtime.job_service.handle(no_text) is JobOutcome.DUPLICATE


async def test_poison_and_abandoned_jobs_are_replayed_once_their_cause_is_fixed(
    runtime: Runtime,
) -> None:
    user = new_user()
    await say(runtime, user, "s", "I am tired of my commute")
    [emotion_job] = bus_of(runtime).of_kind("emotion")
    [summary_job] = bus_of(runtime).of_kind("summary")
    # A worker deployed without the emotion handler (version skew) marks the job poison.
    skewed = JobService(runtime.job_service.deps, handlers={})
    assert await skewed.handle(emotion_job) is JobOutcome.POISON
    # The summary job is republished by the sweep until it is abandoned.
    await runtime.job_store.note_swept([summary_job.job_id], max_sweeps=1)
    assert await runtime.job_store.job_status(summary_job) == "abandoned"

    stuck = await runtime.job_store.stuck_jobs(statuses=REPLAYABLE_STATUSES, limit=10)
    assert {job.job_id for job in stuck} >= {emotion_job.job_id, summary_job.job_id}
    only_poison = await runtime.job_store.stuck_jobs(statuses=["poison"], limit=10)
    assert summary_job.job_id not in {job.job_id for job in only_poison}
    # The kind and id filters apply before the limit: with limit 1 each kind still finds a job
    # of its kind (the store is shared with other tests, so not necessarily this user's), and
    # each id finds its job.
    for job in (emotion_job, summary_job):
        by_kind = await runtime.job_store.stuck_jobs(
            statuses=REPLAYABLE_STATUSES, limit=1, kinds=[job.kind]
        )
        by_id = await runtime.job_store.stuck_jobs(
            statuses=REPLAYABLE_STATUSES, limit=1, job_ids=[job.job_id]
        )
        assert [found.kind for found in by_kind] == [job.kind]
        assert [found.job_id for found in by_id] == [job.job_id]

    ids = [emotion_job.job_id, summary_job.job_id]
    assert sorted(await runtime.job_store.requeue(ids, statuses=REPLAYABLE_STATUSES)) == sorted(ids)
    assert await runtime.job_store.job_status(emotion_job) == "pending"
    # The fixed worker runs them as first deliveries: one effect each.
    assert await runtime.job_service.handle(emotion_job) is JobOutcome.DONE
    assert await runtime.job_service.handle(summary_job) is JobOutcome.DONE
    assert len(await runtime.job_store.emotions(user, app=APP, session_id="s", limit=5)) == 1
    assert await runtime.job_store.summary(user, APP, "s") is not None
    # Done jobs are not replayable: a second replay requeues nothing and changes nothing.
    assert await runtime.job_store.requeue(ids, statuses=REPLAYABLE_STATUSES) == []
    assert await runtime.job_service.handle(emotion_job) is JobOutcome.DUPLICATE
    assert len(await runtime.job_store.emotions(user, app=APP, session_id="s", limit=5)) == 1


def test_the_cli_replays_exactly_the_replayable_statuses() -> None:
    parser = build_parser()
    for status in REPLAYABLE_STATUSES:
        assert parser.parse_args(["jobs", "replay", "--status", status]).status == [status]
    with pytest.raises(SystemExit) as refused:
        parser.parse_args(["jobs", "replay", "--status", JobOutcome.DONE.value])
    assert refused.value.code == ExitCode.USAGE


class _FailingModel(BaseLlm):
    model: str = "failing"
    delay_s: float = 0.0

    async def generate_content_async(  # type: ignore[override]
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncIterator[LlmResponse]:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        raise genai_errors.ServerError(503, {"error": {"code": 503, "message": "overloaded"}})
        yield  # pragma: no cover


async def test_a_transient_failure_asks_for_a_retry_and_a_slow_one_stops_in_time(
    runtime: Runtime,
) -> None:
    user = new_user()
    await say(runtime, user, "s", "I am tired")
    [job] = bus_of(runtime).of_kind("emotion")
    deps = runtime.job_service.deps
    failing = JobService(
        JobDeps(deps.store, deps.sessions, deps.embedder, Extractor(_FailingModel()))
    )
    assert await failing.handle(job) is JobOutcome.RETRY
    slow = JobService(
        JobDeps(deps.store, deps.sessions, deps.embedder, Extractor(_FailingModel(delay_s=5))),
        deadline_s=0.2,
    )
    assert await slow.handle(job) is JobOutcome.RETRY
    assert await runtime.job_store.job_status(job) == "pending"  # nothing applied, not marked
    assert await runtime.job_service.handle(job) is JobOutcome.DONE  # the redelivery succeeds


async def test_the_sweep_republishes_pending_jobs_oldest_first_and_bounded(
    runtime: Runtime,
) -> None:
    user = new_user()
    bus = bus_of(runtime)
    bus.down = True  # publishing fails: the turns still succeed, the outbox keeps the jobs
    await say(runtime, user, "s", "I am a painter")
    await say(runtime, user, "s", "I have a garden")
    assert bus.published == []
    bus.down = False
    due = await runtime.job_store.due_jobs(created_before=1e12, limit=1000)
    mine = [job for job in due if job.user_id == user]
    assert len(mine) == 6
    assert [job.turn for job in mine] == sorted(job.turn for job in mine)

    report = await runtime.job_service.sweep(bus, limit=1000, grace_s=0, max_sweeps=5)
    assert report.republished >= 6
    republished = [job for job in bus.published if job.user_id == user]
    assert [job.job_id for job in republished] == [job.job_id for job in mine]
    for job in republished:
        assert await runtime.job_service.handle(job) is JobOutcome.DONE
    assert sorted(m.text for m in await runtime.store.list_memories(user)) == [
        "I am a painter",
        "I have a garden",
    ]
    remaining = await runtime.job_store.due_jobs(created_before=1e12, limit=1000)
    assert not [job for job in remaining if job.user_id == user]

    # A job that never succeeds is abandoned after max_sweeps republishes.
    await say(runtime, user, "s2", "hello there")
    stuck = [job for job in bus.published if job.session_id == "s2"]
    for _ in range(2):
        await runtime.job_service.sweep(bus, limit=1000, grace_s=0, max_sweeps=2)
    due = await runtime.job_store.due_jobs(created_before=1e12, limit=1000)
    assert not [job for job in due if job.session_id == "s2" and job.user_id == user]
    assert await runtime.job_store.job_status(stuck[0]) == "abandoned"


async def test_memory_search_ranks_by_embedding_similarity(runtime: Runtime) -> None:
    user = new_user()
    embedder = HashedEmbedder()
    texts = [
        "My sister lives in Berlin",
        "I have a dog named Pepper",
        "I am learning to play the piano",
        "My job is teaching chemistry",
        "我有一只猫",
    ]
    vectors = await embedder.embed(texts, task="document")
    from datetime import UTC, datetime

    records = [
        MemoryRecord(
            id=f"m{i}",
            user_id=user,
            app=APP if i % 2 else "other",
            kind="fact",
            text=text,
            created_at=datetime.now(UTC),
            embedding=vector,
        )
        for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
    ]
    await runtime.store.add_memories(records)
    [query] = await embedder.embed(["does my dog Pepper like walks"], task="query")
    hits = await runtime.job_store.search_memories(user, query, app=None, limit=3)
    expected = sorted(records, key=lambda r: -cosine(query, r.embedding or []))[:3]
    assert [h.id for h in hits] == [r.id for r in expected]
    assert hits[0].text == "I have a dog named Pepper"
    scoped = await runtime.job_store.search_memories(user, query, app="other", limit=5)
    assert {h.app for h in scoped} == {"other"} and len(scoped) == 3
    # Through ADK's memory-service contract (what load_memory / preload_memory call).
    found = await runtime.chat.memory.search_memory(
        app_name=APP, user_id=user, query="piano lessons"
    )
    assert found.memories[0].content.parts[0].text == "I am learning to play the piano"


async def test_the_person_a_turn_was_about_is_linked_to_its_snapshot(runtime: Runtime) -> None:
    user = new_user()
    await say(runtime, user, "s", "I am angry at my brother")
    [job] = bus_of(runtime).of_kind("emotion")
    about = job.model_copy(update={"payload": job.payload | {"options": {"person_id": "p-7"}}})
    assert await runtime.job_service.handle(about) is JobOutcome.DONE
    [snapshot] = await runtime.job_store.emotions(user, app=APP, session_id="s", limit=5)
    assert snapshot["person_id"] == "p-7" and snapshot["user_mood"] == "angry"


async def test_deleting_the_user_removes_what_jobs_made_and_late_jobs_do_nothing(
    runtime: Runtime,
) -> None:
    user = new_user()
    await say(runtime, user, "s", "I am a runner and I feel calm")
    jobs = bus_of(runtime).published
    for job in jobs[:2]:
        await runtime.job_service.handle(job)
    await runtime.store.delete_user(user)
    for job in jobs[2:]:  # delivered after the erasure
        assert await runtime.job_service.handle(job) in (JobOutcome.GONE, JobOutcome.STALE)
    for job in jobs[:2]:  # redelivered after the erasure: no resurrection
        assert await runtime.job_service.handle(job) is JobOutcome.GONE
    assert await runtime.store.list_memories(user) == []
    assert await runtime.job_store.emotions(user, app=None, session_id=None, limit=5) == []
    assert await runtime.job_store.summary(user, APP, "s") is None
    assert (
        json.dumps(
            await runtime.job_store.due_jobs(created_before=1e12, limit=1000), default=str
        ).count(user)
        == 0
    )


async def test_a_sweep_meeting_a_job_locked_by_its_handler_still_answers(
    firestore_emulator: str, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    # A handler finishing a job holds its document in a transaction; the sweep's count of that
    # job's republish then aborts ("Transaction lock timeout"). The job is being worked on, not
    # stuck: the sweep skips its count and still reports what it republished.
    async with job_runtime("firestore", tmp_path) as runtime:
        user = new_user()
        bus = bus_of(runtime)
        bus.down = True
        await say(runtime, user, "s", "I am a painter")
        bus.down = False
        mine = [
            job
            for job in await runtime.job_store.due_jobs(created_before=1e12, limit=1000)
            if job.user_id == user
        ]
        assert mine
        holder = firestore.AsyncClient(project=TEST_PROJECT)
        transaction = holder.transaction()
        await transaction._begin()
        locked = holder.collection("jobs").document(mine[0].job_id)
        await locked.get(transaction=transaction)  # the lock, as a handler's transaction takes
        try:
            report = await runtime.job_service.sweep(bus, limit=1000, grace_s=0, max_sweeps=5)
        finally:
            await transaction._rollback()
        assert report.republished >= len(mine)
        assert {job.job_id for job in mine} <= {job.job_id for job in bus.published}
