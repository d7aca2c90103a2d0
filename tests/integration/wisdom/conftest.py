"""The Vertex AI fake and clients pointed at it (one server per module, reset per test)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from google import genai
from google.genai import types
from google.oauth2.credentials import Credentials

from confidant.embeddings.vertex import VertexEmbedder
from confidant.wisdom.vector_search import GoogleAccessToken, VectorSearchClient
from tests.support.fake_vertex import FakeVertex

PROJECT = "test-project"
LOCATION = "us-central1"
INDEX = f"projects/{PROJECT}/locations/{LOCATION}/indexes/wisdom"
INDEX_ENDPOINT = f"projects/{PROJECT}/locations/{LOCATION}/indexEndpoints/wisdom-endpoint"
DEPLOYED_INDEX_ID = "wisdom_deployed"
EMBED_TOKEN = "embed-token"
SEARCH_TOKEN = "search-token"


@pytest.fixture(scope="module")
def _vertex_server() -> Iterator[FakeVertex]:
    with FakeVertex() as server:
        yield server


@pytest.fixture
def vertex(_vertex_server: FakeVertex) -> Iterator[FakeVertex]:
    _vertex_server.reset()
    _vertex_server.datapoints.clear()
    yield _vertex_server
    _vertex_server.reset()


def vertex_genai_client(
    base_url: str, *, timeout_s: float = 5.0, attempts: int = 1
) -> genai.Client:
    """google-genai in Vertex AI mode, with a fixed OAuth token, talking to the fake."""
    return genai.Client(
        vertexai=True,
        project=PROJECT,
        location=LOCATION,
        credentials=Credentials(token=EMBED_TOKEN),
        http_options=types.HttpOptions(
            base_url=base_url,
            timeout=int(timeout_s * 1000),
            retry_options=types.HttpRetryOptions(
                attempts=attempts, initial_delay=0.01, max_delay=0.05
            ),
        ),
    )


@pytest.fixture
def embedder(vertex: FakeVertex) -> VertexEmbedder:
    return VertexEmbedder(vertex_genai_client(vertex.base_url))


@pytest.fixture
async def search_client() -> AsyncIterator[VectorSearchClient]:
    client = VectorSearchClient(token=GoogleAccessToken(Credentials(token=SEARCH_TOKEN)))
    yield client
    await client.close()
