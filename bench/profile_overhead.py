"""What the unified profile adds to a turn, on the Firestore emulator (issue 10).

Three kinds of turn, interleaved round by round (in a shuffled order each round, so drift and
whatever the previous turn left behind fall on every kind alike) in one process against one
emulator:

    plain     lease the session, commit one event (the platform's fast path)
    profile   the same, with the profile read alongside the lease (`profile` context source)
    write     the same, plus a journal append and a section merge committed with the turn

Printed: the median latency of each as a ratio to `plain` in the same run, and the Firestore
RPCs, document reads and writes per turn (counted at the client's GAPIC layer).
Run: `.venv/bin/python -m bench.profile_overhead [--rounds 40]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import time
from collections import Counter

from google.adk.events import Event
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore
from google.genai import types

from bench.turn_overhead import RpcCounter
from confidant.profiles import AppendOp, MergeOp
from confidant.sessions.firestore_store import FirestoreSessionStore
from confidant.sessions.records import SessionKey
from confidant.sessions.service import ConfidantSessionService
from tests.support.emulators import start_firestore

PROJECT = "confidant-bench"
USER = "bench-profile-user"
KINDS = ("plain", "profile", "write")
SKILL = ("skills", "lifecoach")


async def _turn(service: ConfidantSessionService, kind: str, n: int) -> None:
    key = SessionKey(USER, "lifecoach", f"{kind}-{n % 5}")
    version = None
    if kind == "plain":
        turn = await service.begin_turn(key, ttl_s=30)
    else:
        turn, version = await asyncio.gather(
            service.begin_turn(key, ttl_s=30), service.store.load_profile_version(USER)
        )
    turn.events.append(
        Event(author="user", content=types.UserContent(f"message {n}"), invocation_id=str(n))
    )
    ops = []
    if kind == "write":
        ops = [
            AppendOp((*SKILL, "journal"), {"n": n}, 100),
            MergeOp((*SKILL, "progress"), {"last": n}),
        ]
    await turn.commit(profile_ops=ops, profile_version=version)


async def measure(rounds: int) -> None:
    client = firestore.AsyncClient(project=PROJECT, credentials=AnonymousCredentials())
    service = ConfidantSessionService(FirestoreSessionStore(client))
    await service.store.update_profile(USER, [MergeOp((*SKILL, "goals"), {"year": "x" * 2000})])
    counter = RpcCounter()
    counter.install()
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    counts: dict[str, Counter[str]] = {kind: Counter() for kind in KINDS}
    order = random.Random(20261123)
    try:
        for n in range(rounds + 5):
            for kind in order.sample(KINDS, len(KINDS)):
                before = counter.snapshot()
                start = time.perf_counter()
                await _turn(service, kind, n)
                elapsed = time.perf_counter() - start
                if n >= 5:  # the first rounds warm the emulator and the client
                    times[kind].append(elapsed)
                    counts[kind] += counter.snapshot() - before
    finally:
        counter.uninstall()
    base = statistics.median(times["plain"])
    print(f"{rounds} rounds; median of `plain` {base * 1000:.1f} ms")
    print("| turn | median / plain | RPCs | reads | writes |")
    print("|---|---|---|---|---|")
    for kind in KINDS:
        ratio = statistics.median(times[kind]) / base
        c = counts[kind]
        print(
            f"| {kind} | {ratio:.2f}× | {c['rpcs'] / rounds:.1f} | {c['reads'] / rounds:.1f} | "
            f"{c['writes'] / rounds:.1f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    emulator = start_firestore()
    os.environ["FIRESTORE_EMULATOR_HOST"] = emulator.host
    try:
        asyncio.run(measure(args.rounds))
    finally:
        emulator.stop()


if __name__ == "__main__":
    main()
