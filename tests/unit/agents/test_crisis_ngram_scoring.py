"""The n-gram layer's fast scoring (whole view at once, vectorised over integer-coded
n-grams) gives the scores of the plain one: every clause's n-grams by `clause_features`,
looked up one by one, and every window of one or two adjacent clauses scored from its own text."""

from __future__ import annotations

import json
import math
import random
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

from agents.safety import CrisisDetector
from agents.safety.ngram import (
    MODEL_FILE,
    THRESHOLD,
    NgramModel,
    Weights,
    Window,
    clause_features,
    language,
    load_model,
)
from agents.safety.normalise import CLAUSE_MARK, DATA_DIR, normalise
from agents.safety.train_ngram import ORDINARY_SETS, SELECTION_SETS, TRAINING_SETS

DATA = Path(__file__).resolve().parents[2] / "data"
# Every open crisis set: what the model is trained, thresholded and checked on (the held-out
# ones are for measuring only).
OPEN_SETS = TRAINING_SETS + SELECTION_SETS + ORDINARY_SETS
TOLERANCE = 1e-9  # sums taken in another order differ in the last bits only


@pytest.fixture(scope="module")
def model() -> NgramModel:
    shipped = load_model()
    assert shipped is not None
    return shipped


@pytest.fixture(scope="module")
def texts() -> list[str]:
    found = []
    for name in OPEN_SETS:
        lines = (DATA / name).read_text(encoding="utf-8").splitlines()
        found += [json.loads(line)["text"] for line in lines if line.strip()]
    # Every other case of every set: the sets hold 20k cases, and the plain scoring is slow.
    return found[::2]


def _long_messages(texts: list[str], count: int) -> list[str]:
    """2 to 40 cases joined by clause ends, spaces, contrasts, blank clauses or nothing: long
    messages of both scripts, mixed, with clauses of every length."""
    rng = random.Random(11)
    # (emoji are two UTF-16 units: the scorer's offsets must still be the view's)
    joiners = [
        ". ",
        "。",
        " ",
        "，",
        "\n",
        " but ",
        "但是",
        "! ",
        "",
        " - ",
        "\n\n\n",
        "…",
        "ok",
        " 😭 ",
    ]
    return [
        rng.choice(joiners).join(rng.choice(texts) for _ in range(rng.randint(2, 40)))
        for _ in range(count)
    ]


@cache
def _by_gram(weights: Weights) -> dict[str, float]:
    return weights.as_dict()


def _plain_clause_score(model: NgramModel, clause: str) -> float:
    weights = _by_gram(model.weights)
    return sum(weights.get(gram, 0.0) for gram in clause_features(clause))


def _plain_logit(model: NgramModel, text: str) -> float:
    score = sum(_plain_clause_score(model, clause) for clause in text.split(CLAUSE_MARK))
    return model.biases[language(text)] + score


def _plain_windows(
    model: NgramModel, view: str, *, whole: bool = True
) -> list[tuple[int, int, float]]:
    """(start, end, logit) of every window the model weighs: the whole view when it has at most
    three clauses that are not blank (one, with `whole` off), else every two adjacent ones and
    then every one alone (a pair wins a tie)."""
    bounds, start = [], 0
    for part in view.split(CLAUSE_MARK):
        if part.strip():
            bounds.append((start, start + len(part)))
        start += len(part) + 1
    if len(bounds) <= (3 if whole else 1):
        return [(0, len(view), _plain_logit(model, view))]
    pairs = [
        (first[0], second[1], _plain_logit(model, view[first[0] : second[1]]))
        for first, second in pairwise(bounds)
    ]
    return pairs + [(a, b, _plain_logit(model, view[a:b])) for a, b in bounds]


def _plain_riskiest(model: NgramModel, view: str, *, whole: bool = True) -> Window:
    windows = _plain_windows(model, view, whole=whole)
    start, end, logit = max(windows, key=lambda window: window[2])  # the first of equals
    probability = 1 / (1 + math.exp(-max(-30.0, min(30.0, logit))))
    return Window(start, end, probability, whole=windows == [(0, len(view), logit)])


