"""Embedded wisdom retrieval: the bundled corpus, chunked like the cloud index, ranked lexically.

No model is downloaded at run time, so the representation is lexical (confidant/lexical.py),
built for zh and en without a tokenizer model.
Two scorings are kept because `bench/wisdom_eval.py` compares them on the evaluation set:

* `bm25` (the default): Okapi BM25 over those features. It rewards a rare matching feature
  more than a frequent one and saturates repeated ones, and it measured best (docs/wisdom.md).
* `tfidf`: cosine of sub-linear TF-IDF vectors.

The features are confidant/lexical.py's. The index is built once per process on first use
(~80 chunks: a few milliseconds).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from confidant.lexical import feature_weight, lexical_features
from confidant.ports import WisdomPassage
from confidant.wisdom.chunking import Chunk, best_chunk_per_passage, chunk_corpus
from confidant.wisdom.corpus import DEFAULT_CORPUS_PATH, load_corpus

Scoring = Literal["bm25", "tfidf"]
SparseVector = dict[str, float]

# BM25 parameters: the usual defaults; chunk lengths vary little, so `b` matters little.
_BM25_K1, _BM25_B = 1.2, 0.75


def _normalised(vector: SparseVector) -> SparseVector:
    norm = math.sqrt(sum(value * value for value in vector.values()))
    return {key: value / norm for key, value in vector.items()} if norm else {}


def _document_features(chunk: Chunk) -> Counter[str]:
    # The title counts twice: it names the passage's idea in the fewest words.
    return lexical_features(" ".join([chunk.title, chunk.title, chunk.text, *chunk.tags]))


@dataclass(frozen=True)
class LexicalIndex:
    """Ranks chunks for a query with BM25 or TF-IDF cosine over `lexical_features`."""

    chunks: tuple[Chunk, ...]
    scoring: Scoring
    idf: dict[str, float]
    documents: tuple[SparseVector, ...]  # BM25: term weights; TF-IDF: unit vectors

    @classmethod
    def build(cls, chunks: Sequence[Chunk], scoring: Scoring = "bm25") -> LexicalIndex:
        counts = [_document_features(chunk) for chunk in chunks]
        frequency: Counter[str] = Counter()
        for features in counts:
            frequency.update(features.keys())
        total = len(chunks)
        if scoring == "bm25":
            idf = {
                feature: math.log(1 + (total - df + 0.5) / (df + 0.5))
                for feature, df in frequency.items()
            }
            lengths = [sum(c.values()) for c in counts]
            average = (sum(lengths) / total) if total else 1.0
            documents = tuple(
                {
                    feature: count
                    * (_BM25_K1 + 1)
                    / (count + _BM25_K1 * (1 - _BM25_B + _BM25_B * length / average))
                    for feature, count in features.items()
                }
                for features, length in zip(counts, lengths, strict=True)
            )
        else:
            idf = {
                feature: math.log((1 + total) / (1 + df)) + 1.0 for feature, df in frequency.items()
            }
            documents = tuple(_tfidf(features, idf) for features in counts)
        return cls(tuple(chunks), scoring, idf, documents)

    def _query(self, text: str) -> SparseVector:
        features = lexical_features(text)
        if self.scoring == "tfidf":
            return _tfidf(features, self.idf)
        # Features unseen in the corpus are dropped: they cannot match any chunk.
        return {f: self.idf[f] * feature_weight(f) for f in features if f in self.idf}

    def scores(self, query: str) -> list[tuple[float, Chunk]]:
        """(score, chunk) for every chunk with a positive score, best first."""
        query_vector = self._query(query)
        scored = [
            (sum(weight * document.get(key, 0.0) for key, weight in query_vector.items()), chunk)
            for document, chunk in zip(self.documents, self.chunks, strict=True)
        ]
        # Ties break on id so the order is stable across runs.
        return sorted(
            ((score, chunk) for score, chunk in scored if score > 0.0),
            key=lambda pair: (-pair[0], pair[1].id),
        )


def _tfidf(features: Counter[str], idf: dict[str, float]) -> SparseVector:
    return _normalised(
        {
            feature: (1.0 + math.log(count)) * idf[feature] * feature_weight(feature)
            for feature, count in features.items()
            if feature in idf
        }
    )


@cache
def _index_for(path: Path, scoring: Scoring) -> LexicalIndex:
    return LexicalIndex.build(chunk_corpus(load_corpus(path)), scoring)


def base_locale(locale: str | None) -> str | None:
    return locale.strip().lower().replace("_", "-").split("-")[0] if locale else None


def _prefer_locale(
    ranked: Sequence[tuple[float, Chunk]], locale: str | None
) -> list[tuple[float, Chunk]]:
    """Chunks in `locale` first (each group keeps its score order)."""
    if locale is None:
        return list(ranked)
    same = [pair for pair in ranked if pair[1].locale == locale]
    other = [pair for pair in ranked if pair[1].locale != locale]
    return same + other


def to_passage(chunk: Chunk, score: float) -> WisdomPassage:
    return WisdomPassage(
        id=chunk.passage_id,
        title=chunk.title,
        text=chunk.text,
        source=chunk.source,
        locale=chunk.locale,
        score=score,
    )


class LocalWisdomIndex:
    """WisdomIndex over the bundled corpus (or another corpus.jsonl), fully in-process.

    Passages in the requested locale come first and the other locale fills in; a topic, when
    given, restricts the candidates (the same restricts the cloud index applies). One chunk
    per passage at most, like the cloud index's per-source crowding limit.
    """

    def __init__(self, corpus_path: Path = DEFAULT_CORPUS_PATH, scoring: Scoring = "bm25") -> None:
        self._corpus_path = corpus_path.resolve()
        self._scoring: Scoring = scoring

    @property
    def index(self) -> LexicalIndex:
        return _index_for(self._corpus_path, self._scoring)  # built on first use, then shared

    async def search(
        self, query: str, *, top_k: int = 3, locale: str | None = None, topic: str | None = None
    ) -> list[WisdomPassage]:
        if top_k <= 0 or not query.strip():
            return []
        ranked = self.index.scores(query)
        if topic:
            ranked = [pair for pair in ranked if pair[1].topic == topic]
        ranked = _prefer_locale(ranked, base_locale(locale))
        return [to_passage(chunk, score) for score, chunk in best_chunk_per_passage(ranked)][:top_k]
