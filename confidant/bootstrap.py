"""The composition root: settings → adapters → services. Built once per process."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.adk.artifacts import BaseArtifactService
from google.adk.models import BaseLlm

from agents.deps import AgentDeps, TaskflowLimits
from agents.safety import CrisisClassifier, CrisisDetector
from agents.safety.ngram import load_model
from confidant.agentconfig import AGENT_CONFIG, AgentConfigService, AgentConfigSource
from confidant.agentconfig.store import AgentConfigStore
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
from confidant.effects import EffectLedger
from confidant.http.limits import RequestLimits
from confidant.jobs import InProcessJobBus
from confidant.jobs.extractor import Extractor
from confidant.jobs.service import JobDeps, JobService, job_handlers, sweep_outbox
from confidant.jobs.store import JobStore
from confidant.mcptools import McpToolsetPool
from confidant.models.retry import RetryingLlm
from confidant.ports import (
    Embedder,
    IdentityVerifier,
    JobBus,
    StreamLog,
    UsageLedger,
    WisdomIndex,
)
from confidant.profiles.source import PROFILE, ProfileSource
from confidant.quota.gate import QuotaGate
from confidant.relationship.context import (
    PERSON,
    SELF_PROFILE,
    PersonSource,
    SelfProfileSource,
)
from confidant.relationship.jobs import SERVICE_NAME as RELATIONSHIP_SERVICE
from confidant.relationship.service import RelationshipService
from confidant.relationship.store import RelationshipStore
from confidant.sessions.records import TailPolicy
from confidant.sessions.service import ConfidantSessionService
from confidant.sessions.store import SessionStore
from confidant.sessions.turn_queue import TurnQueue
from confidant.settings import Settings
from confidant.streaming.resume import StreamResumer
from confidant.streaming.stream_log import StreamLogPolicy, StreamLogWriter
from confidant.tasks import TaskWriter
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
    relationship: RelationshipService | None = None  # persons, self-profile, proposals
    artifacts: BaseArtifactService | None = None
    agent_configs: AgentConfigService | None = None  # the agent registry (issue 12)
    mcp: McpToolsetPool | None = None  # MCP connections per user (issue 12)
    limits: RequestLimits | None = None  # request rate limits (issue 14)
    resumer: StreamResumer | None = None  # resumable streams (issue 14)
    _sweeper: asyncio.Task[None] | None = None

    async def erase_user(self, user_id: str) -> int:
        """Everything the user owns: artifacts, effect records, then sessions and the rest."""
        removed = 0
        if self.artifacts is not None:
            from confidant.artifacts import erase_user_artifacts

            removed += await erase_user_artifacts(self.artifacts, self.store, user_id)
        if self.chat.deps.effects is not None:
            removed += await self.chat.deps.effects.delete_user(user_id)
        if self.relationship is not None:  # its own table in the embedded store
            removed += await self.relationship.store.delete_user(user_id)
        if self.chat.quota is not None:
            removed += await self.chat.quota.delete_user(user_id)
        return removed + await self.store.delete_user(user_id)

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
        for closable in (self.chat.deps.tasks, self.chat.deps.effects):
            if closable is not None:
                await closable.close()
        await self.store.close()
        if self.agent_configs is not None:
            await self.agent_configs.close()
        if self.mcp is not None:
            await self.mcp.close()
        if self.relationship is not None:
            await self.relationship.store.close()
        if self.chat.quota is not None:
            await self.chat.quota.ledger.close()


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


def _firestore_client(store: SessionStore) -> Any | None:
    """The Firestore store's client, or None for the embedded store, which is told apart without
    importing the Firestore library (about 0.5 s of CPU at start-up, issue 11 item 6)."""
    from confidant.sessions.sqlite_store import SqliteSessionStore

    if isinstance(store, SqliteSessionStore):
        return None
    from confidant.sessions.firestore_store import FirestoreSessionStore

    assert isinstance(store, FirestoreSessionStore)
    return store.client


def _relationship_store(settings: Settings, store: SessionStore) -> RelationshipStore:
    """Beside the session store: the same Firestore client, or a SQLite file next to its file
    (a file of its own: two connections opening one new file at once can lock each other out)."""
    client = _firestore_client(store)
    if client is not None:
        from confidant.relationship.firestore_store import FirestoreRelationshipStore

        return FirestoreRelationshipStore(client)
    from confidant.relationship.sqlite_store import SqliteRelationshipStore, sibling_path

    return SqliteRelationshipStore(sibling_path(settings.sqlite_path))


def _agent_config_store(settings: Settings, store: SessionStore) -> AgentConfigStore:
    """Beside the session store, as the relationship store is."""
    client = _firestore_client(store)
    if client is not None:
        from confidant.agentconfig.firestore_store import FirestoreAgentConfigStore

        return FirestoreAgentConfigStore(client)
    from confidant.agentconfig.sqlite_store import SqliteAgentConfigStore
    from confidant.sqlite import sibling_path

    return SqliteAgentConfigStore(sibling_path(settings.sqlite_path, "agents"))


def _usage_ledger(settings: Settings, store: SessionStore) -> UsageLedger:
    """Beside the session store, as the relationship store is."""
    client = _firestore_client(store)
    if client is not None:
        from confidant.quota.firestore_ledger import FirestoreUsageLedger

        return FirestoreUsageLedger(client)
    from confidant.quota.sqlite_ledger import SqliteUsageLedger
    from confidant.sqlite import sibling_path

    return SqliteUsageLedger(sibling_path(settings.sqlite_path, "usage"))


def _stream_log(settings: Settings, store: SessionStore) -> StreamLog | None:
    """Each turn's stream parts, beside its session (the same database and client)."""
    if settings.stream_retention_s <= 0:
        return None
    client = _firestore_client(store)
    if client is not None:
        from confidant.streaming.firestore_log import FirestoreStreamLog

        return FirestoreStreamLog(client)
    from confidant.sessions.sqlite_store import SqliteSessionStore
    from confidant.streaming.sqlite_log import SqliteStreamLog

    assert isinstance(store, SqliteSessionStore)
    return SqliteStreamLog(store)


