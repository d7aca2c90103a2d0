"""A small n-gram risk model: logistic regression over character and word n-grams of the view.

It is the detector's second, learned layer: the lexicon names what it knows, this scores how
much a clause *reads like* the risky cases it was trained on, so new wordings of a known idea
("I'm logging off permanently") can fire without a lexicon line. Weights are plain JSON
(`data/crisis_ngram_model.json`), trained by `python -m agents.safety.train_ngram` on the
development and tuning sets; inference is a dictionary sum per window, deterministic and
offline. A message is scored per window of two adjacent clauses (a short message as a whole),
so a risky sentence buried in a long message is not diluted by the rest.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

from agents.safety.normalise import CLAUSE_MARK, DATA_DIR

MODEL_FILE = "crisis_ngram_model.json"
_CHAR_NGRAMS = (2, 3, 4)
_WORD = re.compile(r"[a-z]+")
_WHOLE_CLAUSES = 3  # a message with at most this many clauses is scored as a whole
_WINDOW_CLAUSES = 2


def features(view: str) -> list[str]:
    """Character 2-4-grams (spaces kept, so word edges count) and latin words and word pairs."""
    padded = f" {view} "
    grams = [padded[i : i + n] for n in _CHAR_NGRAMS for i in range(len(padded) - n + 1)]
    words = _WORD.findall(view)
    grams += [f"w:{word}" for word in words]
    grams += [f"b:{first} {second}" for first, second in pairwise(words)]
    return grams


@dataclass(frozen=True)
class Window:
    start: int
    end: int
    probability: float


@dataclass(frozen=True)
class NgramModel:
    weights: dict[str, float]
    bias: float
    threshold: float  # a window at or above it fires

    def probability(self, view: str) -> float:
        return _logistic(self.bias + self._sum(view))

    def riskiest(self, view: str) -> Window:
        """The window of the view the model finds riskiest (offsets into the view)."""
        bounds = _clauses(view)
        if len(bounds) <= _WHOLE_CLAUSES:
            return Window(0, len(view), self.probability(view))
        # The model is linear: a window's score is the sum of its clauses' scores, so every
        # clause is scored once (n-grams across a clause mark are left out).
        sums = [self._sum(view[start:end]) for start, end in bounds]
        best, index = max(
            (sum(sums[i : i + _WINDOW_CLAUSES]), i) for i in range(len(sums) - _WINDOW_CLAUSES + 1)
        )
        start, end = bounds[index][0], bounds[index + _WINDOW_CLAUSES - 1][1]
        return Window(start, end, _logistic(self.bias + best))

    def _sum(self, text: str) -> float:
        return sum(filter(None, map(self.weights.get, features(text))))

    def to_json(self) -> str:
        weights = {gram: round(weight, 4) for gram, weight in sorted(self.weights.items())}
        body = {"bias": round(self.bias, 4), "threshold": self.threshold, "weights": weights}
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def _logistic(score: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))


def _clauses(view: str) -> list[tuple[int, int]]:
    bounds: list[tuple[int, int]] = []
    start = 0
    for part in view.split(CLAUSE_MARK):
        end = start + len(part)
        if part.strip():
            bounds.append((start, end))
        start = end + 1
    return bounds


@cache
def load_model(data_dir: Path = DATA_DIR) -> NgramModel | None:
    """The shipped model, read once per process (None when no model file is shipped)."""
    path = data_dir / MODEL_FILE
    if not path.exists():
        return None
    body = json.loads(path.read_text(encoding="utf-8"))
    return NgramModel(body["weights"], body["bias"], body["threshold"])
