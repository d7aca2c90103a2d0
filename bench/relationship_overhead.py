"""Per-turn platform overhead of the relationship app against onemind, offline model, one run.

Every turn goes through the whole in-process stack — HTTP handler (ASGI), identity, options,
context sources (person, self-profile), lease, router, the ADK tree, streaming, commit — on the
embedded SQLite store, with the offline scripted model (no model latency), so what is timed is
platform. Cells (a fresh session per turn, timed in shuffled rounds so drift hits every cell):

- onemind: one model call (the baseline);
- relationship runner: router + orchestrator (transfer) + one specialist = 3 model calls;
- relationship pipeline: router + two streamed specialists = 3 model calls;
- relationship strategy endpoint: one specialist, no router = 1 model call.

It also reports the router call's input size (instruction + message + summary) against a
specialist's. Targets are reported, never asserted.

    .venv/bin/python -m bench.relationship_overhead --turns 40
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from confidant.bootstrap import Runtime, build_runtime
from confidant.http import api
from confidant.settings import Settings
from tests.support.recording_model import RecordingLlm

USER = {"X-User-Id": "bench-user"}
CELLS: dict[str, tuple[str, dict[str, str]]] = {
    "onemind (baseline)": ("/v1/chat", {"app": "onemind", "message": "I keep putting it off"}),
    "relationship runner": (
        "/v1/chat",
        {"app": "relationship", "message": "He went silent after dinner."},
    ),
    "relationship pipeline": (
        "/v1/chat",
        {"app": "relationship", "message": "Why did he go quiet, and what should I do?"},
    ),
    "relationship /advise": ("/v1/relationship/advise", {"message": "How do I bring it up?"}),
}


def _client(runtime: Runtime) -> httpx.AsyncClient:
    from starlette.applications import Starlette
    from starlette.routing import Route

    async def endpoint(request):  # type: ignore[no-untyped-def]
        return await api.handle(request, runtime)

    app = Starlette(routes=[Route("/{path:path}", endpoint=endpoint, methods=["GET", "POST"])])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench")


async def _turn(client: httpx.AsyncClient, path: str, body: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one turn (CPU of every thread of this process: on a shared
    machine it is the steadier measure of what the platform itself spends)."""
    started, cpu_started = time.perf_counter(), time.process_time()
    response = await client.post(path, json=body, headers=USER)
    elapsed = (time.perf_counter() - started, time.process_time() - cpu_started)
    if response.status_code != 200 or '"type":"finish"' not in response.text:
        raise RuntimeError(f"{path} failed: {response.status_code} {response.text[-300:]}")
    return elapsed


async def run(turns: int, warmup: int) -> str:
    model = RecordingLlm()
    with tempfile.TemporaryDirectory() as tmp:
        # One user sends every turn back to back: the per-user rate limit (300/min, burst 60)
        # and the free tier's daily turns would refuse a run of more than a few dozen rounds.
        settings = Settings(
            sqlite_path=str(Path(tmp) / "b.db"),
            rate_limit_user_per_min=0,
            rate_limit_ip_per_min=0,
            default_tier="unlimited",
        )
        runtime = build_runtime(settings, model=model)
        client = _client(runtime)
        try:
            for _ in range(warmup):
                for path, body in CELLS.values():
                    await _turn(client, path, body)
            model.calls.clear()
            timings: dict[str, list[tuple[float, float]]] = {name: [] for name in CELLS}
            calls_per_cell: dict[str, int] = {}
            for _ in range(turns):
                names = list(CELLS)
                random.shuffle(names)
                for name in names:
                    before = len(model.calls)
                    timings[name].append(await _turn(client, *CELLS[name]))
                    calls_per_cell[name] = len(model.calls) - before
        finally:
            await client.aclose()
            await runtime.close()
    base_wall, base_cpu = _medians(timings["onemind (baseline)"])
    lines = [
        f"Relationship vs onemind, offline model, SQLite store, {turns} turns per cell",
        "",
        "| cell | model calls | median wall ms | × onemind | median CPU ms | × onemind |",
        "|---|---|---|---|---|---|",
    ]
    for name, values in timings.items():
        wall, cpu = _medians(values)
        lines.append(
            f"| {name} | {calls_per_cell[name]} | {wall * 1000:.1f} | {wall / base_wall:.2f} |"
            f" {cpu * 1000:.1f} | {cpu / base_cpu:.2f} |"
        )
    router = _input_chars(model, "router")
    specialist = _input_chars(model, "analyzer") + _input_chars(model, "strategist")
    lines += [
        "",
        f"Router call input: median {statistics.median(router):.0f} characters "
        f"(a specialist call: {statistics.median(specialist):.0f}).",
    ]
    return "\n".join(lines)


def _medians(values: list[tuple[float, float]]) -> tuple[float, float]:
    return (
        statistics.median(wall for wall, _ in values),
        statistics.median(cpu for _, cpu in values),
    )


def _input_chars(model: RecordingLlm, role: str) -> list[int]:
    marker = f"RELATIONSHIP_AGENT: {role}\n"
    return [call.input_chars for call in model.calls if marker in call.instruction + "\n"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.relationship_overhead")
    parser.add_argument("--turns", type=int, default=30, help="timed turns per cell")
    parser.add_argument("--warmup", type=int, default=5, help="untimed rounds first")
    args = parser.parse_args(argv)
    print(asyncio.run(run(args.turns, args.warmup)))


if __name__ == "__main__":
    main()
