"""The composition root: settings → adapters → services. Built once per process."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from google.adk.models import BaseLlm

from agents.deps import AgentDeps
from confidant.agentconfig import AGENT_CONFIG, AgentConfigService, AgentConfigSource
from confidant.agentconfig.store import AgentConfigStore
from confidant.chat.context import MEMORIES, ContextSource, RecentMemoriesSource
from confidant.chat.service import ChatService, TurnPolicy
from confidant.mcptools import McpToolsetPool
from confidant.ports import Embedder, IdentityVerifier, JobBus, WisdomIndex
from confidant.relationship.context import (
    PERSON,
    SELF_PROFILE,
    PersonSource,
    SelfProfileSource,
)
from confidant.relationship.service import RelationshipService
from confidant.relationship.store import RelationshipStore
from confidant.sessions.records import TailPolicy
from confidant.sessions.service import ConfidantSessionService
from confidant.sessions.store import SessionStore
from confidant.settings import Settings
from confidant.warmup import warm_up


@dataclass
class Runtime:
    settings: Settings
    store: SessionStore
    sessions: ConfidantSessionService
    chat: ChatService
    identity: IdentityVerifier
    jobs: JobBus
    relationship: RelationshipService | None = None  # persons, self-profile, proposals
    agent_configs: AgentConfigService | None = None  # the agent registry (issue 12)
    mcp: McpToolsetPool | None = None  # MCP connections per user (issue 12)

    async def close(self) -> None:
        await self.jobs.close()
        await self.store.close()
        if self.agent_configs is not None:
            await self.agent_configs.close()
        if self.mcp is not None:
            await self.mcp.close()
        if self.relationship is not None:
            await self.relationship.store.close()


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


def _relationship_store(settings: Settings, store: SessionStore) -> RelationshipStore:
    """Beside the session store: the same Firestore client, or a SQLite file next to its file
    (a file of its own: two connections opening one new file at once can lock each other out)."""
    from confidant.sessions.firestore_store import FirestoreSessionStore

    if isinstance(store, FirestoreSessionStore):
        from confidant.relationship.firestore_store import FirestoreRelationshipStore

        return FirestoreRelationshipStore(store.client)
    from confidant.relationship.sqlite_store import SqliteRelationshipStore, sibling_path

    return SqliteRelationshipStore(sibling_path(settings.sqlite_path))


def _agent_config_store(settings: Settings, store: SessionStore) -> AgentConfigStore:
    """Beside the session store, as the relationship store is."""
    from confidant.sessions.firestore_store import FirestoreSessionStore

    if isinstance(store, FirestoreSessionStore):
        from confidant.agentconfig.firestore_store import FirestoreAgentConfigStore

        return FirestoreAgentConfigStore(store.client)
    from confidant.agentconfig.sqlite_store import SqliteAgentConfigStore
    from confidant.sqlite import sibling_path

    return SqliteAgentConfigStore(sibling_path(settings.sqlite_path, "agents"))


def _jobs(settings: Settings) -> JobBus:
    if settings.jobs == "pubsub":
        from confidant.jobs import PubSubJobBus

        return PubSubJobBus(settings.project_id, settings.pubsub_topic_prefix)
    from confidant.jobs import InProcessJobBus

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


def _context_sources(
    settings: Settings, store: SessionStore, relationship: RelationshipService
) -> dict[str, ContextSource]:
    """Every context source an app may declare (AppSpec.context), on the configured adapters."""
    return {
        MEMORIES: RecentMemoriesSource(store),
        PERSON: PersonSource(relationship),
        SELF_PROFILE: SelfProfileSource(relationship),
    }


def build_runtime(settings: Settings, *, model: BaseLlm | None = None) -> Runtime:
    """Wire the process. `model` replaces the configured one (tests drive a scripted model)."""
    from confidant.models.factory import ModelCatalog, build_model

    store = _store(settings)
    relationship = RelationshipService(_relationship_store(settings, store))
    sessions = ConfidantSessionService(store, event_cache_size=settings.event_cache_size)
    jobs = _jobs(settings)
    embedder = _embedder(settings)
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
    default_model = model or build_model(settings)
    deps = AgentDeps(
        model=default_model,
        wisdom=_wisdom(settings),
        embedder=embedder,
        models=ModelCatalog(settings, default_model),
        relationship=relationship,
        mcp=mcp,
    )
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
        context_sources={
            **_context_sources(settings, store, relationship),
            AGENT_CONFIG: AgentConfigSource(agent_configs),
        },
    )
    return Runtime(
        settings, store, sessions, chat, _identity(settings), jobs, relationship, agent_configs, mcp
    )


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
                _runtime = runtime
    return _runtime