def _stream_policy(settings: Settings) -> StreamLogPolicy:
    return StreamLogPolicy(
        retention_s=settings.stream_retention_s,
        flush_s=settings.stream_flush_s,
        max_parts=settings.stream_max_parts,
        max_bytes=settings.stream_max_bytes,
        poll_s=settings.stream_poll_s,
    )


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


def _wisdom(settings: Settings, embedder: Embedder) -> WisdomIndex:
    if settings.wisdom == "vertex":
        from confidant.wisdom.vertex import build_vertex_wisdom

        return build_vertex_wisdom(settings, embedder)
    from confidant.wisdom.local_index import LocalWisdomIndex

    return LocalWisdomIndex()


def _embedder(settings: Settings) -> Embedder:
    if settings.embeddings == "vertex":
        from confidant.embeddings.vertex import build_vertex_embedder

        return build_vertex_embedder(settings)
    from confidant.embeddings import HashedEmbedder

    return HashedEmbedder()


# taskflow (issue 12)
def _tasks(settings: Settings) -> TaskWriter:
    if settings.tasks == "notion":
        from confidant.tasks.notion import NotionTaskWriter

        assert settings.notion_token and settings.notion_database_id  # checked by Settings
        return NotionTaskWriter(
            token=settings.notion_token,
            database_id=settings.notion_database_id,
            base_url=settings.notion_base_url,
            version=settings.notion_version,
            max_attempts=settings.notion_max_attempts,
        )
    from confidant.tasks.local import LocalTaskWriter

    return LocalTaskWriter(settings.sqlite_path)


def _effects(settings: Settings, store: SessionStore) -> EffectLedger:
    """The exactly-once ledger lives beside the sessions (same database, own records)."""
    if settings.store == "firestore":
        from confidant.effects.firestore_ledger import FirestoreEffectLedger
        from confidant.sessions.firestore_store import FirestoreSessionStore

        assert isinstance(store, FirestoreSessionStore)
        return FirestoreEffectLedger(store.client)  # the process's one Firestore client
    from confidant.effects.sqlite_ledger import SqliteEffectLedger

    return SqliteEffectLedger(settings.sqlite_path)


