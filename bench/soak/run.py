"""Load and soak of the chat server against ADK's api_server, on one Firestore emulator.

    .venv/bin/python -m bench.soak --duration 300 --out docs/performance.md

One run, on this machine (offline scripted model in both servers, so model latency is zero and
what is measured is the servers, their session storage and the emulator):

1. a Firestore emulator; our chat target (functions-framework `--target=chat`, Firestore store,
   Firebase ID tokens minted by a local issuer, in-process post-turn jobs) and ADK's own API
   server (`get_fast_api_app` under uvicorn, `bench/soak/adk_server.py`: the onemind agent tree
   with the same offline model, ADK's built-in `FirestoreSessionService` on the same emulator);
2. **soak**: locust headless for `--duration` seconds against ours with the mixed scenario
   (onemind, relationship, lifecoach, taskflow with its pauses resumed; short and long
   sessions), sampling our server's resident memory every second;
3. **comparison**: the same onemind conversations for `--compare-duration` seconds against ours,
   then against ADK's server, in alternating halves so that the machine's other load falls on
   both alike.

Printed, and written to `bench/results/soak.json` and `bench/results/soak.md`: requests, errors,
throughput and p50/p95/p99 per request kind (locust's percentiles, which it rounds to two
significant digits), the ratios ours / ADK, RSS after warm-up and at the end (growth target
< 10%), and the machine's load average during each phase (other processes share the cores).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench.sections import rewrite_section
from tests.support.emulators import free_port, start_firestore
from tests.support.push import functions_command
from tests.support.servers import Server, start_server, stop_server
from tests.support.tokens import TokenIssuer

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
LOCUSTFILE = Path(__file__).with_name("locustfile.py")
PROJECT = "confidant-soak"
GROWTH_TARGET = 0.10
CHAT_ROWS = ("chat onemind (short session)", "chat onemind (long session)")


class RssSampler(threading.Thread):
    """Resident memory of a server, once a second, with the time since the sampler started: the
    largest process of its tree (functions-framework serves from a worker child process)."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.samples: list[tuple[float, int]] = []
        self._halt = threading.Event()

    def run(self) -> None:
        started = time.monotonic()
        while not self._halt.is_set():
            with contextlib.suppress(psutil.Error):
                tree = [self.process, *self.process.children(recursive=True)]
                rss = max(p.memory_info().rss for p in tree)
                self.samples.append((time.monotonic() - started, rss))
            self._halt.wait(1.0)

    def stop(self) -> list[tuple[float, int]]:
        self._halt.set()
        self.join()
        return self.samples


def memory_report(samples: list[tuple[float, int]], duration: float) -> dict[str, Any]:
    """RSS after warm-up (the first 20% of the run) vs at the end, each the median of a window
    of 10% of the run."""
    window = max(duration * 0.1, 2.0)
    warm = duration * 0.2
    after = [rss for t, rss in samples if warm <= t < warm + window]
    end = [rss for t, rss in samples if t >= samples[-1][0] - window]
    start_mib = statistics.median(after) / 2**20
    end_mib = statistics.median(end) / 2**20
    return {
        "samples": len(samples),
        "first_mib": samples[0][1] / 2**20,
        "after_warmup_mib": start_mib,
        "end_mib": end_mib,
        "max_mib": max(rss for _, rss in samples) / 2**20,
        "growth": end_mib / start_mib - 1,
        "series_mib": [(round(t, 1), round(rss / 2**20, 1)) for t, rss in samples],
    }


@dataclass
class Phase:
    name: str
    seconds: float = 0.0
    rows: dict[str, dict[str, float]] = field(default_factory=dict)
    loads: list[float] = field(default_factory=list)


