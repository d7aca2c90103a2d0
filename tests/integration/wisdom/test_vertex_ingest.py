"""Ingestion into Vector Search (the fake) with the manifest on the Firestore emulator."""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

import pytest
from google.cloud import firestore

from confidant.embeddings.vertex import VertexEmbedder
from confidant.wisdom.ingest import VectorSearchSink, ingest
from confidant.wisdom.manifest import FirestoreManifest
from confidant.wisdom.vector_search import VectorSearchClient
from confidant.wisdom.vertex import VertexWisdomIndex
from tests.conftest import TEST_PROJECT
from tests.integration.wisdom.conftest import (
    DEPLOYED_INDEX_ID,
    INDEX,
    INDEX_ENDPOINT,
    vertex_genai_client,
)
from tests.support.fake_gemini import error
from tests.support.fake_vertex import FakeVertex

pytestmark = pytest.mark.emulator


def _corpus(path: Path, passages: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in passages))
    return path


PASSAGES: list[dict[str, object]] = [
    {
        "id": "en-sleep-x",
        "title": "Stop trying to fall asleep",
        "text": "Sleep cannot be forced. Get up until drowsy.",
        "locale": "en",
        "topic": "sleep",
        "source": "test",
    },
    {
        "id": "zh-anger-x",
        "title": "愤怒指向边界",
        "text": "愤怒常常在提醒你，你在乎的东西被越界了。",
        "locale": "zh",
        "topic": "anger",
        "source": "test",
    },
]


async def test_ingest_upserts_changes_only_and_removes_what_left(
    vertex: FakeVertex,
    search_client: VectorSearchClient,
    firestore_emulator: str,
    tmp_path: Path,
) -> None:
    index_name = f"{INDEX}-{uuid.uuid4().hex[:8]}"  # a fresh manifest per test run
    manifest = FirestoreManifest(firestore.AsyncClient(project=TEST_PROJECT), index_name)
    sink = VectorSearchSink(
        search_client, manifest, index=index_name, api_url=vertex.base_url, backoff_s=0.01
    )
    embedder = VertexEmbedder(vertex_genai_client(vertex.base_url, attempts=3))
    corpus = _corpus(tmp_path / "corpus.jsonl", PASSAGES)

    async def run(**options: object) -> str:
        out = io.StringIO()
        await ingest(
            sink,
            embedder,
            corpus_path=corpus,
            progress=False,
            requests_per_minute=0,
            out=out,
            **options,  # type: ignore[arg-type]
        )
        return out.getvalue()

    # First run: a 429 on the embedding and a 503 on the upsert are both retried.
    vertex.enqueue(error(429), None, None, error(503))
    assert (await run()).startswith("2 chunk(s) to upsert, 0 to remove")
    upserts = [r for r in vertex.requests if r.method == "upsertDatapoints"]
    assert len(upserts) == 2 and upserts[-1].resource.endswith(index_name)
    stored = vertex.datapoints
    assert {d.split(".")[0] for d in stored} == {"en-sleep-x", "zh-anger-x"}
    sleep = next(d for k, d in stored.items() if k.startswith("en-sleep-x"))
    assert sleep["restricts"] == [
        {"namespace": "locale", "allowList": ["en"]},
        {"namespace": "topic", "allowList": ["sleep"]},
    ]
    assert sleep["crowdingTag"] == {"crowdingAttribute": "en-sleep-x"}
    assert sleep["embeddingMetadata"]["text"].startswith("Sleep cannot be forced")
    assert len(sleep["featureVector"]) == 768
    embeds = [r for r in vertex.requests if r.method == "predict"]
    assert {t for r in embeds for t in r.task_types} == {"RETRIEVAL_DOCUMENT"}
    assert await manifest.ids() == set(stored)

    # The ingested index answers the coach.
    index = VertexWisdomIndex(
        embedder,
        search_client,
        endpoint_url=vertex.base_url,
        index_endpoint=INDEX_ENDPOINT,
        deployed_index_id=DEPLOYED_INDEX_ID,
    )
    (hit,) = await index.search("can't fall asleep", top_k=3, locale="en")
    assert hit.id == "en-sleep-x" and hit.source == "test"

    # Unchanged corpus: nothing is embedded or written.
    vertex.reset()
    assert (await run()).startswith("0 chunk(s) to upsert, 0 to remove, 2 unchanged")
    assert vertex.requests == []

    # A dry run after removing a passage prints the removal and changes nothing...
    _corpus(corpus, PASSAGES[:1])
    dry = await run(dry_run=True)
    assert "0 chunk(s) to upsert, 1 to remove" in dry and "- zh-anger-x." in dry
    assert vertex.requests == [] and len(vertex.datapoints) == 2
    # ...and the real run removes it from the index and the manifest.
    await run()
    (removal,) = [r for r in vertex.requests if r.method == "removeDatapoints"]
    assert [i.split(".")[0] for i in removal.body["datapointIds"]] == ["zh-anger-x"]
    assert {d.split(".")[0] for d in vertex.datapoints} == {"en-sleep-x"}
    assert await manifest.ids() == set(vertex.datapoints)
