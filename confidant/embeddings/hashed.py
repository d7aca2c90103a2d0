"""An embedding that needs no model download: hashed lexical features for zh and en.

English contributes word unigrams, word bigrams and character trigrams inside words (so
"procrastinate" and "procrastinating" share most features); Chinese, which has no spaces,
contributes character unigrams and bigrams. Features are hashed with a sign bit into a fixed
number of dimensions (the hashing trick), weighted sub-linearly, and L2-normalised, so the
dot product of two vectors is their cosine similarity. Deterministic across processes
(blake2b, never Python's salted `hash`).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from confidant.ports import EmbeddingTask

DEFAULT_DIMENSIONS = 512
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
# Weights: whole words say most; trigrams give robustness to inflection and typos.
_WEIGHT_WORD, _WEIGHT_BIGRAM, _WEIGHT_TRIGRAM = 1.0, 0.7, 0.35
_WEIGHT_HAN_CHAR, _WEIGHT_HAN_BIGRAM = 0.5, 1.0


def _features(text: str) -> Counter[str]:
    normal = unicodedata.normalize("NFKC", text).lower()
    features: Counter[str] = Counter()
    words = _WORD.findall(normal)
    for word in words:
        features["w:" + word] += _WEIGHT_WORD
        padded = f"<{word}>"
        for i in range(len(padded) - 2):
            features["t:" + padded[i : i + 3]] += _WEIGHT_TRIGRAM
    for first, second in itertools.pairwise(words):
        features[f"b:{first} {second}"] += _WEIGHT_BIGRAM
    for run in _CJK_RUN.findall(normal):
        for char in run:
            features["h:" + char] += _WEIGHT_HAN_CHAR
        for i in range(len(run) - 1):
            features["hb:" + run[i : i + 2]] += _WEIGHT_HAN_BIGRAM
    return features


def _bucket(feature: str, dimensions: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dimensions, (1.0 if value >> 63 else -1.0)


class HashedEmbedder:
    """The offline `Embedder`: same vectors for queries and documents."""

    def __init__(self, dimensions: int = DEFAULT_DIMENSIONS) -> None:
        self._dimensions = dimensions

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self._dimensions
        for feature, weight in _features(text).items():
            index, sign = _bucket(feature, self._dimensions)
            # Sub-linear: a word said five times is not five times the topic.
            vector[index] += sign * (1.0 + math.log(weight) if weight > 1.0 else weight)
        norm = math.sqrt(sum(v * v for v in vector))
        return [v / norm for v in vector] if norm else vector

    async def embed(self, texts: Sequence[str], *, task: EmbeddingTask) -> list[list[float]]:
        return [self.embed_one(text) for text in texts]


def cosine(a: Iterable[float], b: Iterable[float]) -> float:
    """Dot product of two unit vectors (their cosine similarity)."""
    return sum(x * y for x, y in zip(a, b, strict=True))
