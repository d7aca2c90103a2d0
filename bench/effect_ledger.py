"""What exactly-once costs: a Notion write through the effect ledger vs the bare write.

    .venv/bin/python -m bench.effect_ledger --writes 200

Both paths create pages on the same local Notion-shaped server (tests/support/fake_notion.py,
loopback HTTP, no network latency, so the ratio is an upper bound of the ledger's share); the
ledger is the embedded SQLite one. Writes alternate between the two paths so drift hits both
alike. Reports median and p95 per write and the ratio ledger / bare.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from confidant.effects import perform_once
from confidant.effects.sqlite_ledger import SqliteEffectLedger
from confidant.tasks import TaskDraft
from confidant.tasks.notion import NotionTaskWriter
from tests.support.fake_notion import DATABASE_ID, TOKEN, FakeNotion

DRAFT = TaskDraft(title="Benchmark task", description="Measure the ledger.", priority="low")


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)]


async def run(writes: int) -> None:
    with FakeNotion() as server, tempfile.TemporaryDirectory() as tmp:
        writer = NotionTaskWriter(token=TOKEN, database_id=DATABASE_ID, base_url=server.base_url)
        ledger = SqliteEffectLedger(str(Path(tmp) / "ledger.db"))
        bare: list[float] = []
        guarded: list[float] = []

        async def through_ledger(key: str) -> None:
            async def create() -> dict:
                return (await writer.create_task(DRAFT, idempotency_key=key)).model_dump()

            async def find() -> dict | None:
                found = await writer.find_task(key)
                return None if found is None else found.model_dump()

            await perform_once(ledger, "bench", key, create, find, now=time.time)

        for _ in range(3):  # warm up both paths (the ledger's first use opens its database)
            await writer.create_task(DRAFT, idempotency_key=uuid.uuid4().hex)
            await through_ledger(uuid.uuid4().hex)
        for index in range(writes * 2):
            key = uuid.uuid4().hex
            start = time.perf_counter()
            if index % 2 == 0:
                await writer.create_task(DRAFT, idempotency_key=key)
                bare.append(time.perf_counter() - start)
            else:
                await through_ledger(key)
                guarded.append(time.perf_counter() - start)
        await writer.close()
        await ledger.close()
    ms = 1000
    print(f"writes per path: {writes}")
    print(
        f"bare write:   median {statistics.median(bare) * ms:.2f} ms, p95 {_p95(bare) * ms:.2f} ms"
    )
    print(
        f"with ledger:  median {statistics.median(guarded) * ms:.2f} ms, "
        f"p95 {_p95(guarded) * ms:.2f} ms"
    )
    print(f"ratio (median): {statistics.median(guarded) / statistics.median(bare):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=200)
    asyncio.run(run(parser.parse_args().writes))


if __name__ == "__main__":
    main()
