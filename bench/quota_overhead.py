"""Per-turn cost of quota accounting: full chat turns with the quota gate vs without it.

    .venv/bin/python -m bench.quota_overhead --turns 40 [--firestore]

Every variant runs full chat turns in-process (offline model with no pacing, the real
ChatService and ADK Runner), in shuffled rounds so drift hits all alike, on the embedded SQLite
store, or with `--firestore` on a local Firestore emulator (started here; needs gcloud):

- baseline:  no quota gate (the platform before issue 14)
- quota:     the gate on: a turn admitted before its context loads (one ledger write; the tier
             cached per instance), its tokens charged beside the commit
- cold-tier: as quota, with the tier cache emptied before every turn (one profile read more)

Reported as median milliseconds per turn and as ratios to the baseline of the same run, and
the median of one admission alone (`QuotaGate.admit`, tier cached), timed in the same rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from confidant.bootstrap import Runtime, build_runtime
from confidant.chat.requests import ChatRequest
from confidant.settings import Settings

VARIANTS = ("baseline", "quota", "cold-tier")


def _runtime(variant: str, directory: Path, firestore: bool) -> Runtime:
    backend = {"store": "firestore", "jobs": "inprocess"} if firestore else {}
    settings = Settings(
        sqlite_path=str(directory / f"{variant}.db"),
        model="offline",
        project_id="confidant-bench",
        auth="firebase" if firestore else "header",
        firebase_project_id="confidant-bench",
        **backend,
    )
    runtime = build_runtime(settings)
    if variant == "baseline":
        runtime.chat.quota = None
    return runtime


async def _turn(runtime: Runtime, variant: str) -> float:
    request = ChatRequest(
        app="onemind",
        session_id=uuid.uuid4().hex,
        message="I keep putting off my thesis",
        locale="en",
    )
    if variant == "cold-tier" and runtime.chat.quota is not None:
        runtime.chat.quota._tier_cache.clear()
    started = time.perf_counter()
    prepared = await runtime.chat.prepare(f"bench-{variant}", request)
    async for _ in prepared.stream():
        pass
    assert prepared.result.error is None, prepared.result.error
    return time.perf_counter() - started


@contextlib.contextmanager
def _backend(firestore: bool) -> Iterator[None]:
    if not firestore:
        yield
        return
    from tests.support.emulators import running, start_firestore

    with running(start_firestore) as emulator:
        os.environ["FIRESTORE_EMULATOR_HOST"] = emulator.host
        yield


async def main(turns: int, firestore: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runtimes = {v: _runtime(v, Path(tmp), firestore) for v in VARIANTS}
        for variant, runtime in runtimes.items():  # warm-up: imports, connections, caches
            for _ in range(3):
                await _turn(runtime, variant)
        times: dict[str, list[float]] = {v: [] for v in VARIANTS}
        admissions: list[float] = []
        gate = runtimes["quota"].chat.quota
        assert gate is not None
        for _ in range(turns):
            order = list(VARIANTS)
            random.shuffle(order)
            for variant in order:
                times[variant].append(await _turn(runtimes[variant], variant))
            started = time.perf_counter()
            await gate.admit("bench-admission", "hello")
            admissions.append(time.perf_counter() - started)
        for runtime in runtimes.values():
            await runtime.close()
    base = statistics.median(times["baseline"])
    store = "Firestore emulator" if firestore else "embedded SQLite"
    print(f"| variant ({store}, {turns} turns each) | median ms/turn | ratio to baseline |")
    print("|---|---|---|")
    for variant in VARIANTS:
        median = statistics.median(times[variant])
        print(f"| {variant} | {median * 1000:.2f} | {median / base:.3f} |")
    print(f"| one admission alone | {statistics.median(admissions) * 1000:.2f} | |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--firestore", action="store_true")
    arguments = parser.parse_args()
    with _backend(arguments.firestore):
        asyncio.run(main(arguments.turns, arguments.firestore))