def run_locust(
    user_class: str, url: str, seconds: float, users: int, tokens: list[str], think_s: float
) -> dict[str, dict[str, float]]:
    """Locust headless for `seconds`; its stats rows by request name ('Aggregated' too)."""
    with tempfile.TemporaryDirectory() as tmp:
        prefix = str(Path(tmp) / "stats")
        env = dict(os.environ, SOAK_TOKENS=json.dumps(tokens), SOAK_THINK_S=str(think_s))
        command = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless"]
        command += ["-u", str(users), "-r", str(users), "-t", f"{int(seconds)}s"]
        command += ["--host", url, "--csv", prefix, "--only-summary", "--stop-timeout", "15"]
        command += ["--loglevel", "WARNING", user_class]
        done = subprocess.run(command, cwd=ROOT, env=env, check=False, capture_output=True)
        if not Path(f"{prefix}_stats.csv").exists():
            raise RuntimeError(f"locust wrote no stats: {done.stderr.decode()[-2000:]}")
        with open(f"{prefix}_stats.csv", newline="") as fh:
            rows = {row["Name"]: row for row in csv.DictReader(fh)}
        failures_path = Path(f"{prefix}_failures.csv")
        failures = failures_path.read_text() if failures_path.exists() else ""
    stats = {}
    for name, row in rows.items():
        stats[name] = {
            "requests": int(row["Request Count"]),
            "failures": int(row["Failure Count"]),
            "rps": _number(row["Requests/s"]),
            "p50_ms": _number(row["50%"]),
            "p95_ms": _number(row["95%"]),
            "p99_ms": _number(row["99%"]),
            "mean_ms": _number(row["Average Response Time"]),
        }
    if failures.count("\n") > 1:
        stats["_failures"] = {"text": failures[:2000]}  # type: ignore[dict-item]
    if not stats.get("Aggregated", {}).get("requests"):
        stats["_log"] = {"text": done.stderr.decode()[:3000]}  # type: ignore[dict-item]
    return stats


def _number(text: str) -> float:
    return 0.0 if text in ("", "N/A") else float(text)  # N/A: no request of that kind finished


def merge(parts: list[dict[str, dict[str, float]]], seconds: float) -> dict[str, dict[str, float]]:
    """Rows of several locust runs of one server: counts added, rates over the total time,
    percentiles the request-weighted mean of the runs' (an approximation, said in the output)."""
    merged: dict[str, dict[str, float]] = {}
    names = {n for p in parts for n in p if not n.startswith("_")}
    for name in names:
        rows = [p[name] for p in parts if name in p]
        requests = sum(r["requests"] for r in rows)
        weight = [r["requests"] / requests if requests else 1 / len(rows) for r in rows]
        merged[name] = {
            "requests": requests,
            "failures": sum(r["failures"] for r in rows),
            "rps": requests / seconds,
            **{
                k: sum(w * r[k] for w, r in zip(weight, rows, strict=True))
                for k in ("p50_ms", "p95_ms", "p99_ms", "mean_ms")
            },
        }
    return merged


def chat_turns(rows: dict[str, dict[str, float]]) -> dict[str, float]:
    """The onemind chat turns of a comparison phase, both session lengths together."""
    chosen = [rows[n] for n in CHAT_ROWS if n in rows]
    requests = sum(r["requests"] for r in chosen)
    return {
        "requests": requests,
        "failures": sum(r["failures"] for r in chosen),
        "rps": sum(r["rps"] for r in chosen),
        **{
            k: sum(r[k] * r["requests"] for r in chosen) / max(requests, 1)
            for k in ("p50_ms", "p95_ms", "p99_ms")
        },
    }


def load_now() -> float:
    return os.getloadavg()[0]


