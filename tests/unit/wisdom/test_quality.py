"""The starter corpus and its evaluation set: coverage, and a floor on offline retrieval quality.

The numbers themselves are reported by `bench/wisdom_eval.py` (docs/wisdom.md); this guards
against a change that silently makes the embedded default retrieve worse.
"""

from __future__ import annotations

from collections import Counter

from confidant.wisdom import LocalWisdomIndex, load_corpus
from confidant.wisdom.corpus import TOPICS
from confidant.wisdom.evaluation import evaluate, load_eval_set

THEMES = {
    "procrastination",
    "fear_of_failure",
    "self_compassion",
    "inner_parts",
    "habits",
    "grief",
    "anger",
    "sleep",
    "relationships",
}


def test_corpus_covers_the_coachs_themes_in_both_languages() -> None:
    passages = load_corpus()
    assert len(passages) >= 60
    per_theme = Counter((p.topic, p.locale) for p in passages)
    assert THEMES <= set(TOPICS)
    assert all(per_theme[(theme, locale)] >= 2 for theme in THEMES for locale in ("zh", "en"))


def test_eval_set_is_bilingual_and_labels_real_passages() -> None:
    queries = load_eval_set()
    ids = {p.id for p in load_corpus()}
    assert len(queries) >= 60
    assert Counter(q.locale for q in queries).keys() == {"zh", "en"}
    assert all(q.relevant and set(q.relevant) <= ids for q in queries)
    assert len({q.query for q in queries}) == len(queries)


async def test_offline_recall_at_3_is_at_least_0_8() -> None:
    report = await evaluate(LocalWisdomIndex(), load_eval_set(), k=3)
    assert report.recall >= 0.8, [(q.query, got) for q, got in report.misses]
    assert report.mrr >= 0.7


async def test_topic_restricts_the_candidates() -> None:
    results = await LocalWisdomIndex().search("I can't stop", top_k=5, locale="en", topic="sleep")
    assert results and all(r.id.startswith("en-sleep-") for r in results)
