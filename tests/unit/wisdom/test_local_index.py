"""LocalWisdomIndex: corpus shape and relevance for zh and en queries."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from confidant.lexical import lexical_features
from confidant.ports import WisdomIndex
from confidant.wisdom import DEFAULT_CORPUS_PATH, LocalWisdomIndex
from confidant.wisdom.corpus import load_corpus


@pytest.fixture(scope="module")
def index() -> LocalWisdomIndex:
    return LocalWisdomIndex()


def test_corpus_is_bilingual_and_well_formed() -> None:
    passages = load_corpus(DEFAULT_CORPUS_PATH)
    assert len(passages) >= 30
    locales = Counter(p.locale for p in passages)
    assert set(locales) == {"zh", "en"}
    assert abs(locales["zh"] - locales["en"]) <= 2
    assert len({p.id for p in passages}) == len(passages)
    assert all(p.title and p.text and p.tags and p.source for p in passages)
    # The coach never preaches, and neither does what it quotes.
    assert not [p.id for p in passages if "should" in p.text.casefold() or "应该" in p.text]


@pytest.mark.parametrize(
    ("query", "locale", "expected_ids"),
    [
        (
            "I keep procrastinating on my thesis because it is never perfect",
            "en",
            {"en-perfectionism-01", "en-perfectionism-02", "en-procrastination-01"},
        ),
        ("my inner critic is so harsh with me", "en", {"en-critic-01"}),
        ("what is one tiny habit I can start", "en", {"en-micro-01", "en-micro-02"}),
        ("我总是拖延，害怕做得不够完美", "zh", {"zh-procrastination-01", "zh-perfectionism-01"}),
        ("我总是批评自己，对自己很苛刻", "zh", {"zh-compassion-01", "zh-critic-01"}),
        ("知道该做什么却做不到", "zh", {"zh-values-02"}),
    ],
)
async def test_relevant_passages_rank_first(
    index: LocalWisdomIndex, query: str, locale: str, expected_ids: set[str]
) -> None:
    results = await index.search(query, top_k=3, locale=locale)
    assert results
    assert results[0].id in expected_ids, [r.id for r in results]
    assert all(r.locale == locale for r in results)
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0


async def test_locale_preference_and_fill(index: LocalWisdomIndex) -> None:
    # An English query asked for zh: zh matches (if any) first, then English ones fill in.
    results = await index.search("perfectionism 完美主义", top_k=12, locale="zh")
    locales = [r.locale for r in results]
    assert locales[0] == "zh"
    assert "en" in locales
    assert locales == sorted(locales, key=lambda loc: loc != "zh")


async def test_edge_cases(index: LocalWisdomIndex) -> None:
    assert await index.search("   ", top_k=3) == []
    assert await index.search("inner critic", top_k=0) == []
    assert await index.search("qwxz zzzq", top_k=3, locale="en") == []
    first = await index.search("fear of being judged", top_k=5, locale="en")
    again = await index.search("fear of being judged", top_k=5, locale="en-US")
    assert [r.id for r in first] == [r.id for r in again]
    assert len(first) <= 5


async def test_custom_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        '{"id":"a","title":"Ocean","text":"waves and tides","locale":"en"}\n'
        '{"id":"b","title":"Forest","text":"trees and moss","locale":"en"}\n',
        encoding="utf-8",
    )
    results = await LocalWisdomIndex(corpus).search("moss under trees")
    assert results[0].id == "b"


def test_features_need_no_segmentation() -> None:
    features = lexical_features("害怕不完美 Procrastinating")
    assert features["b:完美"] == 1
    assert features["u:怕"] == 1
    assert "w:procrastin" in features


def test_satisfies_the_port(index: LocalWisdomIndex) -> None:
    port: WisdomIndex = index
    assert port is index