def _artifacts(settings: Settings) -> BaseArtifactService | None:
    """ADK's own artifact services: Cloud Storage, or files beside the embedded store."""
    kind = settings.artifacts
    if kind == "auto":
        local = "local" if settings.store == "sqlite" else "none"
        kind = "gcs" if settings.artifacts_bucket else local
    if kind == "gcs":
        from google.adk.artifacts import GcsArtifactService

        assert settings.artifacts_bucket  # checked by Settings
        # One storage client per process (the service holds it); ADK runs its calls in threads.
        return GcsArtifactService(settings.artifacts_bucket, project=settings.project_id)
    if kind == "none":
        return None
    from google.adk.artifacts import FileArtifactService

    root = settings.artifacts_dir or str(Path(settings.sqlite_path).parent / "artifacts")
    return FileArtifactService(root)


def _job_store(store: SessionStore) -> JobStore:
    client = _firestore_client(store)
    if client is not None:
        from confidant.jobs.firestore_store import FirestoreJobStore

        return FirestoreJobStore(client)
    from confidant.jobs.sqlite_store import SqliteJobStore

    return SqliteJobStore(store)  # type: ignore[arg-type]


def _turn_queue(store: SessionStore) -> TurnQueue:
    client = _firestore_client(store)
    if client is not None:
        from confidant.sessions.firestore_turn_queue import FirestoreTurnQueue

        return FirestoreTurnQueue(client)
    from confidant.sessions.sqlite_turn_queue import SqliteTurnQueue

    return SqliteTurnQueue(store)  # type: ignore[arg-type]


def _context_sources(
    settings: Settings,
    store: SessionStore,
    job_store: JobStore,
    embedder: Embedder,
    relationship: RelationshipService,
) -> dict[str, ContextSource]:
    """Every context source an app may declare (AppSpec.context), on the configured adapters."""
    return {
        MEMORIES: RecentMemoriesSource(store),
        PERSON: PersonSource(relationship),
        SELF_PROFILE: SelfProfileSource(relationship),
        SUMMARY: SummarySource(job_store),
        EMOTIONS: EmotionsSource(job_store),
        MEMORY_HITS: MemoryHitsSource(job_store, embedder),
        PROFILE: ProfileSource(store),
    }


def _crisis_classifier(settings: Settings, model: BaseLlm) -> CrisisClassifier | None:
    if not settings.crisis_classifier:
        return None
    # The bare model: a retry would only eat the classifier's short timeout.
    inner = model.inner if isinstance(model, RetryingLlm) else model
    return CrisisClassifier(inner, timeout_s=settings.crisis_classifier_timeout_s)


def _crisis_detector(settings: Settings) -> CrisisDetector:
    """The process's one crisis detector: the lexicon, and the n-gram layer when the setting asks
    for it. The guard, the relationship router (both through the deps), the quota gate and the
    rate limits all ask this one, so none of them can refuse or route a message the guard would
    answer as a crisis."""
    return CrisisDetector(model=load_model() if settings.crisis_model else None)


def configure_observability(settings: Settings) -> None:
    """Logs and traces of this process, as the settings ask (once, before serving)."""
    from confidant.observability import configure_logging, configure_tracing

    configure_logging(settings)
    configure_tracing(settings)


