"""Operator commands of the `confidant` CLI, run against the configured deployment's adapters
(the same settings the server reads): wisdom ingestion, legacy-profile migration, and the
post-turn jobs' outbox sweep and poison-delivery list.

Unlike `chat` and `sessions`, these do not go through the HTTP API: they are what an operator
runs with the service's credentials (locally, the embedded store).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any, TextIO

from confidant.cli.exits import ExitCode

FAILURES_SHOWN = 50
REPLAY_LIMIT = 500


def _replayable_status(status: str) -> str:
    # The jobs package is imported only when the option is given: it would add about 0.4 s to
    # every command's start (argparse's `choices` would need it to build the parser).
    from confidant.jobs.effects import REPLAYABLE_STATUSES

    if status not in REPLAYABLE_STATUSES:
        raise argparse.ArgumentTypeError(
            f"{status!r} is not replayable; choose from {', '.join(REPLAYABLE_STATUSES)}"
        )
    return status


def register(commands: Any) -> None:
    from confidant.profiles.migrate import parser as migrate_parser
    from confidant.wisdom.ingest import _parser as ingest_parser

    ingest = commands.add_parser(
        "ingest",
        parents=[ingest_parser()],
        add_help=False,
        help="chunk, embed and upsert the wisdom corpus (as confidant-ingest)",
    )
    ingest.set_defaults(run=run_ingest)
    migrate = commands.add_parser(
        "migrate",
        parents=[migrate_parser()],
        add_help=False,
        help="migrate legacy profiles (as confidant-migrate)",
    )
    migrate.set_defaults(run=run_migrate)

    jobs = commands.add_parser("jobs", help="post-turn jobs: outbox sweep, poison deliveries")
    actions = jobs.add_subparsers(dest="jobs_action", required=True)
    sweep = actions.add_parser(
        "sweep", help="republish the outbox's pending jobs, oldest first (what the scheduler runs)"
    )
    sweep.add_argument("--json", action="store_true", help="print the report as JSON")
    sweep.set_defaults(run=run_jobs_sweep)
    failures = actions.add_parser("failures", help="the recorded poison deliveries, newest first")
    failures.add_argument("--limit", type=int, default=FAILURES_SHOWN)
    failures.add_argument("--json", action="store_true", help="one JSON object per line")
    failures.set_defaults(run=run_jobs_failures)
    replay = actions.add_parser(
        "replay",
        help="send poison or abandoned jobs again, once their cause is fixed (oldest first)",
    )
    replay.add_argument("--job-id", action="append", default=[], help="only this job (repeatable)")
    replay.add_argument("--kind", action="append", default=[], help="only jobs of this kind")
    replay.add_argument(
        "--status",
        action="append",
        type=_replayable_status,
        help="only jobs in this outbox status: poison or abandoned (default: both)",
    )
    replay.add_argument("--limit", type=int, default=REPLAY_LIMIT)
    replay.add_argument("--dry-run", action="store_true", help="list what would be replayed")
    replay.add_argument("--json", action="store_true", help="print the report as JSON")
    replay.set_defaults(run=run_jobs_replay)


def run_ingest(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from confidant.settings import ConfigurationError
    from confidant.wisdom.ingest import run

    try:
        asyncio.run(run(args, out=out))
    except (ConfigurationError, ValueError) as exc:
        err.write(f"error: {exc}\n")
        return ExitCode.USAGE
    return ExitCode.OK


def run_migrate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from confidant.profiles.migrate import run_migration

    report = asyncio.run(run_migration(args))
    return ExitCode.OK if not report.conflicts else ExitCode.PARTIAL


async def _with_runtime(work: Any) -> Any:
    from confidant.bootstrap import build_runtime
    from confidant.settings import Settings

    runtime = build_runtime(Settings())
    try:
        return await work(runtime)
    finally:
        await runtime.close()


def run_jobs_sweep(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    async def sweep(runtime: Any) -> dict[str, int]:
        report = await runtime.sweep()
        drain = getattr(runtime.jobs, "drain", None)
        if drain is not None:  # the embedded bus runs the jobs here, in this process
            await drain()
        return report

    report = asyncio.run(_with_runtime(sweep))
    if args.json:
        out.write(json.dumps(report) + "\n")
    else:
        out.write(f"republished {report['republished']}, failed {report['failed']}\n")
    return ExitCode.OK if not report["failed"] else ExitCode.PARTIAL


def run_jobs_failures(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    async def failures(runtime: Any) -> list[dict[str, Any]]:
        return await runtime.job_store.failures(limit=args.limit)

    found = asyncio.run(_with_runtime(failures))
    for failure in found:
        if args.json:
            out.write(json.dumps(failure, default=str, ensure_ascii=False) + "\n")
        else:
            out.write(f"{failure.get('received_at')}  {failure.get('reason')}\n")
    if not found and not args.json:
        err.write("no poison deliveries recorded\n")
    return ExitCode.OK


def run_jobs_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Requeue the chosen stuck jobs (back to pending, sweep count reset) and publish them.

    A replayed job runs like a first delivery: its handler runs only if the job has no final
    mark, and its effect lands with the mark in one transaction, so replaying twice, or a
    replay racing a late redelivery, still has one effect.
    """
    from confidant.jobs.effects import REPLAYABLE_STATUSES

    statuses = tuple(args.status or REPLAYABLE_STATUSES)

    async def replay(runtime: Any) -> dict[str, Any]:
        chosen = await runtime.job_store.stuck_jobs(
            statuses=statuses, limit=args.limit, kinds=args.kind, job_ids=args.job_id
        )
        report: dict[str, Any] = {
            "jobs": [{"job_id": job.job_id, "kind": job.kind} for job in chosen],
            "requeued": 0,
            "published": 0,
            "failed": 0,
        }
        if args.dry_run or not chosen:
            return report
        requeued = set(
            await runtime.job_store.requeue([j.job_id for j in chosen], statuses=statuses)
        )
        again = [job for job in chosen if job.job_id in requeued]
        report["requeued"] = len(again)
        try:
            await runtime.jobs.publish(again)
        except Exception as exc:  # still pending: the sweep republishes them later
            report["failed"] = len(again)
            report["error"] = str(exc)
            return report
        report["published"] = len(again)
        drain = getattr(runtime.jobs, "drain", None)
        if drain is not None:  # the embedded bus runs the jobs here, in this process
            await drain()
        report["outcomes"] = {job.job_id: await runtime.job_store.job_status(job) for job in again}
        return report

    report = asyncio.run(_with_runtime(replay))
    missing = sorted(set(args.job_id) - {job["job_id"] for job in report["jobs"]})
    if args.json:
        out.write(json.dumps(report | {"not_found": missing}) + "\n")
    else:
        verb = "would replay" if args.dry_run else "replayed"
        for job in report["jobs"]:
            outcome = report.get("outcomes", {}).get(job["job_id"], "")
            out.write(f"{job['job_id']}  {job['kind']}  {outcome}\n".rstrip() + "\n")
        out.write(
            f"{verb} {report['published'] if not args.dry_run else len(report['jobs'])}"
            f" job(s), failed {report['failed']}\n"
        )
        for job_id in missing:
            err.write(f"not replayable (unknown, or not poison/abandoned): {job_id}\n")
    if report["failed"] or missing:
        return ExitCode.PARTIAL
    return ExitCode.OK
