"""The CLI's operator commands, run as a person would: the installed `confidant` program on the
embedded store (ingest, migrate, jobs sweep, jobs failures)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from confidant.cli.exits import ExitCode
from tests.e2e.conftest import REPO, base_env

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


def test_migrate_dry_run_on_an_empty_store(tmp_path) -> None:
    migrated = _run(tmp_path, "migrate", "--dry-run")
    assert migrated.returncode == ExitCode.OK, migrated.stderr


def test_unknown_operator_arguments_exit_with_the_usage_code(tmp_path) -> None:
    assert _run(tmp_path, "jobs", "explode").returncode == ExitCode.USAGE
