"""`confidant-ingest`: a corpus → chunks → embeddings → the index, changing only what changed.

Chunks are keyed by a content hash (confidant/wisdom/chunking.py), so the plan is a set
difference: chunks whose id the index lacks are embedded and upserted; ids the index holds
that the corpus no longer yields (removed or edited passages) are removed, after the upserts,
so a passage being edited is never missing. An unchanged corpus plans nothing. `--dry-run`
prints the plan and touches nothing.

Targets:
* `vertex`: Vertex AI Vector Search (stream upserts to CONFIDANT_VECTOR_SEARCH_INDEX), with
  embeddings from Vertex AI and the list of datapoints kept in Firestore (manifest.py).
* `local`: a JSONL file of chunk records and vectors from the configured embedder (the
  offline hashed one by default): what the cloud would receive, inspectable, no account.

Embedding requests are batched, paced to `--rpm` requests a minute, and retried on 429/5xx
with exponential backoff (google-genai's retry options); index writes are retried likewise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

import httpx
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from confidant.ports import Embedder
from confidant.wisdom.chunking import Chunk, chunk_corpus
from confidant.wisdom.corpus import DEFAULT_CORPUS_PATH, load_corpus

if TYPE_CHECKING:
    from confidant.wisdom.manifest import FirestoreManifest
    from confidant.wisdom.vector_search import VectorSearchClient

DEFAULT_BATCH_SIZE = 32
DEFAULT_RPM = 300
DEFAULT_LOCAL_PATH = Path(".data/wisdom_index.jsonl")
WRITE_ATTEMPTS = 5


class ChunkSink(Protocol):
    """Where chunks go: knows what it holds, takes upserts and removals."""

    async def existing_ids(self) -> set[str]: ...

    async def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None: ...

    async def remove(self, ids: Sequence[str]) -> None: ...


@dataclass
class IngestPlan:
    upsert: list[Chunk] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    unchanged: int = 0

    @property
    def empty(self) -> bool:
        return not self.upsert and not self.remove

    def describe(self) -> str:
        lines = [
            f"{len(self.upsert)} chunk(s) to upsert, {len(self.remove)} to remove, "
            f"{self.unchanged} unchanged"
        ]
        lines += [f"  + {chunk.id}  {chunk.title}" for chunk in self.upsert]
        lines += [f"  - {datapoint_id}" for datapoint_id in sorted(self.remove)]
        return "\n".join(lines)


def plan(chunks: Sequence[Chunk], existing: set[str]) -> IngestPlan:
    wanted = {chunk.id for chunk in chunks}
    return IngestPlan(
        upsert=[chunk for chunk in chunks if chunk.id not in existing],
        remove=sorted(existing - wanted),
        unchanged=len(wanted & existing),
    )


class RateLimiter:
    """Spaces request starts evenly: at most `per_minute` a minute (0 = unlimited)."""

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._interval = 60.0 / per_minute if per_minute > 0 else 0.0
        self._clock = clock
        self._next = 0.0

    async def acquire(self, requests: int = 1) -> None:
        now = self._clock()
        start = max(now, self._next)
        self._next = start + self._interval * requests
        if start > now:
            await asyncio.sleep(start - now)


def _retryable(exc: BaseException) -> bool:
    from confidant.wisdom.vector_search import VectorSearchError

    if isinstance(exc, VectorSearchError):
        return exc.retryable
    return isinstance(exc, httpx.TransportError)


async def with_retries(
    call: Callable[[], Any], *, attempts: int = WRITE_ATTEMPTS, backoff_s: float = 1.0
) -> None:
    """Retries an index write on 429, 5xx and transport errors, with jittered backoff."""
    async for attempt in AsyncRetrying(
        retry=retry_if_exception(_retryable),
        stop=stop_after_attempt(attempts),
        wait=wait_exponential_jitter(initial=backoff_s, max=30 * backoff_s, jitter=backoff_s),
        reraise=True,
    ):
        with attempt:
            await call()


async def ingest(
    sink: ChunkSink,
    embedder: Embedder,
    *,
    corpus_path: Path = DEFAULT_CORPUS_PATH,
    dry_run: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    requests_per_minute: float = DEFAULT_RPM,
    progress: bool = True,
    out: TextIO | None = None,
) -> IngestPlan:
    """Brings `sink` in line with the corpus; returns what was (or, dry, would be) changed."""
    out = out or sys.stdout
    chunks = chunk_corpus(load_corpus(corpus_path))
    todo = plan(chunks, await sink.existing_ids())
    print(todo.describe() if dry_run else todo.describe().splitlines()[0], file=out)
    if dry_run or todo.empty:
        return todo
    from tqdm import tqdm

    limiter = RateLimiter(requests_per_minute)
    per_request = getattr(embedder, "batch_size", batch_size) or batch_size
    with tqdm(
        total=len(todo.upsert), unit="chunk", desc="embed+upsert", disable=not progress
    ) as bar:
        for start in range(0, len(todo.upsert), batch_size):
            batch = todo.upsert[start : start + batch_size]
            await limiter.acquire(math.ceil(len(batch) / per_request))
            vectors = await embedder.embed([c.embedding_text for c in batch], task="document")
            await sink.upsert(batch, vectors)
            bar.update(len(batch))
    if todo.remove:
        await sink.remove(todo.remove)
    print(f"done: {len(todo.upsert)} upserted, {len(todo.remove)} removed", file=out)
    return todo


class LocalFileSink:
    """A JSONL file of chunk records with their vectors (one line per chunk)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def _records(self) -> dict[str, dict[str, Any]]:
        if not self._path.exists():
            return {}
        lines = self._path.read_text(encoding="utf-8").splitlines()
        return {record["id"]: record for record in map(json.loads, filter(None, lines))}

    def _write(self, records: dict[str, dict[str, Any]]) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self._path.with_suffix(".tmp")
        with temporary.open("w", encoding="utf-8") as file:
            for record in sorted(records.values(), key=lambda r: r["id"]):
                file.write(json.dumps(record, ensure_ascii=False) + "\n")
        temporary.replace(self._path)  # atomic: a crash leaves the old file

    async def existing_ids(self) -> set[str]:
        return set(self._records())

    async def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
        records = self._records()
        for chunk, vector in zip(chunks, vectors, strict=True):
            records[chunk.id] = {"id": chunk.id, **chunk.metadata(), "vector": list(vector)}
        self._write(records)

    async def remove(self, ids: Sequence[str]) -> None:
        records = self._records()
        for datapoint_id in ids:
            records.pop(datapoint_id, None)
        self._write(records)


