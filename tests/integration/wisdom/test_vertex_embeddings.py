"""VertexEmbedder over HTTP against the fake: task types, dimensions, batching, vectors."""

from __future__ import annotations

import math

import pytest
from google import genai
from google.genai import errors, types

from confidant.embeddings.vertex import VertexEmbedder
from tests.integration.wisdom.conftest import EMBED_TOKEN, vertex_genai_client
from tests.support.fake_gemini import error
from tests.support.fake_vertex import FakeVertex


async def test_documents_on_vertex_one_text_per_request_with_the_document_task(
    vertex: FakeVertex, embedder: VertexEmbedder
) -> None:
    texts = ["I keep putting off my thesis", "我总是拖延", "sleep comes in waves"]
    vectors = await embedder.embed(texts, task="document")

    assert len(vectors) == 3
    assert all(len(v) == 768 and math.isclose(sum(x * x for x in v), 1.0) for v in vectors)
    requests = vertex.requests
    # gemini-embedding-001 on Vertex AI takes one instance per request: three requests.
    assert [r.method for r in requests] == ["predict"] * 3
    assert all(
        r.resource.endswith("publishers/google/models/gemini-embedding-001") for r in requests
    )
    assert sorted(t for r in requests for t in r.texts) == sorted(texts)
    assert {t for r in requests for t in r.task_types} == {"RETRIEVAL_DOCUMENT"}
    assert {r.body["parameters"]["outputDimensionality"] for r in requests} == {768}
    assert {r.headers["authorization"] for r in requests} == {f"Bearer {EMBED_TOKEN}"}
    # Order is kept: the vector of each text is its own.
    (again,) = await embedder.embed([texts[1]], task="document")
    assert again == vectors[1]


async def test_queries_use_the_query_task(vertex: FakeVertex, embedder: VertexEmbedder) -> None:
    await embedder.embed(["why can't I start"], task="query")
    assert vertex.requests[0].task_types == ["RETRIEVAL_QUERY"]


async def test_models_that_take_batches_get_batches(vertex: FakeVertex) -> None:
    embedder = VertexEmbedder(
        vertex_genai_client(vertex.base_url), model="text-multilingual-embedding-002", batch_size=2
    )
    await embedder.embed(["a", "b", "c"], task="document")
    assert sorted(len(r.texts) for r in vertex.requests) == [1, 2]


async def test_gemini_api_batches_in_one_request(vertex: FakeVertex) -> None:
    client = genai.Client(
        vertexai=False,
        api_key="fake-key",
        http_options=types.HttpOptions(base_url=vertex.base_url),
    )
    vectors = await VertexEmbedder(client).embed(["one", "two", "three"], task="query")
    assert len(vectors) == 3
    (request,) = vertex.requests
    assert request.method == "batchEmbedContents"
    assert request.task_types == ["RETRIEVAL_QUERY"] * 3
    assert {item["outputDimensionality"] for item in request.body["requests"]} == {768}


async def test_rate_limits_are_raised_on_the_request_path(
    vertex: FakeVertex, embedder: VertexEmbedder
) -> None:
    vertex.enqueue(error(429))
    with pytest.raises(errors.APIError) as raised:
        await embedder.embed(["x"], task="query")
    assert raised.value.code == 429


async def test_ingestion_clients_retry_rate_limits(vertex: FakeVertex) -> None:
    embedder = VertexEmbedder(vertex_genai_client(vertex.base_url, attempts=3))
    vertex.enqueue(error(429), error(503))
    (vector,) = await embedder.embed(["x"], task="document")
    assert len(vector) == 768
    assert len(vertex.requests) == 3
