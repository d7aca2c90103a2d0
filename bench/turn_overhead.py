"""Per-turn platform overhead on the Firestore emulator: our session service vs ADK's built-in.

A turn is what a chat request does with a tool-calling agent — user message, model function
call, tool response, final text (4 events) — run through a real ADK `Runner` with a scripted
model (zero model latency), so everything measured is platform: ADK's runner, the session
service, and Firestore round trips to a local emulator.

    .venv/bin/python -m bench.turn_overhead --prior 0,100,1000 --turns 24 --out docs/performance.md

Both services run in the same process against the same emulator; the timed turns of every
(service, history) cell run in shuffled rounds, one turn of each cell per round, so that drift
hits all cells alike. Firestore reads,
writes and commits are counted at the GAPIC layer (`FirestoreAsyncClient`) for the whole
process; the counters are measurement only and never change what is sent.

Prior history is seeded before timing: ours through the real `begin_turn`/`commit` path, the
built-in by writing its documents directly, in exactly the layout its `append_event` produces
(checked at start-up against a session built by the service itself, and after timing by
`get_session` returning every event). Targets are reported as PASS/MISS, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import math
import os
import platform
import random
import re
import shlex
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from google.adk import Agent, Runner
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.events import Event
from google.adk.integrations.firestore import FirestoreSessionService
from google.adk.sessions import BaseSessionService, InMemorySessionService
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore
from google.cloud.firestore_v1.services.firestore.async_client import FirestoreAsyncClient
from google.genai import types

from confidant.sessions.firestore_store import FirestoreSessionStore
from confidant.sessions.records import SessionKey, TailPolicy
from confidant.sessions.service import ConfidantSessionService
from confidant.settings import Settings
from tests.support.emulators import start_firestore
from tests.support.scripted_model import ScriptedLlm, call

PROJECT = "confidant-bench"
APP = "bench"
USER = "bench-user"
EVENTS_PER_TURN = 4
MESSAGE = "what is 2 + 3?"
MARK_BEGIN = "<!-- bench.turn_overhead:begin -->"
MARK_END = "<!-- bench.turn_overhead:end -->"

# -- the agent ----------------------------------------------------------------------------------


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _runner(service: BaseSessionService) -> Runner:
    """A fresh agent tree per turn, as the chat service builds one per request."""
    model = ScriptedLlm(script=[call("add", a=2, b=3), "sum is 5"])
    return Runner(
        agent=Agent(name="calc", model=model, tools=[add]),
        app_name=APP,
        session_service=service,
        auto_create_session=True,
    )


_RUN_CONFIG = RunConfig(streaming_mode=StreamingMode.NONE)


async def _run_turn(service: BaseSessionService, session_id: str) -> list[Event]:
    events = [
        event
        async for event in _runner(service).run_async(
            user_id=USER,
            session_id=session_id,
            new_message=types.UserContent(MESSAGE),
            run_config=_RUN_CONFIG,
        )
    ]
    if len(events) != EVENTS_PER_TURN - 1 or events[-1].content.parts[0].text != "sum is 5":
        raise RuntimeError(f"unexpected turn: {[e.model_dump(exclude_none=True) for e in events]}")
    return events


# -- counting Firestore traffic at the GAPIC layer ----------------------------------------------


def _request(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return kwargs["request"] if "request" in kwargs else (args[0] if args else None)


def _field(request: Any, name: str) -> Any:
    if request is None:
        return None
    return request.get(name) if isinstance(request, dict) else getattr(request, name)


class _CountedStream:
    """Wraps a streamed GAPIC response (an async iterable), counting each item as it passes."""

    def __init__(self, inner: Any, on_item: Callable[[Any], None]) -> None:
        self._inner = inner
        self._on_item = on_item
        self._iterator: Any = None

    def __aiter__(self) -> _CountedStream:
        self._iterator = self._inner.__aiter__()
        return self

    async def __anext__(self) -> Any:
        item = await self._iterator.__anext__()
        self._on_item(item)
        return item

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _CountedQuery(_CountedStream):
    """A RunQuery stream: counts returned documents, and the query if it returned none."""

    def __init__(self, inner: Any, counts: Counter[str]) -> None:
        super().__init__(inner, self._on_response)
        self._counts = counts
        self._found = 0
        self._ended = False

    def _on_response(self, response: Any) -> None:
        if type(response).pb(response).HasField("document"):
            self._found += 1
            self._counts["reads"] += 1

    async def __anext__(self) -> Any:
        try:
            return await super().__anext__()
        except StopAsyncIteration:
            if not self._found and not self._ended:
                self._counts["empty"] += 1
            self._ended = True
            raise


class RpcCounter:
    """Process-wide counts of Firestore RPCs, commits, document reads and writes.

    reads  = documents returned (BatchGetDocuments `found`, RunQuery `document`)
    empty  = BatchGetDocuments `missing` results plus RunQuery calls that returned no document
    writes = Write messages in Commit (and BatchWrite) requests
    """

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._originals: dict[str, Any] = {}

    def snapshot(self) -> Counter[str]:
        return Counter(self.counts)

    def install(self) -> None:
        counts = self.counts

        def on_commit(request: Any) -> None:
            counts["commits"] += 1
            counts["writes"] += len(_field(request, "writes") or [])

        def on_batch_write(request: Any) -> None:
            counts["writes"] += len(_field(request, "writes") or [])

        def on_found(response: Any) -> None:
            if type(response).pb(response).HasField("found"):
                counts["reads"] += 1
            elif type(response).pb(response).HasField("missing"):
                counts["empty"] += 1

        def unary(name: str, on_request: Callable[[Any], None] | None, key: str | None) -> None:
            original = getattr(FirestoreAsyncClient, name)

            async def wrapper(client: Any, *args: Any, **kwargs: Any) -> Any:
                counts["rpcs"] += 1
                if key is not None:
                    counts[key] += 1
                if on_request is not None:
                    on_request(_request(args, kwargs))
                return await original(client, *args, **kwargs)

            self._patch(name, original, wrapper)

        def streamed(name: str, on_item: Callable[[Any], None]) -> None:
            original = getattr(FirestoreAsyncClient, name)

            async def wrapper(client: Any, *args: Any, **kwargs: Any) -> Any:
                counts["rpcs"] += 1
                stream = await original(client, *args, **kwargs)
                return _CountedStream(stream, on_item)

            self._patch(name, original, wrapper)

        def run_query() -> None:
            original = FirestoreAsyncClient.run_query

            async def wrapper(client: Any, *args: Any, **kwargs: Any) -> Any:
                counts["rpcs"] += 1
                return _CountedQuery(await original(client, *args, **kwargs), counts)

            self._patch("run_query", original, wrapper)

        unary("commit", on_commit, None)
        unary("begin_transaction", None, "transactions")
        unary("rollback", None, "rollbacks")
        unary("batch_write", on_batch_write, "other")
        for name in (
            "get_document",
            "list_documents",
            "update_document",
            "delete_document",
            "create_document",
            "list_collection_ids",
            "partition_query",
        ):
            unary(name, None, "other")
        streamed("batch_get_documents", on_found)
        run_query()

    def _patch(self, name: str, original: Any, wrapper: Any) -> None:
        self._originals.setdefault(name, original)
        wrapper.__name__ = name
        wrapper.__doc__ = original.__doc__
        setattr(FirestoreAsyncClient, name, wrapper)

    def uninstall(self) -> None:
        for name, original in self._originals.items():
            setattr(FirestoreAsyncClient, name, original)
        self._originals.clear()


# -- one template turn, cloned for seeding -------------------------------------------------------


async def _template_turn() -> list[Event]:
    """The 4 events of one real tool-call turn (ADK's in-memory service, no Firestore)."""
    service = InMemorySessionService()
    await _run_turn(service, "template")
    session = await service.get_session(app_name=APP, user_id=USER, session_id="template")
    assert session is not None
    if len(session.events) != EVENTS_PER_TURN:
        raise RuntimeError(f"a turn produced {len(session.events)} events, expected 4")
    return session.events


def _clone_turn(template: list[Event], start: float) -> list[Event]:
    """The template turn with fresh event, invocation and function-call ids and timestamps."""
    text = json.dumps([e.model_dump(mode="json", exclude_none=True) for e in template])
    call_ids = set(re.findall(r'"id": "(adk-[0-9a-f-]+)"', text))
    for old in call_ids | {template[0].invocation_id}:
        new = ("adk-" if old.startswith("adk-") else "e-") + str(uuid.uuid4())
        text = text.replace(old, new)
    events = [Event.model_validate(data) for data in json.loads(text)]
    for offset, event in enumerate(events):
        event.id = Event.new_id()
        event.timestamp = start + offset * 0.01
    return events


# -- the contenders -----------------------------------------------------------------------------


class Ours:
    name = "ours"
    label = "Confidant (`FirestoreSessionStore` + `ConfidantSessionService`)"

    def __init__(self, client: firestore.AsyncClient, event_cache_size: int) -> None:
        self.store = FirestoreSessionStore(client)
        # As the composition root builds it (Settings().event_cache_size by default).
        self.service = ConfidantSessionService(self.store, event_cache_size=event_cache_size)
        self.last_phases: tuple[float, float, float] | None = None
        self.last_tail: list[dict[str, Any]] = []

    def new_session(self, prior: int) -> str:
        return f"ours-{prior}-{uuid.uuid4().hex[:8]}"

    async def turn(self, session_id: str) -> None:
        key = SessionKey(USER, APP, session_id)
        t0 = time.perf_counter()
        turn = await self.service.begin_turn(key, ttl_s=60)
        t1 = time.perf_counter()
        async with self.service.activate(turn):
            await _run_turn(self.service, session_id)
            t2 = time.perf_counter()
            await turn.commit()
            t3 = time.perf_counter()
        if len(turn.events) != EVENTS_PER_TURN:
            raise RuntimeError(f"our turn buffered {len(turn.events)} events")
        # Where the time went (the bench's own clock; nothing in confidant is touched).
        self.last_phases = ((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000)
        self.last_tail = turn.committed.tail if turn.committed else []

    async def seed(self, session_id: str, prior: int, template: list[Event]) -> None:
        """N committed turns through the real turn path: begin_turn, 4 buffered events, commit."""
        key = SessionKey(USER, APP, session_id)
        start = time.time() - prior * EVENTS_PER_TURN - 60
        for n in range(prior):
            turn = await self.service.begin_turn(key, ttl_s=60)
            for event in _clone_turn(template, start + n * EVENTS_PER_TURN):
                turn.buffer(event)
            await turn.commit()

    async def stored_events(self, session_id: str) -> int:
        """How many events the session holds (tail plus chunks), paging through them all."""
        key, after, seen = SessionKey(USER, APP, session_id), None, []
        while True:
            page = await self.store.read_events(key, after_seq=after, limit=1000)
            seen.extend(e["seq"] for e in page.events)
            if page.next_after_seq is None:
                break
            after = page.next_after_seq
        if seen != list(range(len(seen))):
            raise RuntimeError("our stored events are not a gapless sequence")
        return len(seen)


class BuiltIn:
    name = "built-in"
    label = "ADK `google.adk.integrations.firestore.FirestoreSessionService`"

    def __init__(self, client: firestore.AsyncClient) -> None:
        self.client = client
        self.root = f"adk-bench-{uuid.uuid4().hex[:8]}"
        self.service = FirestoreSessionService(client=client, root_collection=self.root)

    def new_session(self, prior: int) -> str:
        return f"builtin-{prior}-{uuid.uuid4().hex[:8]}"

    async def turn(self, session_id: str) -> None:
        await _run_turn(self.service, session_id)

    def _session_ref(self, session_id: str) -> Any:
        return self.service._get_sessions_ref(APP, USER).document(session_id)

    async def seed(self, session_id: str, prior: int, template: list[Event]) -> None:
        """N turns written directly, document for document as `append_event` writes them."""
        start = time.time() - prior * EVENTS_PER_TURN - 60
        events = [
            event
            for n in range(prior)
            for event in _clone_turn(template, start + n * EVENTS_PER_TURN)
        ]
        await self.write_session(session_id, events)

    async def write_session(self, session_id: str, events: list[Event]) -> None:
        ref = self._session_ref(session_id)
        # create_session's document, then what every append_event's `update` leaves on it.
        await ref.set(
            {
                "id": session_id,
                "appName": APP,
                "userId": USER,
                "state": json.dumps({}),
                "createTime": firestore.SERVER_TIMESTAMP,
                "updateTime": firestore.SERVER_TIMESTAMP,
                "revision": len(events),
            }
        )
        events_ref = ref.collection(self.service.events_collection)
        for first in range(0, len(events), 400):
            batch = self.client.batch()
            for event in events[first : first + 400]:
                batch.set(
                    events_ref.document(event.id),
                    {
                        "event_data": event.model_dump(exclude_none=True, mode="json"),
                        "timestamp": datetime.fromtimestamp(event.timestamp, tz=UTC),
                        "appName": APP,
                        "userId": USER,
                    },
                )
            await batch.commit()

    async def stored_events(self, session_id: str) -> int:
        session = await self.service.get_session(app_name=APP, user_id=USER, session_id=session_id)
        if session is None:
            raise RuntimeError(f"built-in session {session_id} is missing")
        return len(session.events)

    async def check_seed_layout(self) -> None:
        """A session seeded directly must be document-for-document what the service writes."""
        real = self.new_session(-1)
        for _ in range(2):
            await self.turn(real)
        session = await self.service.get_session(app_name=APP, user_id=USER, session_id=real)
        assert session is not None
        twin = self.new_session(-2)
        await self.write_session(twin, session.events)

        async def docs(session_id: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
            ref = self._session_ref(session_id)
            doc = (await ref.get()).to_dict() or {}
            events = {
                snap.id: snap.to_dict()
                async for snap in ref.collection(self.service.events_collection).stream()
            }
            return doc, events

        (real_doc, real_events), (twin_doc, twin_events) = await docs(real), await docs(twin)
        for doc in (real_doc, twin_doc):
            for volatile in ("id", "createTime", "updateTime"):
                if volatile not in doc:
                    raise RuntimeError(f"built-in session document has no {volatile!r}")
                doc.pop(volatile)
        if real_doc != twin_doc:
            raise RuntimeError(f"seeded session document differs: {real_doc} != {twin_doc}")
        if real_events != twin_events:
            raise RuntimeError("seeded event documents differ from the service's own")
        await self.service.delete_session(app_name=APP, user_id=USER, session_id=real)
        await self.service.delete_session(app_name=APP, user_id=USER, session_id=twin)


class Floor:
    """ADK's in-memory service: the Runner's own cost, the floor under both contenders."""

    name = "adk-in-memory"
    label = "ADK `InMemorySessionService` (no storage: the Runner's own cost)"

    def __init__(self) -> None:
        self.service = InMemorySessionService()

    def new_session(self, prior: int) -> str:
        return f"floor-{prior}-{uuid.uuid4().hex[:8]}"

    async def turn(self, session_id: str) -> None:
        await _run_turn(self.service, session_id)

    async def seed(self, session_id: str, prior: int, template: list[Event]) -> None:
        if prior:
            raise ValueError("the in-memory floor is measured at 0 prior turns only")

    async def stored_events(self, session_id: str) -> int:
        session = await self.service.get_session(app_name=APP, user_id=USER, session_id=session_id)
        return 0 if session is None else len(session.events)


Contender = Ours | BuiltIn | Floor

# -- measuring ----------------------------------------------------------------------------------


@dataclass
class Cell:
    """One contender at one history length."""

    service: str
    prior: int
    turns_ms: list[float] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    phases: list[tuple[float, float, float]] = field(default_factory=list)
    tails: list[tuple[int, int]] = field(default_factory=list)  # (events, JSON bytes) after
    tail_parse_ms: list[float] = field(default_factory=list)
    seed_s: float = 0.0

    @property
    def n(self) -> int:
        return len(self.turns_ms)

    @property
    def median(self) -> float:
        return statistics.median(self.turns_ms)

    @property
    def p90(self) -> float:
        ordered = sorted(self.turns_ms)  # nearest rank
        return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]

    def per_turn(self, key: str) -> float:
        return self.counts[key] / self.n


async def _timed(contender: Contender, session_id: str, counter: RpcCounter, cell: Cell) -> None:
    gc.collect()  # garbage left by the previous (other) turn is not this turn's cost
    before = counter.snapshot()
    started = time.perf_counter()
    await contender.turn(session_id)
    cell.turns_ms.append((time.perf_counter() - started) * 1000)
    after = counter.snapshot()
    after.subtract(before)
    cell.counts.update(after)
    if isinstance(contender, Ours) and contender.last_phases is not None:
        cell.phases.append(contender.last_phases)
        tail = contender.last_tail
        cell.tails.append((len(tail), sum(len(e["json"]) for e in tail)))
        # Untimed: what validating this tail into ADK Events costs the next turn's load.
        started = time.perf_counter()
        for stored in tail:
            Event.model_validate_json(stored["json"])
        cell.tail_parse_ms.append((time.perf_counter() - started) * 1000)


@dataclass
class _Slot:
    contender: Contender
    cell: Cell
    sessions: list[str] = field(default_factory=list)

    def session_for_next_turn(self) -> str:
        """At 0 prior turns every timed turn starts a new session; otherwise they share one."""
        if self.cell.prior == 0 or not self.sessions:
            self.sessions.append(self.contender.new_session(self.cell.prior))
        return self.sessions[-1]


async def measure(
    plan: list[tuple[Contender, int]],
    turns: int,
    template: list[Event],
    counter: RpcCounter,
    log: Callable[[str], None],
) -> list[Cell]:
    """Seed every (contender, history) cell, then time `turns` rounds across all of them.

    Each round runs one turn of every cell, in a shuffled (seeded) order, so that warm-up,
    drift and the emulator's growing data set fall on every cell alike.
    """
    slots = []
    for contender, prior in plan:
        slot = _Slot(contender, Cell(contender.name, prior))
        if prior:
            started = time.perf_counter()
            await contender.seed(slot.session_for_next_turn(), prior, template)
            slot.cell.seed_s = time.perf_counter() - started
            log(f"  seeded {contender.name} with {prior} turns in {slot.cell.seed_s:.1f} s")
        slots.append(slot)
    order = random.Random(20260101)
    for round_no in range(turns):
        for slot in order.sample(slots, len(slots)):
            await _timed(slot.contender, slot.session_for_next_turn(), counter, slot.cell)
        if (round_no + 1) % 4 == 0 or round_no + 1 == turns:
            log(f"  round {round_no + 1}/{turns} done")
    for slot in slots:
        cell = slot.cell
        # Every event of every turn is stored: N seeded turns plus the timed ones.
        held = [await slot.contender.stored_events(sid) for sid in slot.sessions]
        if cell.prior == 0:
            expected = [EVENTS_PER_TURN] * turns
        else:
            expected = [(cell.prior + turns) * EVENTS_PER_TURN]
        if held != expected:
            raise RuntimeError(
                f"{cell.service} at {cell.prior} prior turns holds {held} events,"
                f" expected {expected}"
            )
        log(
            f"  {cell.service:>13} @ {cell.prior:>4}: median {cell.median:7.1f} ms,"
            f" p90 {cell.p90:7.1f} ms, reads/turn {cell.per_turn('reads'):7.1f},"
            f" writes/turn {cell.per_turn('writes'):5.2f}"
            f"  [{' '.join(f'{ms:.0f}' for ms in cell.turns_ms)}]"
        )
    return [slot.cell for slot in slots]


async def warm_up(contenders: list[Contender], turns: int) -> None:
    for contender in contenders:
        session_id = contender.new_session(-3)
        for _ in range(turns):
            await contender.turn(session_id)


# -- reporting ----------------------------------------------------------------------------------


_SPILL_AT = TailPolicy().window + TailPolicy().flush_batch


def _turns_per_chunk() -> int:
    """Turns between two chunk writes in steady state (default TailPolicy, 4-event turns)."""
    return (_SPILL_AT - TailPolicy().window) // EVENTS_PER_TURN + 1


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _machine() -> list[tuple[str, str]]:
    def first(path: str, prefix: str) -> str:
        try:
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith(prefix):
                        return line.split(":", 1)[1].strip()
        except OSError:
            pass
        return "unknown"

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    def command_output(args: list[str], pattern: str) -> str:
        try:
            out = subprocess.run(args, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return "unknown"
        found = re.search(pattern, out.stdout + out.stderr)
        return found.group(1) if found else "unknown"

    mem_kb = first("/proc/meminfo", "MemTotal").split()[0]
    memory = f"{int(mem_kb) / 1024 / 1024:.0f} GiB" if mem_kb.isdigit() else "unknown"
    return [
        ("CPU", f"{first('/proc/cpuinfo', 'model name')}, {_cores()} cores usable"),
        ("Memory", memory),
        ("OS", platform.platform()),
        ("Python", platform.python_version()),
        ("google-adk", version("google-adk")),
        ("google-cloud-firestore", version("google-cloud-firestore")),
        ("grpcio", version("grpcio")),
        (
            "Firestore emulator",
            command_output(["gcloud", "--version"], r"cloud-firestore-emulator\s+(\S+)")
            + " (gcloud), Java "
            + command_output(["java", "-version"], r'version "([^"]+)"'),
        ),
    ]


def _ratio(value: float) -> str:
    return f"{value:.3f}×" if value < 0.1 else f"{value:.2f}×"


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def targets(cells: dict[tuple[str, int], Cell], priors: list[int]) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for each target that this run's history lengths allow."""
    out: list[tuple[str, str, bool]] = []

    def get(name: str, prior: int) -> Cell | None:
        return cells.get((name, prior))

    ours0, ours1000 = get("ours", 0), get("ours", 1000)
    if ours0 and ours1000:
        r = ours1000.median / ours0.median
        out.append(("ours @1000 prior turns ≤ 1.2 × ours @0 (median latency)", _ratio(r), r <= 1.2))
    ratios = []
    for prior in priors:
        ours, builtin = get("ours", prior), get("built-in", prior)
        if ours and builtin:
            ratios.append((prior, builtin.per_turn("writes") / ours.per_turn("writes")))
    if ratios:
        worst = min(r for _, r in ratios)
        measured = ", ".join(f"{r:.2f}× @{p}" for p, r in ratios)
        target = "≥ 3× fewer writes per turn than built-in (at every history length)"
        out.append((target, measured, worst >= 3))
    for prior, limit in ((0, 0.6), (1000, 0.05)):
        ours, builtin = get("ours", prior), get("built-in", prior)
        if ours and builtin:
            r = ours.median / builtin.median
            out.append(
                (f"ours ≤ {limit} × built-in latency @{prior} prior turns", _ratio(r), r <= limit)
            )
    return out


def render(
    cells: dict[tuple[str, int], Cell],
    priors: list[int],
    turns: int,
    warmup: int,
    command: str,
    runtime_s: float,
) -> str:
    lines = [
        MARK_BEGIN,
        "## Per-turn platform overhead: Confidant vs ADK's FirestoreSessionService",
        "",
        "_Generated by `bench/turn_overhead.py`; everything between the markers is rewritten by"
        " the next run._",
        "",
        "Command (from the repository root):",
        "",
        "```",
        command,
        "```",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {runtime_s:.0f} s in all"
        " (emulator start, seeding and timing).",
        "",
        "Machine:",
        "",
        *[f"- {name}: {value}" for name, value in _machine()],
        "",
        "Services compared (rows of the tables):",
        "",
        *[f"- `{c.name}`: {c.label}" for c in (Ours, BuiltIn, Floor)],
        "",
        "### What this measures, and what it does not",
        "",
        "Per-turn **platform overhead** of one chat turn with a tool call — user message, model"
        " function call, tool response, final text (4 events) — through a real ADK `Runner`"
        " with a scripted model that answers instantly, so model latency is zero and every"
        " millisecond is ADK plus the session service plus Firestore round trips. Ours is one"
        " turn as the chat service runs it (`begin_turn`, the `Runner` inside `activate`,"
        " `commit`, default `TailPolicy`); the built-in is one `Runner.run_async` on"
        " `FirestoreSessionService` with its defaults (`get_session` without a config, so it"
        " loads the whole history). Both run in one process against one local **Firestore"
        " emulator**, their timed turns interleaved. The emulator is not production Firestore:"
        f" a round trip here is a loopback call to a Java process sharing the {_cores()} cores,"
        " while"
        " production adds network latency to every RPC (which favours the design with fewer"
        " round trips) and has its own server-side costs; read absolute milliseconds as"
        " *this machine only* and compare **ratios**. Reads, writes and commits are counted at"
        " the client's GAPIC layer, so they are what a production run would send, not emulator"
        " artefacts. Not measured: model latency; what the chat service adds around the turn"
        " (its memory query, SSE translation, job publishing); concurrent turns on one"
        " session; cold starts; production Firestore's latency and contention behaviour.",
        "",
        f"Method: each service first runs {warmup} warm-up turns on a throwaway session. At"
        " **0 prior turns** every timed turn is the first turn of a new session (a new"
        " conversation; both services create the session inside the turn). At **N > 0** the"
        f" session is seeded with N turns ({EVENTS_PER_TURN} events each, cloned with fresh ids"
        " from one real turn) and the timed turns run back to back on it, so they see"
        f" N … N+{turns - 1} prior turns. Ours is seeded through its real `begin_turn`/`commit`"
        " path; the built-in by writing its documents directly, in exactly the layout its"
        " `append_event` writes (checked at start-up against a session the service built"
        " itself). Afterwards every session must hold every event (checked through each"
        " service's own read path). The timed turns of all cells run in rounds — one turn of"
        " every cell per round, shuffled, with an untimed `gc.collect()` before each — so that"
        " warm-up, drift and the emulator's growing data set fall on every cell alike. Latency"
        " is the wall time of one turn, from its first session call to its last write;"
        " counts are means per timed turn. Ours also writes a chunk document of older events"
        f" whenever its inline tail passes {_SPILL_AT} events (every"
        f" {_turns_per_chunk()} turns here), which its writes/turn includes, amortised over"
        " the timed turns.",
        "",
        "### Results",
        "",
        "| service | prior turns | timed turns | median ms | p90 ms | RPCs | transactions"
        " | commits | reads | empty lookups | writes |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for prior in priors:
        for name in ("ours", "built-in", Floor.name):
            cell = cells.get((name, prior))
            if cell is None:
                continue
            lines.append(
                f"| {name} | {prior} | {cell.n} | {cell.median:.1f} | {cell.p90:.1f}"
                f" | {cell.per_turn('rpcs'):.1f} | {cell.per_turn('transactions'):.1f}"
                f" | {cell.per_turn('commits'):.1f} | {cell.per_turn('reads'):.1f}"
                f" | {cell.per_turn('empty'):.1f} | {cell.per_turn('writes'):.2f} |"
            )
    lines += [
        "",
        "Per turn: RPCs = every Firestore call; reads = documents returned; empty lookups ="
        " documents asked for but missing, plus queries that returned nothing (Firestore may"
        " bill these too); writes = document writes in commits.",
    ]
    if any(("ours", p) in cells and ("built-in", p) in cells for p in priors):
        lines += [
            "",
            "### Ratios",
            "",
            "| prior turns | latency ours / built-in | writes built-in / ours"
            " | reads built-in / ours | ours @N / ours @0 | built-in @N / built-in @0 |",
            "|--:|--:|--:|--:|--:|--:|",
        ]
    base_ours, base_builtin = cells.get(("ours", priors[0])), cells.get(("built-in", priors[0]))
    for prior in priors:
        ours, builtin = cells.get(("ours", prior)), cells.get(("built-in", prior))
        if ours is None or builtin is None:
            continue
        reads_ours = ours.per_turn("reads")
        lines.append(
            f"| {prior} | {_ratio(ours.median / builtin.median)}"
            f" | {_ratio(builtin.per_turn('writes') / ours.per_turn('writes'))}"
            f" | {_ratio(builtin.per_turn('reads') / reads_ours) if reads_ours else 'n/a'}"
            f" | {_ratio(ours.median / base_ours.median) if base_ours else 'n/a'}"
            f" | {_ratio(builtin.median / base_builtin.median) if base_builtin else 'n/a'} |"
        )
    if priors[0] != 0:
        lines += ["", f"(@N ratios are relative to the smallest history run, {priors[0]}.)"]
    lines += ["", "### Targets", "", "| target | measured | result |", "|---|--:|:-:|"]
    for target, measured, ok in targets(cells, priors):
        lines.append(f"| {target} | {measured} | {_verdict(ok)} |")
    ours_cells = [cells[("ours", p)] for p in priors if ("ours", p) in cells]
    if any(cell.phases for cell in ours_cells):
        lines += [
            "",
            "### Where our turn's time goes",
            "",
            "Medians per phase (they need not add up to the median turn). `begin_turn` = lease"
            " transaction plus app/user state reads, and turning the loaded tail into ADK"
            " `Event`s; Runner = ADK's own work on that session (our service only buffers"
            " events, nothing is written); commit = the turn's write transaction. Tail = events"
            " kept inline in the session document after the turn; tail parse = validating"
            " those events with `Event.model_validate_json` (timed separately, untimed in the"
            " turn: it is part of the next turn's `begin_turn`).",
            "",
            "| prior turns | turn ms | begin_turn ms | Runner ms | commit ms | tail events"
            " | tail KiB | tail parse ms |",
            "|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for cell in ours_cells:
            if not cell.phases:
                continue
            begin, run, commit = (statistics.median(p[i] for p in cell.phases) for i in range(3))
            events = statistics.median(t[0] for t in cell.tails)
            kib = statistics.median(t[1] for t in cell.tails) / 1024
            parse = statistics.median(cell.tail_parse_ms)
            lines.append(
                f"| {cell.prior} | {cell.median:.1f} | {begin:.1f} | {run:.1f} | {commit:.1f}"
                f" | {events:.0f} | {kib:.1f} | {parse:.1f} |"
            )
        floor = cells.get((Floor.name, 0))
        if floor is not None:
            lines += [
                "",
                f"For scale: the same turn on ADK's `InMemorySessionService` (no storage, new"
                f" session) takes {floor.median:.1f} ms median on this machine.",
            ]
    unusual = [
        f"{c.service} @{c.prior}: {c.counts['rollbacks']} rollbacks, {c.counts['other']} other RPCs"
        for c in cells.values()
        if c.counts["rollbacks"] or c.counts["other"]
    ]
    if unusual:
        lines += ["", "Note — unexpected traffic during timed turns: " + "; ".join(unusual) + "."]
    lines += ["", MARK_END]
    return "\n".join(lines) + "\n"


def write_out(path: Path, section: str) -> None:
    """Replace the generated section of `path`, keeping everything around it."""
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if MARK_BEGIN in text and MARK_END in text:
            head, rest = text.split(MARK_BEGIN, 1)
            tail = rest.split(MARK_END, 1)[1].lstrip("\n")
            text = head + section + ("\n" + tail if tail else "")
        else:
            text = text.rstrip("\n") + "\n\n" + section
    else:
        text = "# Performance\n\n" + section
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# -- main ---------------------------------------------------------------------------------------


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.turn_overhead", description=__doc__)
    parser.add_argument(
        "--prior",
        default="0,100,1000",
        help="comma-separated prior-turn counts (default 0,100,1000)",
    )
    parser.add_argument("--turns", type=int, default=24, help="timed turns per cell (default 24)")
    parser.add_argument("--warmup", type=int, default=10, help="warm-up turns per service")
    parser.add_argument(
        "--only", choices=("ours", "built-in"), help="measure one service only (no ratios)"
    )
    parser.add_argument(
        "--event-cache",
        type=int,
        default=Settings.model_fields["event_cache_size"].default,
        help="our parsed-event cache size (default: the production setting; 0 = a cold instance)",
    )
    parser.add_argument("--out", type=Path, help="markdown file to write the results into")
    args = parser.parse_args(argv)
    args.priors = sorted({int(p) for p in args.prior.split(",") if p.strip()})
    if not args.priors or min(args.priors) < 0 or args.turns < 1:
        parser.error("--prior needs non-negative counts and --turns at least 1")
    return args


async def _main(
    args: argparse.Namespace, log: Callable[[str], None]
) -> dict[tuple[str, int], Cell]:
    counter = RpcCounter()
    counter.install()
    log("starting the Firestore emulator …")
    try:
        emulator = start_firestore()
    except BaseException as exc:  # tests.support raises pytest's Skipped when gcloud is missing
        raise SystemExit(f"the Firestore emulator could not start: {exc}") from None
    previous_host = os.environ.get("FIRESTORE_EMULATOR_HOST")
    cells: dict[tuple[str, int], Cell] = {}
    try:
        os.environ["FIRESTORE_EMULATOR_HOST"] = emulator.host
        client = firestore.AsyncClient(project=PROJECT, credentials=AnonymousCredentials())
        template = await _template_turn()
        contenders: list[Contender] = []
        if args.only in (None, "ours"):
            contenders.append(Ours(client, args.event_cache))
        if args.only in (None, "built-in"):
            builtin = BuiltIn(client)
            await builtin.check_seed_layout()
            log("built-in seed layout matches the service's own documents")
            contenders.append(builtin)
        floor = Floor()
        log(f"warming up ({args.warmup} turns per service) …")
        await warm_up([*contenders, floor], args.warmup)
        plan = [(c, prior) for prior in args.priors for c in contenders]
        if 0 in args.priors:
            plan.append((floor, 0))
        for cell in await measure(plan, args.turns, template, counter, log):
            cells[(cell.service, cell.prior)] = cell
    finally:
        emulator.stop()
        if previous_host is None:
            os.environ.pop("FIRESTORE_EMULATOR_HOST", None)
        else:
            os.environ["FIRESTORE_EMULATOR_HOST"] = previous_host
        counter.uninstall()
    return cells


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    # The scripted model reports no token usage (a real one does); ADK warns on every call.
    logging.getLogger("google_adk.google.adk.telemetry._metrics").setLevel(logging.ERROR)
    shown = sys.argv[1:] if argv is None else argv
    command = " ".join([".venv/bin/python -m bench.turn_overhead", *map(shlex.quote, shown)])

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    cells = asyncio.run(_main(args, log))
    runtime_s = time.perf_counter() - started
    section = render(cells, args.priors, args.turns, args.warmup, command, runtime_s)
    print(section)
    for target, measured, ok in targets(cells, args.priors):
        print(f"{_verdict(ok)}  {target}: {measured}")
    if args.out is not None:
        write_out(args.out, section)
        log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
