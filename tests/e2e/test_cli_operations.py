"""The CLI's operator commands, run as a person would: the installed `confidant` program on the
embedded store (ingest, migrate, jobs sweep, failures and replay)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from confidant.cli.exits import ExitCode
from confidant.jobs.effects import JobOutcome
from confidant.jobs.service import JobService
from tests.e2e.conftest import REPO, base_env
from tests.support.job_runtime import bus_of, job_runtime, say

CONFIDANT = str(REPO / ".venv/bin/confidant")


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = base_env(CONFIDANT_SQLITE_PATH=str(tmp_path / "ops.db"), CONFIDANT_MODEL="offline")
    return subprocess.run(
        [CONFIDANT, *args], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
    )


def test_ingest_plans_then_writes_the_local_index_and_a_rerun_changes_nothing(tmp_path) -> None:
    target = tmp_path / "wisdom.jsonl"
    planned = _run(tmp_path, "ingest", "--local-path", str(target), "--dry-run", "--no-progress")
    assert planned.returncode == ExitCode.OK, planned.stderr
    assert not target.exists()  # a dry run writes nothing
    done = _run(tmp_path, "ingest", "--local-path", str(target), "--no-progress")
    assert done.returncode == ExitCode.OK, done.stderr
    written = target.read_text().splitlines()
    assert len(written) >= 60  # every chunk of the starter corpus
    again = _run(tmp_path, "ingest", "--local-path", str(target), "--no-progress")
    assert again.returncode == ExitCode.OK
    assert target.read_text().splitlines() == written


def test_jobs_sweep_and_failures_report_on_the_embedded_outbox(tmp_path) -> None:
    swept = _run(tmp_path, "jobs", "sweep", "--json")
    assert swept.returncode == ExitCode.OK, swept.stderr
    assert json.loads(swept.stdout) == {"republished": 0, "failed": 0}
    failures = _run(tmp_path, "jobs", "failures", "--json")
    assert failures.returncode == ExitCode.OK and failures.stdout == ""


def test_jobs_replay_runs_a_poison_job_once_after_its_handler_is_deployed(tmp_path) -> None:
    [job_id] = asyncio.run(_poison_emotion_job(tmp_path))
    planned = _run(tmp_path, "jobs", "replay", "--dry-run", "--json")
    assert planned.returncode == ExitCode.OK, planned.stderr
    plan = json.loads(planned.stdout)
    assert [job["job_id"] for job in plan["jobs"]] == [job_id] and plan["published"] == 0

    replayed = _run(tmp_path, "jobs", "replay", "--json")
    assert replayed.returncode == ExitCode.OK, replayed.stderr
    report = json.loads(replayed.stdout)
    assert report["published"] == 1 and report["outcomes"] == {job_id: "done"}
    assert asyncio.run(_emotion_count(tmp_path)) == 1  # the snapshot the user can now see

    again = _run(tmp_path, "jobs", "replay", "--job-id", job_id)
    assert again.returncode == ExitCode.PARTIAL  # asked for a job that is no longer stuck
    assert "not replayable" in again.stderr
    assert asyncio.run(_emotion_count(tmp_path)) == 1


def test_jobs_replay_filters_before_it_limits(tmp_path) -> None:
    # `--limit` counts the jobs chosen, not the stuck jobs looked at before the filter: each
    # kind is found with --limit 1 whichever of them is older.
    jobs = asyncio.run(_poison_jobs(tmp_path, ("emotion", "summary")))
    for kind, job_id in jobs.items():
        planned = _run(
            tmp_path, "jobs", "replay", "--dry-run", "--json", "--kind", kind, "--limit", "1"
        )
        assert planned.returncode == ExitCode.OK, planned.stderr
        assert json.loads(planned.stdout)["jobs"] == [{"job_id": job_id, "kind": kind}]
        named = _run(
            tmp_path, "jobs", "replay", "--dry-run", "--json", "--job-id", job_id, "--limit", "1"
        )
        assert named.returncode == ExitCode.OK, named.stderr
        assert [job["job_id"] for job in json.loads(named.stdout)["jobs"]] == [job_id]


async def _poison_jobs(tmp_path: Path, kinds: tuple[str, ...]) -> dict[str, str]:
    """A real turn whose jobs of `kinds` meet a worker deployed without their handlers."""
    async with job_runtime("sqlite", tmp_path, sqlite_path=str(tmp_path / "ops.db")) as runtime:
        await say(runtime, "ops-user", "s", "I feel anxious about the exam")
        poisoned = {}
        for kind in kinds:
            [job] = bus_of(runtime).of_kind(kind)
            outcome = await JobService(runtime.job_service.deps, handlers={}).handle(job)
            assert outcome is JobOutcome.POISON
            poisoned[kind] = job.job_id
        return poisoned


async def _poison_emotion_job(tmp_path: Path) -> list[str]:
    """A real turn whose emotion job meets a worker deployed without that handler."""
    async with job_runtime("sqlite", tmp_path, sqlite_path=str(tmp_path / "ops.db")) as runtime:
        await say(runtime, "ops-user", "s", "I feel anxious about the exam")
        [job] = bus_of(runtime).of_kind("emotion")
        outcome = await JobService(runtime.job_service.deps, handlers={}).handle(job)
        assert outcome is JobOutcome.POISON
        return [job.job_id]


async def _emotion_count(tmp_path: Path) -> int:
    async with job_runtime("sqlite", tmp_path, sqlite_path=str(tmp_path / "ops.db")) as runtime:
        found = await runtime.job_store.emotions("ops-user", app="onemind", session_id="s", limit=5)
        return len(found)


def test_migrate_dry_run_on_an_empty_store(tmp_path) -> None:
    migrated = _run(tmp_path, "migrate", "--dry-run")
    assert migrated.returncode == ExitCode.OK, migrated.stderr


def test_unknown_operator_arguments_exit_with_the_usage_code(tmp_path) -> None:
    assert _run(tmp_path, "jobs", "explode").returncode == ExitCode.USAGE