def ours_env(
    emulator: str, issuer: TokenIssuer, data: str, port: int, extra: dict[str, str]
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFIDANT_")}
    env.update(
        PORT=str(port),
        FIRESTORE_EMULATOR_HOST=emulator,
        CONFIDANT_STORE="firestore",
        CONFIDANT_AUTH="firebase",
        CONFIDANT_FIREBASE_PROJECT_ID=issuer.project_id,
        CONFIDANT_JWKS_URL=issuer.jwks_url,
        CONFIDANT_PROJECT_ID=PROJECT,
        CONFIDANT_MODEL="offline",
        CONFIDANT_SQLITE_PATH=f"{data}/soak.db",  # the taskflow's local task list
        CONFIDANT_LOG_LEVEL="WARNING",
    )
    env.update(extra)
    return env


def run(args: argparse.Namespace) -> dict[str, Any]:
    extra = dict(item.split("=", 1) for item in args.ours_env)
    emulator = start_firestore()
    issuer = TokenIssuer(project_id=PROJECT, start=True)
    data = tempfile.mkdtemp(prefix="soak-")  # the servers' files; removed when they stop
    servers: list[Server] = []
    try:
        port = free_port()
        env = ours_env(emulator.host, issuer, data, port, extra)
        ours = start_server(functions_command("chat", port), env, port, within_s=240)
        servers.append(ours)
        adk_port = free_port()
        adk_env = dict(os.environ, FIRESTORE_EMULATOR_HOST=emulator.host)
        adk_command = [sys.executable, "-m", "bench.soak.adk_server", "--port", str(adk_port)]
        adk = start_server(
            [*adk_command, "--project", PROJECT], adk_env, adk_port, ready="/health", within_s=240
        )
        servers.append(adk)
        # ADK imports lazily on its first turn (ours warms up behind /healthz): one turn each.
        warm_adk(adk.base_url)

        soak_tokens = [issuer.issue(f"soak-{i}") for i in range(args.users)]
        soak = Phase("soak: ours, mixed apps", args.duration)
        sampler = RssSampler(ours.process.pid)
        sampler.start()
        soak.loads.append(load_now())
        soak.rows = run_locust(
            "ConfidantMixed", ours.base_url, args.duration, args.users, soak_tokens, args.think_s
        )
        soak.loads.append(load_now())
        memory = memory_report(sampler.stop(), args.duration)

        compare_tokens = [issuer.issue(f"cmp-{i}") for i in range(args.users)]
        half = args.compare_duration / 2
        ours_parts, adk_parts, compare_loads = [], [], [load_now()]
        for _ in range(2):  # ours, ADK, ours, ADK: the machine's drift hits both
            ours_parts.append(
                run_locust(
                    "ConfidantOnemind",
                    ours.base_url,
                    half,
                    args.users,
                    compare_tokens,
                    args.think_s,
                )
            )
            adk_parts.append(
                run_locust("AdkOnemind", adk.base_url, half, args.users, [], args.think_s)
            )
            compare_loads.append(load_now())
        ours_rows = merge(ours_parts, args.compare_duration)
        adk_rows = merge(adk_parts, args.compare_duration)
    finally:
        for server in servers:
            stop_server(server)
        issuer.stop()
        emulator.stop()
        shutil.rmtree(data, ignore_errors=True)
    failure_texts = [
        p["_failures"]["text"] for p in [soak.rows, *ours_parts, *adk_parts] if "_failures" in p
    ]
    ours_turns, adk_turns = chat_turns(ours_rows), chat_turns(adk_rows)
    return {
        "command": " ".join(["python -m bench.soak", *sys.argv[1:]]),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}",
        "users": args.users,
        "ours_env": args.ours_env,
        "think_s": args.think_s,
        "soak": {
            "seconds": args.duration,
            "rows": soak.rows,
            "load_average": soak.loads,
            "memory": memory,
        },
        "comparison": {
            "seconds_each": args.compare_duration,
            "load_average": compare_loads,
            "ours": ours_rows,
            "adk": adk_rows,
            "ours_turns": ours_turns,
            "adk_turns": adk_turns,
        },
        "failures": failure_texts,
    }


def warm_adk(url: str) -> None:
    user, session = "warm", "warm"
    sessions = f"{url}/apps/onemind/users/{user}/sessions"
    httpx.post(sessions, json={"sessionId": session}, timeout=120).raise_for_status()
    body = {
        "appName": "onemind",
        "userId": user,
        "sessionId": session,
        "newMessage": {"role": "user", "parts": [{"text": "hello"}]},
    }
    httpx.post(f"{url}/run_sse", json=body, timeout=120).raise_for_status()


def total_errors(result: dict[str, Any]) -> int:
    rows = [result["soak"]["rows"], result["comparison"]["ours"], result["comparison"]["adk"]]
    return int(sum(r["Aggregated"]["failures"] for r in rows if "Aggregated" in r))


