"""Settings → adapters: the composition root picks the wisdom index and embedder named."""

from __future__ import annotations

import pytest

from confidant.bootstrap import _embedder, _wisdom
from confidant.embeddings import HashedEmbedder
from confidant.embeddings.vertex import VertexEmbedder
from confidant.settings import Settings
from confidant.wisdom import LocalWisdomIndex
from confidant.wisdom.vertex import VertexWisdomIndex

VERTEX = {
    "wisdom": "vertex",
    "embeddings": "vertex",
    "GOOGLE_API_KEY": "fake-key",
    "vector_search_endpoint_domain": "123.us-central1-456.vdb.vertexai.goog",
    "vector_search_index_endpoint": "projects/p/locations/us-central1/indexEndpoints/e",
    "vector_search_deployed_index_id": "wisdom_deployed",
}


def test_defaults_are_offline() -> None:
    settings = Settings()
    embedder = _embedder(settings)
    assert isinstance(embedder, HashedEmbedder)
    assert isinstance(_wisdom(settings, embedder), LocalWisdomIndex)


def test_vertex_settings_build_the_cloud_adapters_without_calling_anything() -> None:
    settings = Settings.model_validate(VERTEX)
    embedder = _embedder(settings)
    assert isinstance(embedder, VertexEmbedder)
    assert embedder.model == "gemini-embedding-001" and embedder.dimensions == 768
    assert isinstance(_wisdom(settings, embedder), VertexWisdomIndex)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"vector_search_deployed_index_id": None}, "DEPLOYED_INDEX_ID"),
        ({"embeddings": "hashed"}, "CONFIDANT_EMBEDDINGS=vertex"),
    ],
)
def test_incomplete_vertex_settings_refuse_to_start(
    change: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):  # pydantic wraps ConfigurationError
        Settings.model_validate({**VERTEX, **change})
