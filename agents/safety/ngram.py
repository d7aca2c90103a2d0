"""A small n-gram risk model: logistic regression over the words and characters of the view.

It is the detector's second, learned layer: the lexicon names what it knows, this scores how
much a clause *reads like* the risky cases it was trained on, so new wordings of a known idea
("I'm logging off permanently") can fire without a lexicon line. Weights are plain JSON
(`data/crisis_ngram_model.json`), trained by `python -m agents.safety.train_ngram`; inference
is a sum of dictionary lookups per clause, deterministic and offline. A message is scored per
window of two adjacent clauses (a short message as a whole), so a risky sentence buried in a
long message is not diluted by the rest.

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
from functools import cache, cached_property
from itertools import accumulate, chain, compress, count, islice, repeat
from operator import add, eq, lshift, or_, sub
from pathlib import Path

from agents.safety.normalise import CJK_CLASS, CLAUSE_MARK, DATA_DIR, contains_cjk

MODEL_FILE = "crisis_ngram_model.json"
LANGS = ("en", "zh")
THRESHOLD = 0.5  # the biases are shifted so that every language fires here
_WORD = re.compile(r"[a-z]+")
_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
_WHOLE_CLAUSES = 3  # a message with at most this many clauses is scored as a whole
_WINDOW_CLAUSES = 2


def clause_features(clause: str) -> chain[str]:
    """The n-grams of one clause, as trained on. Scoring finds the same n-grams in the whole
    view at once (`_Tables`), without building them as strings."""
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
    # The same for a means, a method, a plan, a farewell or self-harm: far lower (none: never).
    strict_vetoes: dict[str, float] = field(default_factory=dict)

    def probability(self, view: str) -> float:
        return _logistic(self.biases[language(view)] + self.score(view))

    def score(self, view: str) -> float:
        """The weights' sum over the view's n-grams (no bias)."""
        return sum(self._tables.clause_sums(view)[0])

    def riskiest(self, view: str) -> Window:
        """The window of the view the model finds riskiest (offsets into the view)."""
        parts = view.split(CLAUSE_MARK)
        kept = list(compress(count(), map(str.strip, parts)))  # the clauses that are not blank
        if len(kept) <= _WHOLE_CLAUSES:
            return Window(0, len(view), self.probability(view))
        # The model is linear and no n-gram crosses a clause mark: a window's score is the sum
        # of its clauses' scores, so every clause is scored once. The riskiest window is the one
        # farthest over its language's threshold (the biases differ by language); a window is
        # Chinese when one of its clauses holds a CJK character (the clauses between two
        # adjacent ones are blank).
        sums, cjk = self._tables.clause_sums(view)
        scores = list(map(add, map(sums.__getitem__, kept[:-1]), map(sums.__getitem__, kept[1:])))
        if cjk is None:
            logits = [self.biases["en"] + score for score in scores]
        else:
            zh = map(or_, map(cjk.__getitem__, kept[:-1]), map(cjk.__getitem__, kept[1:]))
            bias = (self.biases["en"], self.biases["zh"])
            logits = list(map(add, map(bias.__getitem__, zh), scores))
        best = logits.index(max(logits))  # the first of equals
        first, last = kept[best], kept[best + _WINDOW_CLAUSES - 1]
        # offsets: the clauses before, each with its mark
        start = sum(map(len, parts[:first])) + first
        end = sum(map(len, parts[: last + 1])) + last
        return Window(start, end, _logistic(logits[best]))

    @cached_property
    def _tables(self) -> _Tables:
        return _Tables.of(self.weights)

    def to_json(self) -> str:
        weights = {gram: round(weight, 4) for gram, weight in sorted(self.weights.items())}
        body = {
            "biases": {lang: round(bias, 6) for lang, bias in sorted(self.biases.items())},
            "threshold": self.threshold,
            "vetoes": {lang: round(level, 6) for lang, level in sorted(self.vetoes.items())},
            "strict_vetoes": {
                lang: round(level, 6) for lang, level in sorted(self.strict_vetoes.items())
            },
            "weights": weights,
        }
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


# Scoring a whole view at once, by C-level maps over all its n-grams: the same sums as
# `clause_features` clause by clause (a test keeps them equal), without the per-clause Python
# work or a string built per CJK n-gram (2,000 characters of Chinese are 7,500 n-grams).
_ENCODING = "utf-16-le"  # every CJK character of the class is one 16-bit unit
_NOT_CJK = re.compile(rf"[^{CJK_CLASS}{re.escape(CLAUSE_MARK)}]+")
_EDGE = "#"  # the end of one CJK run and the start of the next (`$^`), in the scored string
_LATIN_TOKEN = re.compile(rf"[a-z]+|{re.escape(CLAUSE_MARK)}")


def _codes(grams: list[str], size: int) -> list[int]:
    """CJK n-grams (1 to 3 characters) as the integers their UTF-16 units make, zero-padded to
    `size` units, read the way `_Tables.cjk_weights` reads them from the scored string."""
    padded = "".join(gram.ljust(size, "\0") for gram in grams)
    return memoryview(padded.encode(_ENCODING)).cast({1: "H", 2: "I", 4: "Q"}[size]).tolist()


def _edge_spelling(gram: str) -> str:
    """A CJK n-gram as the scored string spells it: a run's start (`^`) and end (`$`) are `#`."""
    return gram.replace("^", _EDGE).replace("$", _EDGE)