def markdown(result: dict[str, Any]) -> str:
    soak, cmp, mem = result["soak"], result["comparison"], result["soak"]["memory"]

    def table(rows: dict[str, dict[str, float]]) -> list[str]:
        lines = ["| request | n | errors | req/s | p50 ms | p95 ms | p99 ms |"]
        lines.append("|---|--:|--:|--:|--:|--:|--:|")
        for name in sorted(rows, key=lambda n: (n == "Aggregated", n)):
            if name.startswith("_"):
                continue
            r = rows[name]
            lines.append(
                f"| {name} | {r['requests']:.0f} | {r['failures']:.0f} | {r['rps']:.2f} | "
                f"{r['p50_ms']:.0f} | {r['p95_ms']:.0f} | {r['p99_ms']:.0f} |"
            )
        return lines

    o, a = cmp["ours_turns"], cmp["adk_turns"]

    def ratio(key: str) -> str:
        return f"{o[key] / a[key]:.2f}×" if a[key] else "n/a"

    growth_ok = "PASS" if mem["growth"] < GROWTH_TARGET else "MISS"
    errors = total_errors(result)
    loads = ", ".join(f"{x:.1f}" for x in soak["load_average"])
    cmp_loads = ", ".join(f"{x:.1f}" for x in cmp["load_average"])
    return "\n".join(
        [
            "## Load and soak against ADK's api_server (locust)",
            "",
            "_Generated by `bench/soak`; everything between the markers is rewritten by the "
            "next run._",
            "",
            f"Command: `.venv/bin/python -m bench.soak {' '.join(sys.argv[1:])}` "
            f"({result['machine']}, {result['when']}). {result['users']} simulated users, "
            f"{result['think_s']} s between a reply and the next message, offline model in both "
            "servers, one Firestore emulator"
            + (f"; our server with {', '.join(result['ours_env'])}" if result["ours_env"] else "")
            + ".",
            "",
            f"### Soak: ours, mixed apps, {soak['seconds']:.0f} s "
            f"(1-minute load average at start and end: {loads})",
            "",
            *table(soak["rows"]),
            "",
            f"Resident memory of our server: {mem['first_mib']:.0f} MiB at the start, "
            f"{mem['after_warmup_mib']:.0f} MiB after warm-up (median over the run's second "
            f"10%-window after its first 20%), {mem['end_mib']:.0f} MiB at the end (median of "
            f"the last 10%), max {mem['max_mib']:.0f} MiB: growth **{mem['growth']:+.1%}** "
            f"(target < {GROWTH_TARGET:.0%}: {growth_ok}). Errors in the whole run: "
            f"**{errors}**.",
            "",
            f"### The same onemind conversations: ours vs ADK's api_server, "
            f"{cmp['seconds_each']:.0f} s each in alternating halves "
            f"(load average: {cmp_loads})",
            "",
            "Ours:",
            "",
            *table(cmp["ours"]),
            "",
            "ADK `get_fast_api_app` + `FirestoreSessionService` (`create session` is its extra "
            "request per conversation; ours creates the session inside the first turn):",
            "",
            *table(cmp["adk"]),
            "",
            "| chat turns (both session lengths) | turns/s | p50 ms | p95 ms | p99 ms |",
            "|---|--:|--:|--:|--:|",
            f"| ours | {o['rps']:.2f} | {o['p50_ms']:.0f} | {o['p95_ms']:.0f} | "
            f"{o['p99_ms']:.0f} |",
            f"| ADK api_server | {a['rps']:.2f} | {a['p50_ms']:.0f} | {a['p95_ms']:.0f} | "
            f"{a['p99_ms']:.0f} |",
            f"| ratio ours / ADK | {ratio('rps')} | {ratio('p50_ms')} | {ratio('p95_ms')} | "
            f"{ratio('p99_ms')} |",
            "",
            "Percentiles of a merged row are the request-weighted means of its two halves' "
            "(locust's own, rounded to two significant digits).",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=300, help="soak seconds (ours)")
    parser.add_argument(
        "--compare-duration", type=float, default=120, help="seconds per server, comparison"
    )
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--think-s", type=float, default=0.1)
    parser.add_argument(
        "--ours-env", action="append", default=[], metavar="KEY=VALUE",
        help="an extra setting for our server (e.g. CONFIDANT_EVENT_CACHE_SIZE=500)",
    )  # fmt: skip
    parser.add_argument("--results", default="soak", help="bench/results/NAME.json and .md")
    parser.add_argument("--out", type=Path, help="also rewrite this section of a markdown file")
    args = parser.parse_args()
    result = run(args)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.results}.json").write_text(json.dumps(result, indent=1))
    text = markdown(result)
    print(text)
    for failure in result["failures"]:
        print(failure)
    (RESULTS / f"{args.results}.md").write_text(text + "\n")
    if args.out:
        rewrite_section(args.out, "bench.soak", text)


if __name__ == "__main__":
    main()
