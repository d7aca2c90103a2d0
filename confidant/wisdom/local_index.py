"""Embedded wisdom retrieval: a small bilingual corpus and a deterministic sparse embedding.

The embedding is TF-IDF over lexical features that need no tokenizer model: word tokens and
in-word character trigrams for alphabetic text, character unigrams and bigrams for Chinese
(which works without word segmentation). Vectors are L2-normalised, so the dot product is the
cosine similarity. Features are kept as strings (no hashing): the corpus is tiny, and exact
features cannot collide. The index is built once per process on first use.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pydantic import BaseModel, Field

from confidant.ports import WisdomPassage

DEFAULT_CORPUS_PATH = Path(__file__).parent / "data" / "corpus.jsonl"

SparseVector = dict[str, float]

_CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN_RE = re.compile(f"[{_CJK_CLASS}]+")
_WORD_RE = re.compile(rf"[^\W\d_{_CJK_CLASS}]+")
# Words and characters too common to say anything about a passage's topic.
_EN_STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from has have i if in into is it its me my of"
    " on or so that the their them there they this to too was we what when with you your"
    " am not just really very about like get feel want".split()
)
_ZH_STOPCHARS = frozenset("的了是我你他她它在和也就都而很有着吗呢吧啊把被这那一个不要会")
_TRIGRAM_WEIGHT = 0.5  # trigrams catch inflections ("procrastinating"), words carry meaning
_SUFFIXES = ("ionism", "ating", "ation", "ism", "ing", "ion", "ed", "es", "s")


class CorpusPassage(BaseModel):
    """One line of corpus.jsonl."""

    id: str
    title: str
    text: str
    source: str = ""
    locale: str
    tags: list[str] = Field(default_factory=list)


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def lexical_features(text: str) -> Counter[str]:
    """Feature counts of `text`: the space both documents and queries are embedded in."""
    normalised = unicodedata.normalize("NFKC", text).casefold()
    features: Counter[str] = Counter()
    for word in _WORD_RE.findall(normalised):
        if len(word) < 2 or word in _EN_STOPWORDS:
            continue
        features[f"w:{_stem(word)}"] += 1
        padded = f"^{word}$"
        for start in range(len(padded) - 2):
            features[f"t:{padded[start : start + 3]}"] += 1
    for run in _CJK_RUN_RE.findall(normalised):
        for char in run:
            if char not in _ZH_STOPCHARS:
                features[f"u:{char}"] += 1
        for start in range(len(run) - 1):
            features[f"b:{run[start : start + 2]}"] += 1
    return features


def _weight(feature: str) -> float:
    return _TRIGRAM_WEIGHT if feature.startswith("t:") else 1.0


def _normalised(vector: SparseVector) -> SparseVector:
    norm = math.sqrt(sum(value * value for value in vector.values()))
    return {key: value / norm for key, value in vector.items()} if norm else {}


@dataclass(frozen=True)
class TfidfIndex:
    passages: tuple[CorpusPassage, ...]
    idf: dict[str, float]
    vectors: tuple[SparseVector, ...]

    @classmethod
    def build(cls, passages: Sequence[CorpusPassage]) -> TfidfIndex:
        counts = [lexical_features(" ".join([p.title, p.title, p.text, *p.tags])) for p in passages]
        document_frequency: Counter[str] = Counter()
        for features in counts:
            document_frequency.update(features.keys())
        total = len(passages)
        idf = {
            feature: math.log((1 + total) / (1 + frequency)) + 1.0
            for feature, frequency in document_frequency.items()
        }
        index = cls(tuple(passages), idf, ())
        vectors = tuple(index._embed(features) for features in counts)
        return cls(tuple(passages), idf, vectors)

    def _embed(self, features: Counter[str]) -> SparseVector:
        # Features unseen in the corpus are dropped: they cannot match any passage.
        return _normalised(
            {
                feature: (1.0 + math.log(count)) * self.idf[feature] * _weight(feature)
                for feature, count in features.items()
                if feature in self.idf
            }
        )

    def embed(self, text: str) -> SparseVector:
        return self._embed(lexical_features(text))

    def scores(self, query: str) -> list[tuple[float, CorpusPassage]]:
        """(cosine, passage) for every passage with a positive score, best first."""
        query_vector = self.embed(query)
        scored = [
            (sum(weight * vector.get(key, 0.0) for key, weight in query_vector.items()), passage)
            for vector, passage in zip(self.vectors, self.passages, strict=True)
        ]
        # Ties break on id so the order is stable across runs.
        return sorted(
            ((score, passage) for score, passage in scored if score > 0.0),
            key=lambda pair: (-pair[0], pair[1].id),
        )


def load_corpus(path: Path) -> list[CorpusPassage]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [CorpusPassage.model_validate(json.loads(line)) for line in lines if line.strip()]


@cache
def _index_for(path: Path) -> TfidfIndex:
    return TfidfIndex.build(load_corpus(path))


def _base_locale(locale: str | None) -> str | None:
    return locale.strip().lower().replace("_", "-").split("-")[0] if locale else None


def _prefer_locale(
    ranked: Iterable[tuple[float, CorpusPassage]], locale: str | None
) -> list[tuple[float, CorpusPassage]]:
    """Passages in `locale` first (each group keeps its score order)."""
    ranked = list(ranked)
    if locale is None:
        return ranked
    same = [pair for pair in ranked if pair[1].locale == locale]
    other = [pair for pair in ranked if pair[1].locale != locale]
    return same + other


class LocalWisdomIndex:
    """WisdomIndex over the bundled corpus (or another corpus.jsonl), fully in-process."""

    def __init__(self, corpus_path: Path = DEFAULT_CORPUS_PATH) -> None:
        self._corpus_path = corpus_path.resolve()

    @property
    def index(self) -> TfidfIndex:
        return _index_for(self._corpus_path)  # built on first use, then shared by the process

    async def search(
        self, query: str, *, top_k: int = 3, locale: str | None = None
    ) -> list[WisdomPassage]:
        if top_k <= 0 or not query.strip():
            return []
        ranked = _prefer_locale(self.index.scores(query), _base_locale(locale))
        return [
            WisdomPassage(
                id=passage.id,
                title=passage.title,
                text=passage.text,
                source=passage.source,
                locale=passage.locale,
                score=score,
            )
            for score, passage in ranked[:top_k]
        ]
