"""The chat target with the Vertex AI wisdom adapters, served by functions-framework in a
subprocess and pointed at a local server speaking the embedding, Vector Search and OAuth wire
formats: wisdom arrives through the real adapters, and a rate-limited search degrades."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from confidant.embeddings import HashedEmbedder
from confidant.wisdom import load_corpus
from confidant.wisdom.chunking import chunk_corpus
from confidant.wisdom.vertex import datapoint_for
from tests.e2e.conftest import (
    Server,
    base_env,
    start_server,
    stop_server,
)
from tests.support.emulators import free_port
from tests.support.fake_gemini import error
from tests.support.fake_vertex import FakeVertex
from tests.support.push import functions_command
from tests.support.sse import of_type, parse_frames, streamed_text

INDEX_ENDPOINT = "projects/test-project/locations/us-central1/indexEndpoints/wisdom"
FIRST = "I want to finish my thesis but I keep putting it off because it never feels good enough."
SECOND = "Yes, part of me is terrified of being judged as not perfect."


@pytest.fixture(scope="module")
def vertex() -> Iterator[FakeVertex]:
    with FakeVertex() as server:
        # The index holds the starter corpus, embedded as the fake embeds (768 dimensions).
        embed = HashedEmbedder(dimensions=768).embed_one
        for chunk in chunk_corpus(load_corpus()):
            datapoint = datapoint_for(chunk, embed(chunk.embedding_text)).to_json()
            server.datapoints[chunk.id] = datapoint
        yield server


@pytest.fixture(scope="module")
def server(vertex: FakeVertex, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("vertex-wisdom")
    port = free_port()
    env = base_env(
        CONFIDANT_MODEL="offline",
        CONFIDANT_SQLITE_PATH=str(directory / "chat.db"),
        CONFIDANT_WISDOM="vertex",
        CONFIDANT_EMBEDDINGS="vertex",
        GOOGLE_API_KEY="fake-key",
        CONFIDANT_GEMINI_BASE_URL=vertex.base_url,
        CONFIDANT_VECTOR_SEARCH_ENDPOINT_DOMAIN=vertex.base_url,
        CONFIDANT_VECTOR_SEARCH_INDEX_ENDPOINT=INDEX_ENDPOINT,
        CONFIDANT_VECTOR_SEARCH_DEPLOYED_INDEX_ID="wisdom_deployed",
        CONFIDANT_WISDOM_TIMEOUT_S="2",
        GOOGLE_APPLICATION_CREDENTIALS=str(vertex.adc_file(Path(directory))),
    )
    started = start_server(functions_command("chat", port), env, port)
    yield started
    stop_server(started)


def _say(server: Server, session_id: str, text: str) -> list[dict]:
    response = httpx.post(
        f"{server.base_url}/v1/chat",
        json={"message": text, "session_id": session_id, "locale": "en"},
        headers={"X-User-Id": "wisdom-e2e"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done and parts[-1]["type"] == "finish", parts
    return parts


def _wisdom_output(parts: list[dict]) -> dict:
    calls = {p["toolCallId"]: p["toolName"] for p in of_type(parts, "tool-input-available")}
    (output,) = [
        p["output"]
        for p in of_type(parts, "tool-output-available")
        if calls.get(p["toolCallId"]) == "retrieve_wisdom"
    ]
    return output


def test_stage_two_retrieves_wisdom_through_vertex(server: Server, vertex: FakeVertex) -> None:
    _say(server, "found", FIRST)
    vertex.reset()
    parts = _say(server, "found", SECOND)

    output = _wisdom_output(parts)
    assert output["status"] == "ok"
    passages = output["passages"]
    assert 1 <= len(passages) <= 3 and all(p["id"].startswith("en-") for p in passages)
    assert all(p["text"] for p in passages)
    assert passages[0]["title"] in streamed_text(parts)  # the offline coach weaves the first
    # The turn embeds its message twice as a query (long-term memory hits and wisdom); post-turn
    # memory jobs may embed documents afterwards.
    queries = [r for r in vertex.requests if r.method == "batchEmbedContents"]
    assert any(r.task_types == ["RETRIEVAL_QUERY"] for r in queries)
    assert all(r.headers["x-goog-api-key"] == "fake-key" for r in queries)
    [find] = [r for r in vertex.requests if r.method == "findNeighbors"]
    assert find.method == "findNeighbors" and find.resource.endswith(INDEX_ENDPOINT)
    assert find.query["datapoint"]["restricts"] == [{"namespace": "locale", "allowList": ["en"]}]
    assert find.headers["authorization"].startswith("Bearer token-")


def test_a_rate_limited_search_leaves_the_coach_without_wisdom(
    server: Server, vertex: FakeVertex
) -> None:
    _say(server, "limited", FIRST)
    vertex.reset()
    vertex.scripted_for = lambda request: request.method == "findNeighbors"
    vertex.enqueue(error(429, "Quota exceeded"))  # embeddings answer; the search is 429
    try:
        parts = _say(server, "limited", SECOND)
    finally:
        vertex.scripted_for = None

    output = _wisdom_output(parts)
    assert output["status"] == "no_wisdom" and output["passages"] == []
    reply = streamed_text(parts)
    assert reply.strip()
    assert not [p.title for p in load_corpus() if p.title in reply]  # no passage is quoted
