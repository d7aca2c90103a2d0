"""The n-gram model's fast scoring (whole-view C-level passes, triples only where a weighted
one can start) gives each clause exactly the sum of its own n-grams' weights, as training
counts them (`clause_features`), so what was thresholded is what fires."""

from __future__ import annotations

import json
import random
from itertools import pairwise, repeat
from pathlib import Path

import pytest

from agents.safety.ngram import NgramModel, clause_features, load_model
from agents.safety.normalise import CLAUSE_MARK, contains_cjk, normalise

DATA = Path(__file__).resolve().parents[2] / "data"
TRICKY = "我想死了结束一切|，。！? \n$^|*ab kill myself 自杀 ０１ ＡＢ\u3000xyz"


def _plain_sums(model: NgramModel, view: str) -> list[float]:
    return [
        sum(map(model.weights.get, clause_features(clause), repeat(0.0)))
        for clause in view.split(CLAUSE_MARK)
    ]


def _views() -> list[str]:
    texts = [
        json.loads(line)["text"]
        for name in ("crisis_dev_set.jsonl", "crisis_tuning.jsonl", "crisis_selection.jsonl")
        for line in (DATA / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    shuffle = random.Random(7)
    joined = [" ".join(shuffle.sample(texts, 12)) for _ in range(200)]
    tricky = ["".join(shuffle.choices(TRICKY, k=shuffle.randint(0, 60))) for _ in range(2000)]
    return [normalise(text) for text in texts + joined] + tricky


@pytest.fixture(scope="module")
def model() -> NgramModel:
    shipped = load_model()
    assert shipped is not None
    return shipped


def test_each_clause_scores_the_sum_of_its_own_ngrams(model: NgramModel) -> None:
    for view in _views():
        sums, chinese = model.clause_sums(view)
        assert sums == pytest.approx(_plain_sums(model, view), abs=1e-9), view
        assert chinese == [contains_cjk(clause) for clause in view.split(CLAUSE_MARK)], view


def test_the_riskiest_window_is_the_adjacent_clause_pair_farthest_over_its_threshold(
    model: NgramModel,
) -> None:
    for view in _views()[::7]:
        clauses, start = [], 0
        for clause in view.split(CLAUSE_MARK):
            if clause.strip():
                clauses.append((start, start + len(clause), clause))
            start += len(clause) + 1
        if len(clauses) <= 3:
            continue
        best = max(
            (
                model.biases["zh" if contains_cjk(a + b) else "en"]
                + sum(_plain_sums(model, a + CLAUSE_MARK + b)),
                -index,
            )
            for index, ((_, _, a), (_, _, b)) in enumerate(pairwise(clauses))
        )
        window = model.riskiest(view)
        index = -best[1]
        assert (window.start, window.end) == (clauses[index][0], clauses[index + 1][1]), view
