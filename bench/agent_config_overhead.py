"""Per-turn cost of the agent registry: turns with an app config applied vs without one.

    .venv/bin/python -m bench.agent_config_overhead --turns 40

Every variant runs full chat turns in-process (embedded SQLite store, offline model with no
pacing, the real ChatService and ADK Runner), in shuffled rounds so drift hits all alike:

- baseline:     the agent-config source removed (the platform before the registry)
- no-config:    the source on, the app never configured (a cached "none")
- cached:       a config stored (instruction, tool list, output limit) and read from the cache
- uncached:     the same config read from the store on every turn (TTL 0)

Reported as median milliseconds per turn and as ratios to the baseline of the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from confidant.agentconfig import AGENT_CONFIG, AgentConfig
from confidant.bootstrap import Runtime, build_runtime
from confidant.chat.requests import ChatRequest
from confidant.settings import Settings

CONFIG = AgentConfig.model_validate(
    {
        "agents": {
            "onemind_coach": {
                "instruction": {"text": "Keep replies short."},
                "enabled_tools": ["advance_stage", "retrieve_wisdom"],
                "max_output_tokens": 512,
            }
        }
    }
)
VARIANTS = ("baseline", "no-config", "cached", "uncached")


async def _runtime(variant: str, directory: Path) -> Runtime:
    settings = Settings(
        sqlite_path=str(directory / f"{variant}.db"),
        model="offline",
        agent_config_ttl_s=0.0 if variant == "uncached" else 60.0,
    )
    runtime = build_runtime(settings)
    if variant == "baseline":
        runtime.chat.context_sources = {
            name: source
            for name, source in runtime.chat.context_sources.items()
            if name != AGENT_CONFIG
        }
    if variant in ("cached", "uncached"):
        assert runtime.agent_configs is not None
        await runtime.agent_configs.update("onemind", CONFIG, author="bench")
    return runtime


async def _turn(runtime: Runtime) -> float:
    request = ChatRequest(
        app="onemind",
        session_id=uuid.uuid4().hex,
        message="I keep putting off my thesis",
        locale="en",
    )
    started = time.perf_counter()
    prepared = await runtime.chat.prepare("bench-user", request)
    async for _ in prepared.stream():
        pass
    assert prepared.result.error is None, prepared.result.error
    return time.perf_counter() - started


async def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runtimes = {v: await _runtime(v, Path(tmp)) for v in VARIANTS}
        for runtime in runtimes.values():  # warm-up: imports, first connection, caches
            await _turn(runtime)
        times: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for _ in range(turns):
            order = list(VARIANTS)
            random.shuffle(order)
            for variant in order:
                times[variant].append(await _turn(runtimes[variant]))
        for runtime in runtimes.values():
            await runtime.close()
    base = statistics.median(times["baseline"])
    print(f"| variant | median ms/turn | ratio to baseline |  ({turns} turns each)")
    print("|---|---|---|")
    for variant in VARIANTS:
        median = statistics.median(times[variant])
        print(f"| {variant} | {median * 1000:.2f} | {median / base:.3f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    asyncio.run(main(parser.parse_args().turns))
