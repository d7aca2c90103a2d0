"""Ports: the interfaces the services and agents depend on. Adapters live beside them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal, Protocol, get_args

from pydantic import BaseModel, Field

# An integer a store can hold: Firestore and SQLite integers are 64-bit, so a larger one from a
# client is a 400 at the edge rather than an OverflowError in the store (a 500).
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


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


class DailyUsage(BaseModel):
    """One user's counters for one UTC day (`day` is YYYY-MM-DD)."""

    day: str
    turns: int = 0
    tokens: int = 0


class UsageLedger(Protocol):
    """Per-user daily usage, counted atomically (Firestore: a document per user per day; the
    embedded store: a row). Quota decisions are the caller's; the ledger only counts."""

    async def admit(
        self, user_id: str, day: str, *, max_turns: int | None, max_tokens: int | None
    ) -> tuple[bool, DailyUsage]:
        """Count one turn if the day's turns stay within `max_turns` and its tokens are below
        `max_tokens` (None: no limit); (admitted, the day's usage after the decision)."""
        ...

    async def release_turn(self, user_id: str, day: str) -> None:
        """Take back one admitted turn that never started (e.g. its session was busy)."""
        ...

    async def charge_tokens(self, user_id: str, day: str, tokens: int) -> None: ...

    async def usage(self, user_id: str, day: str) -> DailyUsage: ...

    async def delete_user(self, user_id: str, *, keep_day: str | None = None) -> int:
        """Erase the user's days, except `keep_day`'s counters (today's: erasing them would
        reset the quota); how many records were removed."""
        ...

    async def close(self) -> None: ...


class StreamHead(BaseModel):
    """One turn's persisted UI message stream: where it stands (the parts are stored beside it).

    `status` is `active` while the turn streams, `finished` after its `finish` part, `failed`
    after an `error` part or when the stream ended without either. `part_count` counts the parts
    stored (known when the stream ends); `truncated` says the log stopped storing parts (its
    bounds, or a failed write), so its parts are not the whole reply.
    """

    turn_id: str
    status: Literal["active", "finished", "failed"] = "active"
    started_at: float
    expire_at: float  # every document of the turn expires then (Firestore's TTL policy)
    part_count: int = 0
    truncated: bool = False


class StreamLog(Protocol):
    """The parts of each turn's UI message stream, persisted as they are produced, so that a
    client that lost its connection can resume the same reply from any instance (SQLite
    embedded, Firestore in the cloud). Keys are session keys (`confidant.sessions.records`);
    the records live with the session's, so deleting a session or a user deletes them too."""

    async def save(
        self, key: Any, head: StreamHead, first: int, parts: Sequence[str], *, write_head: bool
    ) -> None:
        """One atomic write: the head when `write_head` (replaced whole: at the stream's start
        and end only, so no document is written more than twice) and, when `parts` is not
        empty, a new batch of the turn's encoded parts (JSON text each) from index `first`."""
        ...

    async def latest(self, key: Any) -> StreamHead | None:
        """The session's most recent stream (expired ones included: callers check)."""
        ...

    async def parts(self, key: Any, turn_id: str, *, first: int) -> list[str]:
        """The stored parts of a turn from index `first` (a batch boundary: 0, or a count
        of parts read before) to the last one stored."""
        ...
