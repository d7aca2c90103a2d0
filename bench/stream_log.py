"""What persisting a turn's stream parts (resumable streams) costs, on SQLite and the Firestore
emulator, as ratios against a baseline measured in the same run.

    .venv/bin/python -m bench.stream_log --turns 10 --parts 300 --pace-ms 5

A "turn" here is a reply of `--parts` text-delta parts (plus start and finish) produced at a
model-like pace (`--pace-ms` between parts), recorded by the same `StreamRecorder` the chat
service tees into each turn. Reported per backend:

- relay cost: time `record()` adds per part on the turn's path (encoding and buffering; the
  writes run in the recorder's own task), against the baseline of encoding the part's SSE frame,
  which every turn pays anyway (`sse_frame`);
- writes per turn (log writes, each one batch document or row; the head rides on the first and
  the last) against the parts per turn;
- lag: from a part being produced to a resumer polling the log (another client on the same store,
  `StreamResumer` with the default poll interval) receiving it; p50 / p95 over every part.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore

from confidant.ports import StreamLog
from confidant.sessions.records import SessionKey
from confidant.sessions.sqlite_store import SqliteSessionStore
from confidant.streaming.firestore_log import FirestoreStreamLog
from confidant.streaming.resume import StreamResumer
from confidant.streaming.sqlite_log import SqliteStreamLog
from confidant.streaming.stream_log import StreamLogPolicy, StreamRecorder
from confidant.streaming.ui_stream import sse_frame


class CountingLog:
    """Counts the writes of the log it wraps (measurement only)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.writes = 0

    async def save(self, *args: Any, **kwargs: Any) -> None:
        self.writes += 1
        await self.inner.save(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def one_turn(
    log: CountingLog, store: Any, parts: int, pace_s: float, policy: StreamLogPolicy
) -> dict[str, Any]:
    key = SessionKey("bench", "onemind", uuid.uuid4().hex)
    await store.create_session(key, state={}, app_delta={}, user_delta={}, now=time.time())
    produced: dict[int, float] = {}
    stream = [{"type": "start", "messageId": "msg-bench"}] + [
        {"type": "text-delta", "id": "t", "delta": f"word{i} "} for i in range(parts)
    ]
    stream.append({"type": "finish"})
    recorder = StreamRecorder(log, key, policy, now=time.time())
    record_s = frame_s = 0.0
    received: list[float] = []

    async def resume() -> None:
        resumer = StreamResumer(log, store, policy)  # type: ignore[arg-type]
        while (parts_iter := await resumer.open(key)) is None:
            await asyncio.sleep(policy.poll_s)
        index = 0
        async for _ in parts_iter:
            received.append(time.perf_counter() - produced[index])
            index += 1

    reader = asyncio.create_task(resume())
    for index, part in enumerate(stream):
        produced[index] = time.perf_counter()
        started = time.perf_counter()
        sse_frame(part)
        frame_s += time.perf_counter() - started
        started = time.perf_counter()
        recorder.record(part)
        record_s += time.perf_counter() - started
        await asyncio.sleep(pace_s)
    recorder.end()
    await recorder.task
    await asyncio.wait_for(reader, 30)
    return {"record_s": record_s, "frame_s": frame_s, "parts": len(stream), "lags": received}


async def run_backend(
    name: str, make: Callable[[], Awaitable[tuple[StreamLog, Any]]], args: argparse.Namespace
) -> dict[str, Any]:
    inner, store = await make()
    log = CountingLog(inner)
    policy = StreamLogPolicy()
    await one_turn(log, store, 20, 0, policy)  # warm-up
    log.writes = 0
    results = [
        await one_turn(log, store, args.parts, args.pace_ms / 1000, policy)
        for _ in range(args.turns)
    ]
    parts = sum(r["parts"] for r in results)
    lags = sorted(lag for r in results for lag in r["lags"])
    row = {
        "backend": name,
        "record_us_per_part": 1e6 * sum(r["record_s"] for r in results) / parts,
        "frame_us_per_part": 1e6 * sum(r["frame_s"] for r in results) / parts,
        "writes_per_turn": log.writes / args.turns,
        "parts_per_turn": parts / args.turns,
        "lag_p50_ms": 1000 * statistics.median(lags),
        "lag_p95_ms": 1000 * lags[int(0.95 * (len(lags) - 1))],
    }
    await store.close()
    return row


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--parts", type=int, default=300)
    parser.add_argument("--pace-ms", type=float, default=5.0)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="confidant-bench-")

    async def sqlite() -> tuple[StreamLog, Any]:
        store = SqliteSessionStore(os.path.join(tmp, "bench.db"))
        return SqliteStreamLog(store), store

    rows = [await run_backend("sqlite", sqlite, args)]
    from tests.support.emulators import start_firestore

    emulator = start_firestore()
    try:
        os.environ["FIRESTORE_EMULATOR_HOST"] = emulator.host

        async def on_firestore() -> tuple[StreamLog, Any]:
            from confidant.sessions.firestore_store import FirestoreSessionStore

            client = firestore.AsyncClient(
                project="confidant-bench", credentials=AnonymousCredentials()
            )
            return FirestoreStreamLog(client), FirestoreSessionStore(client)

        rows.append(await run_backend("firestore-emulator", on_firestore, args))
    finally:
        emulator.stop()
    command = "python -m bench.stream_log " + " ".join(sys.argv[1:])
    print(f"`{command}` ({args.turns} turns of {args.parts} parts, one every {args.pace_ms} ms)")
    print()
    print(
        "| backend | record() µs/part | SSE frame µs/part (baseline) | ratio | writes/turn "
        "| parts/turn | resume lag p50 / p95 ms |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['backend']} | {r['record_us_per_part']:.1f} | {r['frame_us_per_part']:.1f} "
            f"| {r['record_us_per_part'] / r['frame_us_per_part']:.2f} "
            f"| {r['writes_per_turn']:.1f} | {r['parts_per_turn']:.0f} "
            f"| {r['lag_p50_ms']:.0f} / {r['lag_p95_ms']:.0f} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
