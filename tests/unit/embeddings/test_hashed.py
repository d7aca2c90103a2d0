"""The offline hashed embedding: unit vectors, deterministic, closer for related text."""

from __future__ import annotations

import math

from confidant.embeddings.hashed import HashedEmbedder, cosine


async def test_vectors_are_unit_length_and_deterministic() -> None:
    embedder = HashedEmbedder()
    first, again = await embedder.embed(["I keep procrastinating"] * 2, task="document")
    assert len(first) == embedder.dimensions
    assert math.isclose(sum(v * v for v in first), 1.0, rel_tol=1e-9)
    assert first == again
    assert HashedEmbedder().embed_one("I keep procrastinating") == first  # across instances


def test_related_texts_are_closer_than_unrelated_ones_in_both_languages() -> None:
    embed = HashedEmbedder().embed_one
    en = embed("I keep procrastinating on my thesis")
    assert cosine(en, embed("procrastination and my thesis deadline")) > cosine(
        en, embed("my sister is getting married in spring")
    )
    zh = embed("我总是拖延写论文")
    assert cosine(zh, embed("论文一直拖延怎么办")) > cosine(zh, embed("我妹妹春天要结婚了"))


async def test_empty_text_is_the_zero_vector() -> None:
    (vector,) = await HashedEmbedder(dimensions=8).embed([""], task="query")
    assert vector == [0.0] * 8
