"""The embedded job bus."""

from __future__ import annotations

import asyncio
import logging

import pytest

from confidant.jobs import InProcessJobBus
from confidant.ports import JobBus, JobRecord
from tests.support.jobs import make_job


def fast_bus(**kwargs: object) -> InProcessJobBus:
    return InProcessJobBus(retry_delays=(0.0,), **kwargs)  # type: ignore[arg-type]


async def test_handler_runs_for_each_published_job() -> None:
    bus = fast_bus()
    seen: list[JobRecord] = []

    async def handler(job: JobRecord) -> None:
        await asyncio.sleep(0)
        seen.append(job)

    bus.register("emotion", handler)
    jobs = [make_job("emotion", turn=1), make_job("emotion", turn=2)]
    await bus.publish(jobs)
    await bus.drain()
    assert sorted(job.turn for job in seen) == [1, 2]
    assert {job.job_id for job in seen} == {job.job_id for job in jobs}
    await bus.close()


async def test_publish_does_not_wait_for_handlers() -> None:
    bus = fast_bus()
    release = asyncio.Event()

    async def slow(job: JobRecord) -> None:
        await release.wait()

    bus.register("summary", slow)
    await asyncio.wait_for(bus.publish([make_job("summary")]), timeout=1)
    release.set()
    await bus.drain()
    await bus.close()


async def test_jobs_are_routed_by_kind() -> None:
    bus = fast_bus()
    seen: dict[str, list[str]] = {"emotion": [], "summary": []}

    async def emotion(job: JobRecord) -> None:
        seen["emotion"].append(job.job_id)

    async def summary(job: JobRecord) -> None:
        seen["summary"].append(job.job_id)

    bus.register("emotion", emotion)
    bus.register("summary", summary)
    e, s = make_job("emotion"), make_job("summary")
    await bus.publish([e, s])
    await bus.drain()
    assert seen == {"emotion": [e.job_id], "summary": [s.job_id]}
    await bus.close()


async def test_duplicate_registration_is_refused() -> None:
    bus = fast_bus()

    async def handler(job: JobRecord) -> None:
        pass

    bus.register("emotion", handler)
    with pytest.raises(ValueError, match="already registered"):
        bus.register("emotion", handler)


async def test_unknown_kind_is_logged_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    bus = fast_bus()
    seen: list[str] = []

    async def handler(job: JobRecord) -> None:
        seen.append(job.job_id)

    bus.register("emotion", handler)
    unknown, known = make_job("memory"), make_job("emotion")
    with caplog.at_level(logging.WARNING, logger="confidant.jobs.inprocess"):
        await bus.publish([unknown, known])
        await bus.drain()
    assert seen == [known.job_id]  # the worker went on after the unknown job
    assert any(
        unknown.job_id in r.getMessage() and "no handler" in r.getMessage() for r in caplog.records
    )
    assert list(bus.failed) == []
    await bus.close()


async def test_failing_handler_is_retried_then_logged(caplog: pytest.LogCaptureFixture) -> None:
    bus = fast_bus(max_attempts=3)
    attempts: list[int] = []

    async def broken(job: JobRecord) -> None:
        attempts.append(job.turn)
        raise RuntimeError("model unavailable")

    bus.register("emotion", broken)
    job = make_job("emotion", turn=7)
    with caplog.at_level(logging.WARNING, logger="confidant.jobs.inprocess"):
        await bus.publish([job])
        await bus.drain()
    assert attempts == [7, 7, 7]
    assert list(bus.failed) == [job]
    final = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(final) == 1 and "failed after 3 attempts" in final[0].getMessage()
    assert final[0].exc_info is not None


async def test_handler_that_recovers_is_not_failed() -> None:
    bus = fast_bus(max_attempts=3)
    calls = 0

    async def flaky(job: JobRecord) -> None:
        nonlocal calls
        calls += 1
        if calls < 2:
            raise ConnectionError("blip")

    bus.register("summary", flaky)
    await bus.publish([make_job("summary")])
    await bus.drain()
    assert calls == 2
    assert list(bus.failed) == []
    await bus.close()


async def test_worker_survives_failures_and_keeps_serving() -> None:
    bus = fast_bus(max_attempts=1, workers=1)
    done: list[int] = []

    async def handler(job: JobRecord) -> None:
        if job.turn % 2:
            raise ValueError("odd turn")
        done.append(job.turn)

    bus.register("emotion", handler)
    await bus.publish([make_job("emotion", turn=t) for t in range(1, 7)])
    await bus.drain()
    assert done == [2, 4, 6]
    assert [job.turn for job in bus.failed] == [1, 3, 5]
    await bus.close()


async def test_hung_handler_times_out() -> None:
    bus = fast_bus(max_attempts=2, handler_timeout_s=0.05)

    async def hung(job: JobRecord) -> None:
        await asyncio.sleep(60)

    bus.register("emotion", hung)
    job = make_job("emotion")
    await bus.publish([job])
    await asyncio.wait_for(bus.drain(), timeout=5)
    assert list(bus.failed) == [job]
    await bus.close()


async def test_drain_waits_for_jobs_published_by_handlers() -> None:
    bus = fast_bus()
    seen: list[str] = []

    async def chain(job: JobRecord) -> None:
        seen.append(job.kind)
        if job.kind == "emotion":
            await bus.publish([make_job("summary")])

    bus.register("emotion", chain)
    bus.register("summary", chain)
    await bus.publish([make_job("emotion")])
    await bus.drain()
    assert seen == ["emotion", "summary"]
    await bus.close()


async def test_close_finishes_queued_jobs_then_refuses_new_ones() -> None:
    bus = fast_bus(workers=1)
    seen: list[int] = []

    async def handler(job: JobRecord) -> None:
        await asyncio.sleep(0.01)
        seen.append(job.turn)

    bus.register("emotion", handler)
    await bus.publish([make_job("emotion", turn=t) for t in range(3)])
    await bus.close()
    assert seen == [0, 1, 2]
    with pytest.raises(RuntimeError, match="closed"):
        await bus.publish([make_job("emotion")])


async def test_drain_and_close_without_publish() -> None:
    bus = fast_bus()
    await bus.drain()
    await bus.close()


def test_is_a_job_bus() -> None:
    bus: JobBus = InProcessJobBus()  # static check of the port; constructing needs no loop
    assert bus is not None
