"""Ports: the interfaces the services and agents depend on. Adapters live beside them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol, get_args

from pydantic import BaseModel, Field


class WisdomPassage(BaseModel):
    """One retrieved piece of wisdom."""

    id: str
    title: str
    text: str
    source: str = ""
    locale: str = "en"
    score: float = 0.0


# The themes a wisdom passage is filed under: a closed vocabulary, so that indexes can restrict
# on it and the coach's tool can offer it as an enum.
WisdomTopic = Literal[
    "procrastination",
    "perfectionism",
    "fear_of_failure",
    "self_compassion",
    "inner_critic",
    "inner_parts",
    "habits",
    "grief",
    "anger",
    "sleep",
    "relationships",
    "values",
    "acceptance",
    "reflection",
]
WISDOM_TOPICS: tuple[str, ...] = get_args(WisdomTopic)


class WisdomIndex(Protocol):
    """Retrieval of wisdom passages (local index embedded; Vertex AI Vector Search in cloud).

    Passages in `locale` are preferred (the cloud index restricts to it); `topic`, one of
    WISDOM_TOPICS, restricts the candidates. Callers pass `topic` only when they have one.
    """

    async def search(
        self, query: str, *, top_k: int = 3, locale: str | None = None, topic: str | None = None
    ) -> list[WisdomPassage]: ...


EmbeddingTask = Literal["query", "document"]


class Embedder(Protocol):
    """Text → unit-length vectors; queries and documents may be embedded differently."""

    @property
    def dimensions(self) -> int: ...

    async def embed(self, texts: Sequence[str], *, task: EmbeddingTask) -> list[list[float]]: ...


class MemoryRecord(BaseModel):
    """A long-term memory the user owns (integration crystals, extracted facts)."""

    id: str
    user_id: str
    app: str
    kind: str
    text: str
    data: dict[str, Any] = Field(default_factory=dict)
    session_id: str | None = None
    created_at: datetime
    # Unit-length document embedding (memory search); never part of API output.
    embedding: list[float] | None = Field(default=None, exclude=True, repr=False)


class JobRecord(BaseModel):
    """A post-turn job: written in the turn's commit (outbox), then published."""

    job_id: str
    kind: str
    user_id: str
    app: str
    session_id: str
    turn: int
    payload: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime


class JobBus(Protocol):
    """Hands committed jobs to their workers (in-process queue embedded; Pub/Sub in cloud)."""

    async def publish(self, jobs: Sequence[JobRecord]) -> None: ...

    async def close(self) -> None: ...


class Identity(BaseModel):
    """The verified caller."""

    user_id: str
    claims: dict[str, Any] = Field(default_factory=dict)


class IdentityVerifier(Protocol):
    """Resolves the caller from request headers; raises `AuthenticationError` when it cannot."""

    async def verify(self, headers: Mapping[str, str]) -> Identity: ...
