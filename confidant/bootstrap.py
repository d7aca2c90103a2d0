"""The composition root: settings → adapters → services. Built once per process."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from google.adk.models import BaseLlm

from agents.deps import AgentDeps
from confidant.chat.context import (
    EMOTIONS,
    MEMORIES,
    MEMORY_HITS,
    SUMMARY,
    ContextSource,
    EmotionsSource,
    MemoryHitsSource,
    RecentMemoriesSource,
    SummarySource,
)
from confidant.chat.memory import TurnMemoryService
from confidant.chat.service import ChatService, TurnPolicy
from confidant.jobs import InProcessJobBus
from confidant.jobs.extractor import Extractor
from confidant.jobs.service import JobDeps, JobService, job_handlers, sweep_outbox
from confidant.jobs.store import JobStore
from confidant.ports import Embedder, IdentityVerifier, JobBus, WisdomIndex
from confidant.sessions.records import TailPolicy
from confidant.sessions.service import ConfidantSessionService
from confidant.sessions.store import SessionStore
from confidant.settings import Settings
from confidant.warmup import warm_up

logger = logging.getLogger(__name__)


@dataclass
class Runtime:
    settings: Settings
    store: SessionStore
    sessions: ConfidantSessionService
    chat: ChatService
    identity: IdentityVerifier
    jobs: JobBus
    job_store: JobStore
    job_service: JobService
    _sweeper: asyncio.Task[None] | None = None

    async def sweep(self) -> dict[str, int]:
        """Republish what the outbox still holds (the embedded loop)."""
        return await run_sweep(self.settings, self.job_store, self.jobs, self.job_service.kinds)

    def start_sweeper(self) -> None:
        """Embedded default: sweep at start and then periodically, on the running loop."""
        if self._sweeper is None and self.settings.sweep_interval_s > 0:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever())

    async def _sweep_forever(self) -> None:
        while True:
            try:
                await self.sweep()
            except Exception:
                logger.exception("the in-process outbox sweep failed")
            await asyncio.sleep(self.settings.sweep_interval_s)

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self.jobs.close()
        await self.store.close()


def _store(settings: Settings) -> SessionStore:
    policy = TailPolicy(
        window=settings.window_events, tool_invocations=settings.window_tool_invocations
    )
    if settings.store == "firestore":
        from google.cloud import firestore

        from confidant.sessions.firestore_store import FirestoreSessionStore

        client = firestore.AsyncClient(
            project=settings.project_id, database=settings.firestore_database
        )
        return FirestoreSessionStore(client, policy=policy)
    from confidant.sessions.sqlite_store import SqliteSessionStore

    return SqliteSessionStore(settings.sqlite_path, policy=policy)


def _jobs(settings: Settings) -> JobBus:
    if settings.jobs == "pubsub":
        from confidant.jobs import PubSubJobBus

        return PubSubJobBus(
            settings.project_id,
            settings.pubsub_topic_prefix,
            timeout_s=settings.job_publish_timeout_s,
        )
    return InProcessJobBus()


def _identity(settings: Settings) -> IdentityVerifier:
    from confidant.identity import FirebaseTokenVerifier, HeaderIdentityVerifier

    if settings.auth == "firebase":
        assert settings.firebase_project_id  # checked by Settings
        return FirebaseTokenVerifier(settings.firebase_project_id, settings.jwks_url)
    return HeaderIdentityVerifier()


def _wisdom(settings: Settings) -> WisdomIndex:
    if settings.wisdom == "vertex":
        raise NotImplementedError(
            "the Vertex AI Vector Search adapter is not built yet; use CONFIDANT_WISDOM=local"
        )
    from confidant.wisdom.local_index import LocalWisdomIndex

    return LocalWisdomIndex()


def _embedder(settings: Settings) -> Embedder:
    from confidant.embeddings import HashedEmbedder

    return HashedEmbedder()


def _job_store(store: SessionStore) -> JobStore:
    from confidant.sessions.firestore_store import FirestoreSessionStore

    if isinstance(store, FirestoreSessionStore):
        from confidant.jobs.firestore_store import FirestoreJobStore

        return FirestoreJobStore(store.client)
    from confidant.jobs.sqlite_store import SqliteJobStore

    return SqliteJobStore(store)  # type: ignore[arg-type]


def _context_sources(
    settings: Settings, store: SessionStore, job_store: JobStore, embedder: Embedder
) -> dict[str, ContextSource]:
    """Every context source an app may declare (AppSpec.context), on the configured adapters."""
    return {
        MEMORIES: RecentMemoriesSource(store),
        SUMMARY: SummarySource(job_store),
        EMOTIONS: EmotionsSource(job_store),
        MEMORY_HITS: MemoryHitsSource(job_store, embedder),
    }


def build_runtime(
    settings: Settings, *, model: BaseLlm | None = None, job_model: BaseLlm | None = None
) -> Runtime:
    """Wire the process. `model` replaces the configured chat model (tests drive a scripted
    model); the job extractors use `job_model`, else the configured model."""
    from confidant.models.factory import build_model

    store = _store(settings)
    sessions = ConfidantSessionService(store, event_cache_size=settings.event_cache_size)
    jobs = _jobs(settings)
    embedder = _embedder(settings)
    configured = build_model(settings) if model is None or job_model is None else None
    deps = AgentDeps(model=model or configured, wisdom=_wisdom(settings), embedder=embedder)
    job_store = _job_store(store)
    job_service = JobService(
        JobDeps(job_store, store, embedder, Extractor(job_model or configured)),
        deadline_s=settings.job_deadline_s,
    )
    if isinstance(jobs, InProcessJobBus):
        # One job service, two transports: the embedded bus runs the same handlers.
        for kind in job_service.kinds:
            jobs.register(kind, job_service.run_for_bus)
    chat = ChatService(
        sessions=sessions,
        store=store,
        deps=deps,
        jobs=jobs,
        policy=TurnPolicy(
            busy_policy=settings.busy_policy,
            busy_wait_s=settings.busy_wait_s,
            lease_ttl_s=settings.lease_ttl_s,
        ),
        context_sources=_context_sources(settings, store, job_store, embedder),
        memory=TurnMemoryService(store, embedder=embedder, search=job_store),
    )
    return Runtime(
        settings, store, sessions, chat, _identity(settings), jobs, job_store, job_service
    )


async def run_sweep(
    settings: Settings, store: JobStore, bus: JobBus, kinds: tuple[str, ...]
) -> dict[str, int]:
    report = await sweep_outbox(
        store,
        bus,
        kinds,
        limit=settings.sweep_limit,
        created_before=time.time() - settings.sweep_grace_s,
        max_sweeps=settings.sweep_max_republish,
    )
    return {"republished": report.republished, "failed": report.failed}


@dataclass
class Sweeper:
    """What the `sweep` target needs: the outbox and the bus (no model, no agent tree)."""

    settings: Settings
    store: JobStore
    jobs: JobBus

    async def sweep(self) -> dict[str, int]:
        return await run_sweep(self.settings, self.store, self.jobs, tuple(job_handlers()))


_sweeper: Sweeper | None = None


def get_sweeper() -> Sweeper:
    """The process's sweeper, built on first use (the `sweep` target)."""
    global _sweeper
    if _sweeper is None:
        settings = Settings()
        _sweeper = Sweeper(settings, _job_store(_store(settings)), _jobs(settings))
    return _sweeper


_runtime: Runtime | None = None
_runtime_lock = asyncio.Lock()


async def get_runtime() -> Runtime:
    """The process's runtime, built on first use from the environment (never at import)."""
    global _runtime
    if _runtime is None:
        async with _runtime_lock:
            if _runtime is None:
                runtime = build_runtime(Settings())
                await warm_up(runtime.chat.deps, runtime.settings.default_app)
                if runtime.settings.jobs == "inprocess":
                    runtime.start_sweeper()
                _runtime = runtime
    return _runtime
