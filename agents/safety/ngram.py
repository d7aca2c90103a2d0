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
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from itertools import accumulate, chain, compress, count, islice, repeat
from operator import add, or_, sub
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
    # The CJK character pairs some weighted triple starts with: only those triples are built.
    _triple_starts: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        starts = frozenset(
            gram[:2] for gram in self.weights if len(gram) == 3 and not gram.isascii()
        )
        object.__setattr__(self, "_triple_starts", starts)

    def probability(self, view: str) -> float:
        return _logistic(self.biases[language(view)] + self.score(view))

    def score(self, view: str) -> float:
        """The weights' sum over the view's n-grams (no bias)."""
        return sum(self.clause_sums(view)[0])

    def clause_sums(self, view: str) -> tuple[list[float], list[bool]]:
        """Per clause (each part of `view.split(CLAUSE_MARK)`), the weights' sum over its
        n-grams, and whether it holds a CJK character.

        The whole view's n-grams are listed at once by C-level maps over one sequence per
        script (its latin words; its CJK runs with their edges), clause marks included: an
        n-gram reaching over a clause mark or a run edge holds something no trained n-gram
        has, so it weighs nothing. Each weight counts for the clause its n-gram starts in, by
        running totals cut at the clause marks: a message costs a few passes over lists, not
        a Python loop per clause or per n-gram."""
        get = self.weights.get
        tokens = _latin_tokens(view)
        marks = list(compress(count(), map(CLAUSE_MARK.__eq__, tokens)))[::_LATIN_MARKS]
        sums = _cut(_latin_starting(get, tokens), marks)
        if not contains_cjk(view):
            return sums, [False] * len(sums)
        edged = _cjk_edged(view)
        marks = [found.start() for found in _MARK.finditer(edged)]
        pairs = list(map(add, edged, edged[1:]))
        starting = map(
            add, map(get, edged, repeat(0.0)), chain(map(get, pairs, repeat(0.0)), (0.0,))
        )
        # Triples only where the pair starts a weighted one (about a quarter of ordinary text).
        at = list(compress(count(), map(self._triple_starts.__contains__, pairs)))
        triples = map(
            add, map(pairs.__getitem__, at), map(edged.__getitem__, map(add, at, repeat(2)))
        )
        triple_totals = list(accumulate(map(get, triples, repeat(0.0)), initial=0.0))
        cuts = [0, *map(bisect_left, repeat(at), marks), len(at)]
        # A clause's stretch of the edged string is only run edges ("^", "$") without CJK.
        chinese = list(map(bool, map(str.strip, edged.split(CLAUSE_MARK), repeat(_RUN_EDGES))))
        sums = list(
            map(
                add,
                map(add, sums, _cut(starting, marks)),
                map(
                    sub,
                    map(triple_totals.__getitem__, cuts[1:]),
                    map(triple_totals.__getitem__, cuts),
                ),
            )
        )
        return sums, chinese

    def riskiest(self, view: str) -> Window:
        """The window of the view the model finds riskiest (offsets into the view)."""
        bounds = _clauses(view)
        if len(bounds) <= _WHOLE_CLAUSES:
            return Window(0, len(view), self.probability(view))
        # The model is linear: a window's score is the sum of its clauses' scores, so every
        # clause is scored once. The riskiest window is the one farthest over its language's
        # threshold (the biases differ by language).
        every, every_chinese = self.clause_sums(view)
        kept = [index for _, _, index in bounds]
        sums = list(map(every.__getitem__, kept))
        chinese = list(map(every_chinese.__getitem__, kept))
        bias = (self.biases["en"], self.biases["zh"])
        logits = list(
            map(
                add,
                map(add, sums, islice(sums, 1, None)),
                map(bias.__getitem__, map(or_, chinese, islice(chinese, 1, None))),
            )
        )
        best = max(range(len(logits)), key=logits.__getitem__)
        start, end = bounds[best][0], bounds[best + _WINDOW_CLAUSES - 1][1]
        return Window(start, end, _logistic(logits[best]))

    def to_json(self) -> str:
        weights = {gram: round(weight, 4) for gram, weight in sorted(self.weights.items())}
        body = {
            "biases": {lang: round(bias, 6) for lang, bias in sorted(self.biases.items())},
            "threshold": self.threshold,
            "weights": weights,
        }
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def _logistic(score: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))


def _clauses(view: str) -> list[tuple[int, int, int]]:
    """The view's clauses that hold more than spaces: start, end, index among all clauses."""
    bounds: list[tuple[int, int, int]] = []
    start = 0
    for index, part in enumerate(view.split(CLAUSE_MARK)):
        end = start + len(part)
        if part.strip():
            bounds.append((start, end, index))
        start = end + 1
    return bounds


_LATIN_TOKEN = re.compile(rf"[a-z]+|{re.escape(CLAUSE_MARK)}")
_LATIN_MARKS = 2  # every clause mark is two tokens, so no word pair reaches over one
_MARK = re.compile(re.escape(CLAUSE_MARK))
_RUN_EDGES = "^$"
_NOT_CJK = re.compile(r"[^\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff|]+")


def _latin_tokens(view: str) -> list[str]:
    """The view's latin words in order, with each clause mark as two tokens of its own."""
    return _LATIN_TOKEN.findall(view.replace(CLAUSE_MARK, CLAUSE_MARK * 2))


def _cjk_edged(view: str) -> str:
    """The view with every stretch between CJK runs as "$^" (a run's end and the next one's
    start) and the clause marks kept: "^ab$^|$^cd$". Its characters, pairs and triples are the
    runs' n-grams of `clause_features` plus some with "$^" or the mark inside, never trained."""
    marked = view.replace(CLAUSE_MARK, f"\0{CLAUSE_MARK}\0")
    return f"^{_NOT_CJK.sub('$^', marked)}$"


def _latin_starting(get: Callable[[str, float], float], tokens: list[str]) -> list[float]:
    """Per latin token, the weights of the n-grams that start there: the word, the pair with
    the next word and the pair with one word between."""
    pairs = map(add, map(add, tokens, repeat(" ")), tokens[1:])
    skips = map(add, map(add, tokens, repeat(" * ")), tokens[2:])
    return list(
        map(
            add,
            map(add, map(get, tokens, repeat(0.0)), chain(map(get, pairs, repeat(0.0)), (0.0,))),
            chain(map(get, skips, repeat(0.0)), (0.0, 0.0)),
        )
    )


def _cut(values: Iterable[float], marks: list[int]) -> list[float]:
    """Per-item values added up per clause: the items before the first mark, then from each
    mark to the next (a mark's own n-grams weigh nothing)."""
    totals = list(accumulate(values, initial=0.0))
    edges = [0, *marks, len(totals) - 1]
    return list(map(sub, map(totals.__getitem__, edges[1:]), map(totals.__getitem__, edges)))


@cache
def load_model(data_dir: Path = DATA_DIR) -> NgramModel | None:
    """The shipped model, read once per process (None when no model file is shipped)."""
    path = data_dir / MODEL_FILE
    if not path.exists():
        return None
    body = json.loads(path.read_text(encoding="utf-8"))
    return NgramModel(body["weights"], body["biases"], body["threshold"])