class VectorSearchSink:
    """Stream updates to a Vector Search index; its contents listed by a Firestore manifest."""

    def __init__(
        self,
        client: VectorSearchClient,
        manifest: FirestoreManifest,
        *,
        index: str,
        api_url: str,
        backoff_s: float = 1.0,
    ) -> None:
        self._client = client
        self._manifest = manifest
        self._index = index
        self._api_url = api_url
        self._backoff_s = backoff_s

    async def existing_ids(self) -> set[str]:
        return await self._manifest.ids()

    async def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
        from confidant.wisdom.vertex import datapoint_for

        datapoints = [datapoint_for(c, v) for c, v in zip(chunks, vectors, strict=True)]
        await with_retries(
            lambda: self._client.upsert_datapoints(
                api_url=self._api_url, index=self._index, datapoints=datapoints
            ),
            backoff_s=self._backoff_s,
        )
        await self._manifest.add(chunks)

    async def remove(self, ids: Sequence[str]) -> None:
        await with_retries(
            lambda: self._client.remove_datapoints(
                api_url=self._api_url, index=self._index, ids=list(ids)
            ),
            backoff_s=self._backoff_s,
        )
        await self._manifest.remove(ids)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="confidant-ingest",
        description="Chunk, embed and upsert a wisdom corpus; remove what left it.",
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS_PATH, help="JSONL corpus")
    parser.add_argument("--target", choices=["vertex", "local"], default="local")
    parser.add_argument(
        "--local-path", type=Path, default=DEFAULT_LOCAL_PATH, help="file of the local target"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    parser.add_argument("--rpm", type=float, default=DEFAULT_RPM, help="embedding requests/min")
    parser.add_argument("--no-progress", action="store_true")
    return parser


async def run(args: argparse.Namespace, *, out: TextIO | None = None) -> IngestPlan:
    """Builds the sink and embedder the arguments and settings name, then ingests."""
    from confidant.settings import ConfigurationError, Settings

    settings = Settings()
    embedder: Embedder
    sink: ChunkSink
    if args.target == "local":
        if settings.embeddings == "vertex":
            from confidant.embeddings.vertex import build_vertex_embedder

            embedder = build_vertex_embedder(settings, attempts=5, timeout_s=60.0)
        else:
            from confidant.embeddings import HashedEmbedder

            embedder = HashedEmbedder()
        sink = LocalFileSink(args.local_path)
        return await _ingest(sink, embedder, args, out)
    if not settings.vector_search_index:
        raise ConfigurationError("--target vertex needs CONFIDANT_VECTOR_SEARCH_INDEX")
    from google.cloud import firestore

    from confidant.embeddings.vertex import build_vertex_embedder
    from confidant.wisdom.manifest import FirestoreManifest
    from confidant.wisdom.vector_search import VectorSearchClient, regional_api_url

    client = VectorSearchClient(timeout_s=60.0)
    manifest = FirestoreManifest(
        firestore.AsyncClient(project=settings.project_id, database=settings.firestore_database),
        settings.vector_search_index,
    )
    sink = VectorSearchSink(
        client,
        manifest,
        index=settings.vector_search_index,
        api_url=settings.vector_search_api_url or regional_api_url(settings.vector_search_index),
    )
    # Ingestion is off the request path: a longer timeout, and retries of 429/5xx.
    embedder = build_vertex_embedder(settings, attempts=5, timeout_s=60.0)
    try:
        return await _ingest(sink, embedder, args, out)
    finally:
        await client.close()


async def _ingest(
    sink: ChunkSink, embedder: Embedder, args: argparse.Namespace, out: TextIO | None
) -> IngestPlan:
    return await ingest(
        sink,
        embedder,
        corpus_path=args.corpus,
        dry_run=args.dry_run,
        batch_size=args.batch_size,
        requests_per_minute=args.rpm,
        progress=not args.no_progress,
        out=out,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Console script `confidant-ingest`; exit status 0 on success, 2 on bad settings."""
    from confidant.settings import ConfigurationError

    args = _parser().parse_args(argv)
    try:
        asyncio.run(run(args))
    except (ConfigurationError, ValueError) as exc:
        print(f"confidant-ingest: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
