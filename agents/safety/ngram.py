"""A small n-gram risk model: logistic regression over the words and characters of the view.

It is the detector's second, learned layer: the lexicon names what it knows, this scores how
much a clause *reads like* the risky cases it was trained on, so new wordings of a known idea
("I'm logging off permanently") can fire without a lexicon line. Weights are plain JSON
(`data/crisis_ngram_model.json`), trained by `python -m agents.safety.train_ngram`; inference
is a dictionary sum per clause, deterministic and offline. A message is scored per window of
two adjacent clauses (a short message as a whole), so a risky sentence buried in a long message
is not diluted by the rest.

Features, per clause (none crosses a clause mark): latin words, adjacent word pairs and word
pairs with one word between ("want * die"); Chinese characters, and character pairs and triples
within a run of CJK (with `^` / `$` at the run's edges). Each language has its own bias, set by
training so that a window fires at probability 0.5 exactly where the threshold chosen for that
language on the selection sets lies (a window holding a CJK character is scored as Chinese).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cache
from itertools import chain, repeat
from operator import add
from pathlib import Path

from agents.safety.normalise import CLAUSE_MARK, DATA_DIR, contains_cjk

MODEL_FILE = "crisis_ngram_model.json"
LANGS = ("en", "zh")
THRESHOLD = 0.5  # the biases are shifted so that every language fires here
_WORD = re.compile(r"[a-z]+")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WHOLE_CLAUSES = 3  # a message with at most this many clauses is scored as a whole
_WINDOW_CLAUSES = 2


def clause_features(clause: str) -> chain[str]:
    """The n-grams of one clause (built by C-level maps: a 2,000-character message is scored
    well under a millisecond)."""
    parts: list[map[str] | list[str] | str] = []
    words = _WORD.findall(clause)
    if words:
        parts.append(words)
        parts.append(map(add, map(add, words, repeat(" ")), words[1:]))
        parts.append(map(add, map(add, words, repeat(" * ")), words[2:]))
    for run in _CJK_RUN.findall(clause):
        edged = f"^{run}$"
        pairs = list(map(add, edged, edged[1:]))
        parts += [run, pairs, map(add, pairs, edged[2:])]
    return chain.from_iterable(parts)


def features(view: str) -> list[str]:
    """Every clause's n-grams (what the model is trained on)."""
    return [gram for clause in view.split(CLAUSE_MARK) for gram in clause_features(clause)]


def language(text: str) -> str:
    return "zh" if contains_cjk(text) else "en"


@dataclass(frozen=True)
class Window:
    start: int
    end: int
    probability: float


@dataclass(frozen=True)
class NgramModel:
    weights: dict[str, float]
    biases: dict[str, float]  # per language; shifted so that THRESHOLD is the chosen threshold
    threshold: float = THRESHOLD  # a window at or above it fires
    # Per language, the probability under which the riskiest window holds back what the lexicon
    # fired on (the signals the detector lets it weigh); chosen by cross-validation in training.
    vetoes: dict[str, float] = field(default_factory=dict)

    def probability(self, view: str) -> float:
        return _logistic(self.biases[language(view)] + self.score(view))

    def score(self, view: str) -> float:
        """The weights' sum over the view's n-grams (no bias)."""
        return sum(map(self._clause_sum, view.split(CLAUSE_MARK)))

    def riskiest(self, view: str) -> Window:
        """The window of the view the model finds riskiest (offsets into the view)."""
        bounds = _clauses(view)
        if len(bounds) <= _WHOLE_CLAUSES:
            return Window(0, len(view), self.probability(view))
        # The model is linear: a window's score is the sum of its clauses' scores, so every
        # clause is scored once. The riskiest window is the one farthest over its language's
        # threshold (the biases differ by language).
        sums = [self._clause_sum(view[start:end]) for start, end in bounds]
        best: tuple[float, int] | None = None
        for index in range(len(sums) - _WINDOW_CLAUSES + 1):
            start, end = bounds[index][0], bounds[index + _WINDOW_CLAUSES - 1][1]
            logit = self.biases[language(view[start:end])] + sum(
                sums[index : index + _WINDOW_CLAUSES]
            )
            if best is None or logit > best[0]:
                best = (logit, index)
        assert best is not None
        logit, index = best
        start, end = bounds[index][0], bounds[index + _WINDOW_CLAUSES - 1][1]
        return Window(start, end, _logistic(logit))

    def _clause_sum(self, clause: str) -> float:
        return sum(map(self.weights.get, clause_features(clause), repeat(0.0)))

    def to_json(self) -> str:
        weights = {gram: round(weight, 4) for gram, weight in sorted(self.weights.items())}
        body = {
            "biases": {lang: round(bias, 6) for lang, bias in sorted(self.biases.items())},
            "threshold": self.threshold,
            "vetoes": {lang: round(level, 6) for lang, level in sorted(self.vetoes.items())},
            "weights": weights,
        }
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
    return NgramModel(body["weights"], body["biases"], body["threshold"], body.get("vetoes", {}))