def test_clause_scores_equal_the_plain_scoring(model: NgramModel, texts: list[str]) -> None:
    views = [normalise(text) for text in [*texts, *_long_messages(texts, 150)]]
    views += [
        "",
        CLAUSE_MARK,
        " | | ",
        "我",
        "a",
        "a|b",
        "我|你",
        "ab我cd你ef",
        "^$",
        "想死|",
        "\ud83d想死",
        "a😭b|想😭死",
    ]
    differing = []
    for view in views:
        fast, cjk = model.weights.tables.clause_sums(view)
        clauses = view.split(CLAUSE_MARK)
        plain = [_plain_clause_score(model, clause) for clause in clauses]
        if len(fast) != len(plain) or any(
            abs(a - b) > TOLERANCE for a, b in zip(fast, plain, strict=True)
        ):
            differing.append(view)
        has_cjk = [language(clause) == "zh" for clause in clauses]
        if (cjk.tolist() if cjk is not None else [False] * len(clauses)) != has_cjk:
            differing.append(view)
        # a short view is scored one position at a time: the same float as the clause sums'
        if model.weights.tables.short_score(view) != (sum(fast.tolist()), any(has_cjk)):
            differing.append(view)
    assert differing == []


def test_the_riskiest_window_equals_the_plain_scoring(model: NgramModel, texts: list[str]) -> None:
    views = [normalise(text) for text in [*texts, *_long_messages(texts, 150)]]
    differing = []
    pairs = [(model.riskiest(v), _plain_riskiest(model, v)) for v in views]
    pairs += [
        (model.riskiest(v, whole=False), _plain_riskiest(model, v, whole=False)) for v in views
    ]
    for fast, plain in pairs:
        if (fast.start, fast.end, fast.whole) != (plain.start, plain.end, plain.whole):
            differing.append(plain)
        elif abs(fast.probability - plain.probability) > TOLERANCE:
            differing.append(plain)
        elif (fast.probability >= THRESHOLD) != (plain.probability >= THRESHOLD):
            differing.append(plain)
    assert differing == []
    fired = sum(model.riskiest(view).probability >= THRESHOLD for view in views)
    assert 0 < fired < len(views)  # the sets hold windows on both sides of the threshold


def test_detections_with_the_model_equal_the_plain_scoring(
    model: NgramModel, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = [*texts, *_long_messages(texts, 150)]
    detector = CrisisDetector(model=model)
    fast = [detector.detect(text) for text in messages]
    monkeypatch.setattr(NgramModel, "riskiest", _plain_riskiest)
    plain = [detector.detect(text) for text in messages]
    assert [(d.risky, d.signals, d.matches, d.held_back) for d in fast] == [
        (d.risky, d.signals, d.matches, d.held_back) for d in plain
    ]
    assert sum(d.signals == ("ngram_model",) for d in fast) > 0


def test_the_shipped_model_file_is_what_saving_the_model_writes(
    model: NgramModel, tmp_path: Path
) -> None:
    # Saving writes the same bytes every time (so retraining on the same data changes no byte),
    # and loading gives back every weight and level.
    model.save(tmp_path / MODEL_FILE)
    assert (tmp_path / MODEL_FILE).read_bytes() == (DATA_DIR / MODEL_FILE).read_bytes()
    again = load_model.__wrapped__(tmp_path)
    assert again is not None
    assert again.weights.as_dict() == _by_gram(model.weights)
    assert (again.biases, again.threshold, again.vetoes, again.strict_vetoes) == (
        model.biases,
        model.threshold,
        model.vetoes,
        model.strict_vetoes,
    )


def test_a_model_of_a_few_weights_scores_them(tmp_path: Path) -> None:
    weights = {
        "want": 1.0,
        "want die": 2.0,
        "want * now": 0.5,
        "死": 0.25,
        "想死": 4.0,
        "^想死": 8.0,
    }
    model = NgramModel(Weights.of(weights), {"en": 0.0, "zh": 0.0})
    assert Weights.of(weights).as_dict() == weights
    assert model.score("i want die now") == 1.0 + 2.0 + 0.5
    assert model.score("want|die now") == 1.0  # no n-gram crosses a clause mark
    assert model.score("想死") == 0.25 + 4.0 + 8.0
    assert model.score("我想死了") == 0.25 + 4.0
    model.save(tmp_path / MODEL_FILE)
    again = load_model.__wrapped__(tmp_path)
    assert again is not None and again.score("我想死了 want die") == 0.25 + 4.0 + 1.0 + 2.0