@dataclass(frozen=True)
class _Tables:
    """The weights, laid out for scoring a whole view. CJK n-grams are keyed by the integer of
    their UTF-16 units, and each holds the weights of its prefixes too (a pair holds its first
    character's, a triple its first pair's and character's), so a position costs one lookup
    per length with the shorter one as the default."""

    words: dict[str, int]  # every word of a latin n-gram -> its number (from 1)
    word_bits: int  # a word pair is keyed `first << word_bits | second`
    latin_words: list[float]  # by word number (0: a word no n-gram holds, or a clause mark)
    latin_pairs: dict[int, float]  # "a b" -> w(a) + w(a b)
    latin_skips: dict[int, float]  # "a * c" -> w(a * c)
    cjk_chars: list[float]  # by UTF-16 unit
    cjk_pairs: dict[int, float]  # ab -> w(a) + w(ab)
    cjk_triples: dict[int, float]  # abc -> w(a) + w(ab) + w(abc)

    @classmethod
    def of(cls, weights: dict[str, float]) -> _Tables:
        latin = {tuple(gram.split(" ")): w for gram, w in weights.items() if gram.isascii()}
        words: dict[str, int] = {}
        for gram in latin:
            for word in gram[:: len(gram) - 1 or 1]:  # "a * c": the words are a and c
                words.setdefault(word, len(words) + 1)
        bits = len(words).bit_length()
        latin_words = [0.0] * (len(words) + 1)
        latin_pairs: dict[int, float] = {}
        latin_skips: dict[int, float] = {}
        for gram, w in latin.items():
            if len(gram) == 1:
                latin_words[words[gram[0]]] = w
                continue
            key = words[gram[0]] << bits | words[gram[-1]]
            if len(gram) == 2:
                latin_pairs[key] = latin.get(gram[:1], 0.0) + w
            else:
                latin_skips[key] = w
        cjk = {gram: w for gram, w in weights.items() if not gram.isascii()}
        chars = [0.0] * 0x10000
        for gram, w in cjk.items():
            if len(gram) == 1:
                chars[ord(gram)] = w
        tables: list[dict[int, float]] = []
        # Equal sums share one float (fewer objects for the lookups to reach in memory).
        floats: dict[float, float] = {}
        for length, size in ((2, 2), (3, 4)):
            grams = [gram for gram in cjk if len(gram) == length]
            # the weights of its prefixes too: w(a) + w(ab) (+ w(abc))
            totals = [
                sum(cjk.get(gram[:end], 0.0) for end in range(1, length)) + cjk[gram]
                for gram in grams
            ]
            codes = _codes(list(map(_edge_spelling, grams)), size)
            tables.append(dict(zip(codes, map(floats.setdefault, totals, totals), strict=True)))
        pairs, triples = tables
        return cls(words, bits, latin_words, latin_pairs, latin_skips, chars, pairs, triples)

    def clause_sums(self, view: str) -> tuple[list[float], list[bool] | None]:
        """The weights' sum over each clause of `view.split(CLAUSE_MARK)`, blank ones included,
        and whether each holds a CJK character (None: no clause does)."""
        sums = [0.0] * (view.count(CLAUSE_MARK) + 1)
        cjk = None
        has_cjk = contains_cjk(view)
        if _WORD.search(view):
            sums = self._sparse_latin_sums(view, sums) if has_cjk else self._latin_sums(view)
        if has_cjk:
            cjk_sums, cjk = self._cjk_sums(view)
            sums = list(map(add, sums, cjk_sums))
        return sums, cjk

    def _sparse_latin_sums(self, view: str, sums: list[float]) -> list[float]:
        """`_latin_sums` of a view whose latin words are in a few of its clauses (Chinese with
        an "ok" or an "app"): only those clauses are scored, joined by clause marks (no n-gram
        crosses one, so each clause's sum is the same), the others stay 0."""
        clauses = view.split(CLAUSE_MARK)
        worded = list(compress(count(), map(_WORD.search, clauses)))
        scored = self._latin_sums(CLAUSE_MARK.join(map(clauses.__getitem__, worded)))
        for index, total in zip(worded, scored, strict=True):
            sums[index] = total
        return sums

    def _latin_sums(self, view: str) -> list[float]:
        # Two tokens per clause mark: no word pair, nor pair with one word between, spans one.
        tokens = _LATIN_TOKEN.findall(view.replace(CLAUSE_MARK, CLAUSE_MARK * 2))
        numbers = list(map(self.words.get, tokens, repeat(0)))  # a pair with a 0 is no key
        firsts = list(map(lshift, numbers, repeat(self.word_bits)))
        at = list(
            map(
                add,
                # 0 (no key) as the last pair: the last word's own weight is its default
                map(
                    self.latin_pairs.get,
                    chain(map(or_, firsts, numbers[1:]), (0,)),
                    map(self.latin_words.__getitem__, numbers),
                ),
                chain(
                    map(self.latin_skips.get, map(or_, firsts, numbers[2:]), repeat(0.0)),
                    (0.0, 0.0),
                ),
            )
        )
        # A clause's n-grams start between the first of its opening marks and the next one's.
        marks = list(compress(count(), map(eq, tokens, repeat(CLAUSE_MARK))))[::2]
        return _segment_sums(at, [0, *marks], [*marks, len(at)])

    def _cjk_sums(self, view: str) -> tuple[list[float], list[bool]]:
        # The CJK runs, one character between two (`#`, or the clause mark where there is
        # one, read as `#`): `#run#run|run#`. Every n-gram within a run, with its edges, is
        # spelt there once; the others hold an edge inside and are no key.
        core = _NOT_CJK.sub(_EDGE, view)
        core = core.replace(_EDGE + CLAUSE_MARK, CLAUSE_MARK).replace(
            CLAUSE_MARK + _EDGE, CLAUSE_MARK
        )
        edged = _EDGE + core + _EDGE
        at = self.cjk_weights(edged.replace(CLAUSE_MARK, _EDGE))
        clauses = edged.split(CLAUSE_MARK)
        lengths = list(map(len, clauses))
        # A clause's n-grams start from its opening mark (a run's start) to the next mark.
        ends = list(map(add, accumulate(lengths), count()))
        cjk = list(map(bool, map(str.strip, clauses, repeat(_EDGE))))
        return _segment_sums(at, [0, *ends[:-1]], ends), cjk

    def cjk_weights(self, edged: str) -> list[float]:
        """Per position of `edged`, the weights of the character, pair and triple it starts.
        The codes are read from the UTF-16 bytes as 16-, 32- and 64-bit integers: pairs at
        even and odd positions from two reads; triples at each position modulo 4 from a copy
        with every fourth character zeroed, so that each 64-bit read holds three characters."""
        size = len(edged)
        raw = edged.encode(_ENCODING) + bytes(8)  # a code with a zero unit is no key
        chars = memoryview(raw).cast("H")
        pairs = [
            memoryview(raw)[2 * odd : 2 * odd + 4 * ((len(raw) - 2 * odd) // 4)].cast("I")
            for odd in (0, 1)
        ]
        at = [0.0] * size
        for phase in range(4):
            length = len(range(phase, size, 4))
            if not length:
                continue
            masked = bytearray(raw)
            for byte in (2 * phase + 6, 2 * phase + 7):  # the fourth character from `phase`
                masked[byte::8] = bytes(len(range(byte, len(masked), 8)))
            triples = memoryview(masked)[2 * phase : 2 * phase + 8 * length].cast("Q")
            at[phase::4] = map(
                self.cjk_triples.get,
                triples,
                map(
                    self.cjk_pairs.get,
                    pairs[phase % 2][phase // 2 :: 2][:length],
                    map(self.cjk_chars.__getitem__, chars[phase::4][:length]),
                ),
            )
        return at


def _segment_sums(at: list[float], starts: list[int], ends: list[int]) -> list[float]:
    """The sums of `at[start:end]` for segments that follow one another from 0: summed from one
    iterator, in the same order as a slice's sum (the same floats), without copying slices."""
    values = iter(at)
    return list(map(sum, map(islice, repeat(values), map(sub, ends, starts))))


def _logistic(score: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))


@cache
def load_model(data_dir: Path = DATA_DIR) -> NgramModel | None:
    """The shipped model, read once per process (None when no model file is shipped)."""
    path = data_dir / MODEL_FILE
    if not path.exists():
        return None
    body = json.loads(path.read_text(encoding="utf-8"))
    model = NgramModel(
        body["weights"],
        body["biases"],
        body["threshold"],
        body.get("vetoes", {}),
        body.get("strict_vetoes", {}),
    )
    _ = model._tables  # laid out now, with the weights, rather than on the first message
    return model
