"""VertexWisdomIndex over HTTP against the fake: the findNeighbors payload, what comes back,
and how the coach degrades when retrieval times out, is rate-limited or finds nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agents.deps import AgentDeps, TurnContext
from agents.onemind.stages import Stage
from agents.onemind.tools import NO_WISDOM_NOTE, STATUS_NO_WISDOM
from agents.safety import CrisisDetector
from confidant.embeddings.vertex import VertexEmbedder
from confidant.wisdom import load_corpus
from confidant.wisdom.chunking import chunk_corpus, chunk_passage
from confidant.wisdom.corpus import CorpusPassage
from confidant.wisdom.vector_search import VectorSearchClient, VectorSearchError
from confidant.wisdom.vertex import VertexWisdomIndex, datapoint_for
from tests.integration.wisdom.conftest import (
    DEPLOYED_INDEX_ID,
    INDEX,
    INDEX_ENDPOINT,
    SEARCH_TOKEN,
)
from tests.support.fake_gemini import error
from tests.support.fake_vertex import Delay, FakeVertex
from tests.unit.agents.support import ScriptedLlm, call, run_turn, session_in_stage


def _index(
    vertex: FakeVertex,
    embedder: VertexEmbedder,
    client: VectorSearchClient,
    *,
    timeout_s: float = 5.0,
) -> VertexWisdomIndex:
    return VertexWisdomIndex(
        embedder,
        client,
        endpoint_url=vertex.base_url,
        index_endpoint=INDEX_ENDPOINT,
        deployed_index_id=DEPLOYED_INDEX_ID,
        per_source_limit=1,
        timeout_s=timeout_s,
    )


async def _load(
    vertex: FakeVertex,
    embedder: VertexEmbedder,
    client: VectorSearchClient,
    passages: list[CorpusPassage],
) -> None:
    chunks = chunk_corpus(passages)
    vectors = await embedder.embed([c.embedding_text for c in chunks], task="document")
    await client.upsert_datapoints(
        api_url=vertex.base_url,
        index=INDEX,
        datapoints=[datapoint_for(c, v) for c, v in zip(chunks, vectors, strict=True)],
    )
    vertex.reset()


async def test_search_sends_the_documented_query_and_returns_full_passages(
    vertex: FakeVertex, embedder: VertexEmbedder, search_client: VectorSearchClient
) -> None:
    await _load(vertex, embedder, search_client, load_corpus())
    index = _index(vertex, embedder, search_client)

    results = await index.search("Stop trying to fall asleep", top_k=3, locale="en-GB")

    embed, find = vertex.requests
    assert embed.task_types == ["RETRIEVAL_QUERY"]
    assert find.method == "findNeighbors" and find.resource.endswith(INDEX_ENDPOINT)
    assert find.headers["authorization"] == f"Bearer {SEARCH_TOKEN}"
    assert find.body["deployedIndexId"] == DEPLOYED_INDEX_ID
    assert find.body["returnFullDatapoint"] is True
    query = find.query
    assert query["neighborCount"] == 3
    assert query["perCrowdingAttributeNeighborCount"] == 1
    assert query["datapoint"]["restricts"] == [{"namespace": "locale", "allowList": ["en"]}]
    assert len(query["datapoint"]["featureVector"]) == 768

    assert len(results) == 3
    assert results[0].id == "en-sleep-01"
    assert results[0].title == "Stop trying to fall asleep"
    assert results[0].text.startswith("Sleep cannot be forced")
    assert {r.locale for r in results} == {"en"}
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)


async def test_topic_restrict(
    vertex: FakeVertex, embedder: VertexEmbedder, search_client: VectorSearchClient
) -> None:
    await _load(vertex, embedder, search_client, load_corpus())
    results = await _index(vertex, embedder, search_client).search(
        "我很难过", top_k=5, locale="zh", topic="grief"
    )
    restricts = vertex.requests[-1].query["datapoint"]["restricts"]
    assert {"namespace": "topic", "allowList": ["grief"]} in restricts
    assert results and {r.id.rsplit("-", 1)[0] for r in results} == {"zh-grief"}


async def test_crowding_keeps_one_chunk_per_passage(
    vertex: FakeVertex, embedder: VertexEmbedder, search_client: VectorSearchClient
) -> None:
    long_text = " ".join(f"Habit sentence {i} about tiny steps and habits." for i in range(40))
    long = CorpusPassage(id="long", title="Habits", text=long_text, locale="en", topic="habits")
    short = CorpusPassage(id="short", title="Habits too", text="Tiny habits.", locale="en")
    assert len(chunk_passage(long)) > 2
    await _load(vertex, embedder, search_client, [long, short])

    results = await _index(vertex, embedder, search_client).search("tiny habits", top_k=3)

    assert sorted(r.id for r in results) == ["long", "short"]


async def test_failures_raise_for_the_tool_to_absorb(
    vertex: FakeVertex, embedder: VertexEmbedder, search_client: VectorSearchClient
) -> None:
    index = _index(vertex, embedder, search_client, timeout_s=0.5)
    vertex.enqueue(None, error(429))  # the embedding answers, the search is rate-limited
    with pytest.raises(VectorSearchError) as raised:
        await index.search("anything", locale="en")
    assert raised.value.status == 429 and raised.value.retryable
    vertex.enqueue(None, Delay(2.0))
    with pytest.raises(TimeoutError):
        await index.search("anything", locale="en")
    assert await index.search("anything", locale="en") == []  # an empty index


@pytest.mark.parametrize("failure", ["rate_limited", "timeout", "empty"])
async def test_the_coach_goes_on_without_wisdom_and_is_told_not_to_invent_any(
    vertex: FakeVertex,
    embedder: VertexEmbedder,
    search_client: VectorSearchClient,
    failure: str,
) -> None:
    if failure != "empty":
        await _load(vertex, embedder, search_client, load_corpus())
    if failure == "rate_limited":
        vertex.enqueue(None, error(429, "Quota exceeded"))
    elif failure == "timeout":
        vertex.enqueue(Delay(2.0))
    model = ScriptedLlm(steps=[call("retrieve_wisdom", query="I am afraid to fail"), "ok"])
    sessions = await session_in_stage(Stage.INTEGRATION.value)
    wisdom = _index(vertex, embedder, search_client, timeout_s=0.5)

    result = await asyncio.wait_for(
        run_turn(
            deps=AgentDeps(crisis_detector=CrisisDetector(), model=model, wisdom=wisdom),
            sessions=sessions,
            memory=None,
            turn=TurnContext(user_id="u", session_id="s", locale="en"),
            text="I'm scared",
        ),
        timeout=30,
    )

    (response,) = [r.response or {} for r in result.responses]
    assert response["status"] == STATUS_NO_WISDOM
    assert response["passages"] == []
    assert response["note"] == NO_WISDOM_NOTE and "invent" in NO_WISDOM_NOTE
    # The model saw the no-wisdom result, and its instruction forbids made-up quotes.
    instruction = str(model.requests[-1].config.system_instruction)
    assert "never invent a quote" in instruction


async def test_application_default_credentials_are_loaded_and_refreshed_once(
    vertex: FakeVertex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(vertex.adc_file(tmp_path)))
    client = VectorSearchClient()  # credentials from the environment, as in production
    try:
        for _ in range(2):
            await client.remove_datapoints(api_url=vertex.base_url, index=INDEX, ids=["x"])
    finally:
        await client.close()
    assert vertex.tokens_issued == 1  # refreshed on first use, then reused until it expires
    assert {r.headers["authorization"] for r in vertex.requests} == {"Bearer token-1"}