def build_runtime(
    settings: Settings, *, model: BaseLlm | None = None, job_model: BaseLlm | None = None
) -> Runtime:
    """Wire the process. `model` replaces the configured chat model (tests drive a scripted
    model); the job extractors use `job_model`, else the configured model."""
    from confidant.models.factory import ModelCatalog, build_model

    store = _store(settings)
    relationship = RelationshipService(_relationship_store(settings, store))
    sessions = ConfidantSessionService(store, event_cache_size=settings.event_cache_size)
    jobs = _jobs(settings)
    embedder = _embedder(settings)
    configured = build_model(settings) if model is None or job_model is None else None
    default_model = model or configured
    assert default_model is not None
    agent_configs = AgentConfigService(
        _agent_config_store(settings, store),
        ttl_s=settings.agent_config_ttl_s,
        models=settings.agent_models.selectable,
        allow_stdio=settings.mcp_stdio_allowed,
    )
    mcp = McpToolsetPool(
        max_toolsets=settings.mcp_max_toolsets,
        breaker_failures=settings.mcp_breaker_failures,
        breaker_cooldown_s=settings.mcp_breaker_cooldown_s,
        tool_list_ttl_s=settings.mcp_tool_list_ttl_s,
        allow_stdio=settings.mcp_stdio_allowed,
    )
    crisis_detector = _crisis_detector(settings)
    deps = AgentDeps(
        model=default_model,
        wisdom=_wisdom(settings, embedder),
        embedder=embedder,
        models=ModelCatalog(settings, default_model),
        crisis_classifier=_crisis_classifier(settings, default_model),
        crisis_detector=crisis_detector,
        protocol_timeout_s=settings.protocol_timeout_s,
        relationship=relationship,
        tasks=_tasks(settings),
        effects=_effects(settings, store),
        taskflow_limits=TaskflowLimits(
            max_detail_rounds=settings.taskflow_max_detail_rounds,
            max_classification_corrections=settings.taskflow_max_classification_corrections,
        ),
        mcp=mcp,
    )
    artifacts = _artifacts(settings)
    job_store = _job_store(store)
    job_service = JobService(
        JobDeps(
            job_store,
            store,
            embedder,
            Extractor(job_model or configured or default_model),
            services={RELATIONSHIP_SERVICE: relationship},
        ),
        deadline_s=settings.job_deadline_s,
    )
    if isinstance(jobs, InProcessJobBus):
        # One job service, two transports: the embedded bus runs the same handlers.
        for kind in job_service.kinds:
            jobs.register(kind, job_service.run_for_bus)
    stream_log = _stream_log(settings, store)
    stream_policy = _stream_policy(settings)
    chat = ChatService(
        sessions=sessions,
        artifacts=artifacts,
        store=store,
        deps=deps,
        jobs=jobs,
        policy=TurnPolicy(
            busy_policy=settings.busy_policy,
            busy_wait_s=settings.busy_wait_s,
            busy_poll_s=settings.busy_poll_s,
            lease_ttl_s=settings.lease_ttl_s,
            store_timeout_s=settings.store_timeout_s,
            max_llm_calls=settings.max_llm_calls_per_turn,
            max_tool_calls=settings.max_tool_calls_per_turn,
            commit_timeout_s=settings.commit_timeout_s,
        ),
        context_sources={
            **_context_sources(settings, store, job_store, embedder, relationship),
            AGENT_CONFIG: AgentConfigSource(agent_configs),
        },
        memory=TurnMemoryService(store, embedder=embedder, search=job_store),
        quota=QuotaGate(
            _usage_ledger(settings, store),
            store,
            settings.tiers,
            settings.default_tier,
            crisis_detector=crisis_detector,
        ),
        streams=StreamLogWriter(stream_log, stream_policy) if stream_log else None,
        turn_queue=_turn_queue(store),
    )
    return Runtime(
        settings=settings,
        store=store,
        sessions=sessions,
        chat=chat,
        identity=_identity(settings),
        jobs=jobs,
        job_store=job_store,
        job_service=job_service,
        relationship=relationship,
        artifacts=artifacts,
        agent_configs=agent_configs,
        mcp=mcp,
        limits=RequestLimits.from_settings(settings, crisis_detector),
        resumer=StreamResumer(stream_log, store, stream_policy),
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
                settings = Settings()
                configure_observability(settings)
                runtime = build_runtime(settings)
                await warm_up(runtime.chat.deps, runtime.settings.default_app)
                if runtime.settings.jobs == "inprocess":
                    runtime.start_sweeper()
                _runtime = runtime
    return _runtime
