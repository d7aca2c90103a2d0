"""A small n-gram risk model: logistic regression over the words and characters of the view.

It is the detector's second, learned layer: the lexicon names what it knows, this scores how
much a clause *reads like* the risky cases it was trained on, so new wordings of a known idea
("I'm logging off permanently") can fire without a lexicon line. The weights are numpy arrays
(`data/crisis_ngram_model.npz`, laid out by `Weights`), trained by
`python -m agents.safety.train_ngram`; inference is a sum of table lookups per clause,
vectorised over the whole view (a short one position by position), deterministic and offline.
A message is scored per window of one or two adjacent clauses (a short message as a whole), so a
risky sentence buried in a long message is not diluted by the rest, nor by its neighbour.

Features, per clause (none crosses a clause mark): latin words, adjacent word pairs and word
pairs with one word between ("want * die"); Chinese characters, and character pairs and triples
within a run of CJK (with `^` / `$` at the run's edges). Each language has its own bias, set by
training so that a window fires at probability 0.5 exactly where the threshold chosen for that
language on the selection sets lies (a window holding a CJK character is scored as Chinese).
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from itertools import chain, count, repeat
from operator import add
from pathlib import Path

import numpy as np

from agents.safety.normalise import CJK_CLASS, CLAUSE_MARK, DATA_DIR, contains_cjk

MODEL_FILE = "crisis_ngram_model.npz"
LANGS = ("en", "zh")
THRESHOLD = 0.5  # the biases are shifted so that every language fires here
_WORD = re.compile(r"[a-z]+")
# Every byte but a latin letter as a space: the words of a view's UTF-8 bytes are then its
# `_WORD` runs (no byte of a multi-byte character is ASCII).
_LETTERS_ONLY = bytes(code if 97 <= code <= 122 else 32 for code in range(256))
_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
WHOLE_CLAUSES = 3  # a message with at most this many clauses is scored as a whole


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


def windowed(view: str) -> bool:
    """Whether `riskiest` scores the view per window (more than WHOLE_CLAUSES clauses that are
    not blank) rather than whole."""
    if view.count(CLAUSE_MARK) < WHOLE_CLAUSES:
        return False
    return len(_Spelt.of(view).filled()) > WHOLE_CLAUSES


def language(text: str) -> str:
    return "zh" if contains_cjk(text) else "en"


@dataclass(frozen=True)
class Window:
    start: int
    end: int
    probability: float
    whole: bool = True  # the view scored as one window (a short message), not one of many


@dataclass(frozen=True)
class NgramModel:
    weights: Weights
    biases: dict[str, float]  # per language; shifted so that THRESHOLD is the chosen threshold
    threshold: float = THRESHOLD  # a window at or above it fires
    # Per language, the probability under which the riskiest window holds back what the lexicon
    # fired on (the signals the detector lets it weigh); chosen by cross-validation in training.
    vetoes: dict[str, float] = field(default_factory=dict)
    # The same for a means, a method, a plan, a farewell or self-harm: far lower (none: never).
    strict_vetoes: dict[str, float] = field(default_factory=dict)
    # Per language, the probability at which the riskiest of a long message's many windows
    # fires (none: `threshold`): the highest of dozens of windows of ordinary text is higher
    # than one short message's score, so it has its own threshold, chosen on long texts alone.
    window_thresholds: dict[str, float] = field(default_factory=dict)

    def fires(self, window: Window, lang: str) -> bool:
        """Whether `window` (the riskiest of a view in `lang`) is at or over its threshold."""
        if window.whole:
            return window.probability >= self.threshold
        return window.probability >= self.window_thresholds.get(lang, self.threshold)

    def probability(self, view: str) -> float:
        if len(view) <= _SHORT_VIEW:
            score, zh = self.weights.tables.short_score(view)
            return _logistic(self.biases["zh" if zh else "en"] + score)
        return self._probability(view, _Spelt.of(view))

    def score(self, view: str) -> float:
        """The weights' sum over the view's n-grams (no bias)."""
        return sum(self.weights.tables.clause_sums(view)[0].tolist())

    def _probability(self, view: str, spelt: _Spelt) -> float:
        sums, cjk = self.weights.tables.clause_sums(view, spelt)
        lang = "en" if cjk is None else "zh"  # as `language`: whether a unit is CJK
        return _logistic(self.biases[lang] + sum(sums.tolist()))

    def riskiest(self, view: str, *, whole: bool = True) -> Window:
        """The window of the view the model finds riskiest (offsets into the view). `whole`:
        a view of at most WHOLE_CLAUSES clauses is one window; without it, any view of two
        clauses or more is scored per window."""
        if whole and view.count(CLAUSE_MARK) < WHOLE_CLAUSES:  # (most chat messages)
            return Window(0, len(view), self.probability(view))
        spelt = _Spelt.of(view)
        kept = spelt.filled()
        if len(kept) <= (WHOLE_CLAUSES if whole else 1):
            return Window(0, len(view), self._probability(view, spelt))
        # The model is linear and no n-gram crosses a clause mark: a window's score is the sum
        # of its clauses' scores, so every clause is scored once. The riskiest window is the one
        # farthest over its language's threshold (the biases differ by language); a window is
        # Chinese when one of its clauses holds a CJK character (the clauses between two
        # adjacent ones are blank). A clause is a window on its own too: paired only with its
        # neighbours, a one-sentence risk in a long message lost to an ordinary neighbour's
        # score (`bench/crisis_long_messages.py`).
        sums, cjk = self.weights.tables.clause_sums(view, spelt)
        firsts, seconds = kept[:-1], kept[1:]
        pairs = sums[firsts] + sums[seconds]
        singles = sums[kept]
        if cjk is None:
            pair_logits = self.biases["en"] + pairs
            single_logits = self.biases["en"] + singles
        else:
            zh = cjk[firsts] | cjk[seconds]
            pair_logits = np.where(zh, self.biases["zh"], self.biases["en"]) + pairs
            single_logits = np.where(cjk[kept], self.biases["zh"], self.biases["en"]) + singles
        best = int(pair_logits.argmax())  # the first of equals
        first, last, logit = int(kept[best]), int(kept[best + 1]), float(pair_logits[best])
        alone = int(single_logits.argmax())
        if single_logits[alone] > logit:
            first = last = int(kept[alone])
            logit = float(single_logits[alone])
        if len(spelt.units) == len(view):  # one unit per character: offsets are unit offsets
            marks = np.flatnonzero(spelt.units == _MARK_UNIT)
            start = int(marks[first - 1]) + 1 if first else 0
            end = int(marks[last]) if last < len(marks) else len(view)
        else:  # a character beyond the 16-bit range is two units
            parts = view.split(CLAUSE_MARK)
            # offsets: the clauses before, each with its mark
            start = sum(map(len, parts[:first])) + first
            end = sum(map(len, parts[: last + 1])) + last
        return Window(start, end, _logistic(logit), whole=False)

    def save(self, path: Path) -> None:
        """Write the model file: byte for byte the same for the same model (fixed zip entry
        times, weights rounded to 4 decimals, levels to 6, as the JSON file had them)."""
        meta = {
            "biases": {lang: round(bias, 6) for lang, bias in sorted(self.biases.items())},
            "threshold": self.threshold,
            "vetoes": {lang: round(level, 6) for lang, level in sorted(self.vetoes.items())},
            "strict_vetoes": {
                lang: round(level, 6) for lang, level in sorted(self.strict_vetoes.items())
            },
            "window_thresholds": {
                lang: round(level, 6) for lang, level in sorted(self.window_thresholds.items())
            },
        }
        entries = {
            _META: json.dumps(meta, separators=(",", ":")).encode(),
            _WORDS: "\n".join(self.weights.words).encode(),
        }
        for kind in _KINDS:
            rounded = np.array([round(weight, 4) for weight in self.weights.values[kind].tolist()])
            entries[f"{kind}.npy"] = _npy(self.weights.grams[kind])
            entries[f"{kind}{_VALUES}.npy"] = _npy(rounded)
        # stored, not compressed: the weights hardly compress, and a stored entry loads as is
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
            for name, body in entries.items():
                archive.writestr(zipfile.ZipInfo(name, date_time=_ENTRY_TIME), body)


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


_META = "meta.json"
_WORDS = "words.txt"
_VALUES = "_weights"
_ENTRY_TIME = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest: the same bytes on every write
_EDGE = "#"  # a CJK run's start (`^`) or end (`$`), as the tables spell it
_EDGE_UNIT = ord(_EDGE)
# Per kind of n-gram, how many integers spell one: latin n-grams as word numbers (a word, a
# pair, a pair with one word between), CJK ones as UTF-16 units (every CJK character of the
# class is one unit).
_KINDS = {"word": 1, "word_pair": 2, "word_skip": 2, "cjk_char": 1, "cjk_pair": 2, "cjk_triple": 3}
_CJK_KINDS = ("cjk_char", "cjk_pair", "cjk_triple")
_ENCODING = "utf-16-le"


@dataclass(frozen=True, eq=False)
class Weights:
    """The weights as arrays, the model file's layout: per kind of n-gram (`_KINDS`) its rows
    of integers, sorted, and their weights. Latin words are numbered from 1 in sorted order
    (`words`); a CJK run's edges are spelt `#` (`^a` and `a$` stay apart by position)."""

    words: tuple[str, ...]
    grams: dict[str, np.ndarray]  # kind -> (n, length) integers, rows in ascending order
    values: dict[str, np.ndarray]  # kind -> (n,) float64

    @classmethod
    def of(cls, weights: Mapping[str, float]) -> Weights:
        latin = [(gram.split(" "), w) for gram, w in weights.items() if gram.isascii()]
        words = tuple(sorted({word for parts, _ in latin for word in (parts[0], parts[-1])}))
        number = dict(zip(words, count(1)))
        rows: dict[str, list[list[int]]] = {kind: [] for kind in _KINDS}
        found: dict[str, list[float]] = {kind: [] for kind in _KINDS}
        for parts, w in latin:
            kind = ("word", "word_pair", "word_skip")[len(parts) - 1]  # "a * c": a and c
            rows[kind].append([number[parts[0]], number[parts[-1]]][: _KINDS[kind]])
            found[kind].append(w)
        for gram, w in weights.items():
            if not gram.isascii():
                spelt = gram.replace("^", _EDGE).replace("$", _EDGE)
                kind = _CJK_KINDS[len(gram) - 1]
                rows[kind].append(list(memoryview(spelt.encode(_ENCODING)).cast("H")))
                found[kind].append(w)
        grams, values = {}, {}
        for kind, length in _KINDS.items():
            dtype = np.uint16 if kind in _CJK_KINDS else np.int32
            table = np.array(rows[kind], dtype=dtype).reshape(-1, length)
            order = np.lexsort(table.T[::-1])
            grams[kind] = table[order]
            values[kind] = np.array(found[kind], dtype=np.float64)[order]
        return cls(words, grams, values)

    @classmethod
    def read(cls, archive: np.lib.npyio.NpzFile) -> Weights:
        words = archive[_WORDS].decode()
        return cls(
            tuple(words.split("\n")) if words else (),
            {kind: archive[kind] for kind in _KINDS},
            {kind: archive[kind + _VALUES] for kind in _KINDS},
        )

    def __len__(self) -> int:
        return sum(map(len, self.values.values()))

    def as_dict(self) -> dict[str, float]:
        """The weights by n-gram, as `clause_features` spells them."""
        spelt: dict[str, float] = {}
        words = ("", *self.words)
        for kind, joiner in (("word", ""), ("word_pair", " "), ("word_skip", " * ")):
            grams = (joiner.join(map(words.__getitem__, row)) for row in self.grams[kind].tolist())
            spelt.update(zip(grams, self.values[kind].tolist(), strict=True))
        for kind in _CJK_KINDS:
            for row, w in zip(self.grams[kind], self.values[kind].tolist(), strict=True):
                gram = row.astype("<u2").tobytes().decode(_ENCODING)
                if len(gram) > 1:
                    gram = gram[0].replace(_EDGE, "^") + gram[1:-1] + gram[-1].replace(_EDGE, "$")
                spelt[gram] = w
        return spelt

    @cached_property
    def tables(self) -> _Tables:
        return _Tables.of(self)


# Scoring a whole view at once, vectorised over all its positions: the same sums as
# `clause_features` clause by clause (a test keeps them equal), without a Python step or a
# string per n-gram (2,000 characters of Chinese are 7,500 n-grams).
_MARK_UNIT = ord(CLAUSE_MARK)
# Each UTF-16 unit as the CJK tables read it: a CJK character as itself, anything else as an
# edge (so an n-gram across two runs, or across a clause mark, holds an edge inside and is no key).
_CJK_OR_EDGE = np.full(0x10000, _EDGE_UNIT, dtype=np.int64)
for _first, _last in re.findall(r"(.)-(.)", CJK_CLASS):
    _CJK_OR_EDGE[ord(_first) : ord(_last) + 1] = np.arange(ord(_first), ord(_last) + 1)
_IS_CJK = _CJK_OR_EDGE != _EDGE_UNIT
_IS_CJK_BYTES = _IS_CJK.tobytes()  # the same, read one unit at a time in Python
_SHORT_VIEW = 64  # characters: at most this many are scored in Python (see `short_score`)
_UINT64 = (1 << 64) - 1
# A unit that makes a clause not blank (`str.strip` would keep it): not a space, not a mark.
_NOT_BLANK = np.ones(0x10000, dtype=bool)
_NOT_BLANK[[ord(space) for space in filter(str.isspace, map(chr, range(0x10000)))]] = False
_NOT_BLANK[_MARK_UNIT] = False


@dataclass(frozen=True)
class _Sorted:
    """A lookup table as sorted keys and their values, with a last key above every other (so a
    search never runs off the end)."""

    keys: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, keys: np.ndarray, values: np.ndarray) -> _Sorted:
        order = keys.argsort(kind="stable")
        return cls(np.append(keys[order], np.iinfo(np.int64).max), np.append(values[order], 0.0))

    def get(self, keys: np.ndarray, default: np.ndarray | float) -> np.ndarray:
        at = self.keys.searchsorted(keys)
        return np.where(self.keys[at] == keys, self.values[at], default)

    @cached_property
    def _scalars(self) -> tuple[memoryview, memoryview]:
        return memoryview(self.keys), memoryview(self.values)

    def get_one(self, key: int, default: float) -> float:
        keys, values = self._scalars
        at = bisect_left(keys, key)
        return values[at] if keys[at] == key else default


_MULTIPLIER = 0x9E3779B97F4A7C15  # Fibonacci hashing: 2**64 / the golden ratio
_HASH_MULTIPLIER = np.uint64(_MULTIPLIER)
_NO_KEY = -1  # no n-gram's key is negative


@dataclass(frozen=True)
class _Keyed:
    """A lookup table for integer keys, looked up for a whole array of keys at once: a hash
    table with twice as many slots as keys, each key in its home slot, and the keys whose home
    another key took in a small sorted table, searched only for the keys homed where that
    happened. A lookup is a few array operations, with no loop and about one memory access per
    key (a binary search over the 141k triples took four times as long)."""

    shift: np.uint64  # a key's home slot: the top bits of key * _HASH_MULTIPLIER
    keys: np.ndarray  # by slot (_NO_KEY: empty)
    values: np.ndarray  # by slot
    crowded: np.ndarray  # by slot: whether a key homed there is in `others`
    others: _Sorted

    @classmethod
    def of(cls, keys: np.ndarray, values: np.ndarray) -> _Keyed:
        keys = keys.astype(np.int64)
        bits = max(1, (2 * len(keys) - 1).bit_length())
        shift = np.uint64(64 - bits)
        homes = _homes(keys, shift)
        slot_keys = np.full(1 << bits, _NO_KEY, dtype=np.int64)
        # of the keys with the same home, one stays there (which one, the check after says)
        slot_keys[homes] = keys
        placed = slot_keys[homes] == keys
        slot_values = np.zeros(1 << bits)
        slot_values[homes[placed]] = values[placed]
        crowded = np.zeros(1 << bits, dtype=bool)
        crowded[homes[~placed]] = True
        others = _Sorted.of(keys[~placed], values[~placed])
        return cls(shift, slot_keys, slot_values, crowded, others)

    @cached_property
    def _scalars(self) -> tuple[int, memoryview, memoryview, memoryview]:
        # memoryviews: an item reads as a Python int or float at once
        shift = int(self.shift)
        return shift, memoryview(self.keys), memoryview(self.values), memoryview(self.crowded)

    def get_one(self, key: int, default: float) -> float:
        """`get` for one key, in Python (the same slots, the same value)."""
        shift, keys, values, crowded = self._scalars
        home = (key * _MULTIPLIER & _UINT64) >> shift
        if keys[home] == key:
            return values[home]
        return self.others.get_one(key, default) if crowded[home] else default

    def get(self, keys: np.ndarray, default: np.ndarray | float) -> np.ndarray:
        homes = _homes(keys, self.shift)
        found = np.where(self.keys[homes] == keys, self.values[homes], default)
        elsewhere = np.flatnonzero(self.crowded[homes])
        if elsewhere.size:
            found[elsewhere] = self.others.get(keys[elsewhere], found[elsewhere])
        return found


def _homes(keys: np.ndarray, shift: np.uint64) -> np.ndarray:
    return ((keys.astype(np.uint64) * _HASH_MULTIPLIER) >> shift).astype(np.intp)


def _key(rows: np.ndarray, bits: int) -> np.ndarray:
    """Rows of integers as one integer each, the first highest (in the rows' order)."""
    keys = np.zeros(len(rows), dtype=np.int64)
    for column in rows.T.astype(np.int64):
        keys = keys << bits | column
    return keys


@dataclass(frozen=True)
class _Tables:
    """The weights, laid out for scoring a whole view. Each n-gram's entry holds the weights
    of its prefixes too (a word pair its first word's, a CJK pair its first character's, a
    triple its first pair's and character's), so a position's sum is the longest n-gram found
    there, the shorter ones as the default: the same floats, summed in the same order, as
    adding up `clause_features`' n-grams one by one."""

    words: dict[str, int]  # every word of a latin n-gram -> its number (from 1)
    word_bits: int  # a word pair is keyed `first << word_bits | second`
    latin_words: np.ndarray  # by word number (0: a word no n-gram holds)
    # pairs and pairs with one word between in one table (one lookup for both): "a b" -> w(a) +
    # w(a b), "a * c" -> w(a * c), keyed with `skip_flag` set
    latin_grams: _Keyed
    skip_flag: int
    cjk_chars: np.ndarray  # by UTF-16 unit
    # pairs and triples in one table (one lookup for both): ab -> w(a) + w(ab), abc -> w(a) +
    # w(ab) + w(abc); a pair's key is below 2**32, a triple's above
    cjk_grams: _Keyed

    @classmethod
    def of(cls, weights: Weights) -> _Tables:
        grams, values = weights.grams, weights.values
        bits = len(weights.words).bit_length()
        latin_words = np.zeros(len(weights.words) + 1)
        latin_words[grams["word"][:, 0]] = values["word"]
        pairs = grams["word_pair"]
        skip_flag = 1 << 2 * bits
        latin_grams = _Keyed.of(
            np.concatenate((_key(pairs, bits), skip_flag | _key(grams["word_skip"], bits))),
            np.concatenate((latin_words[pairs[:, 0]] + values["word_pair"], values["word_skip"])),
        )
        cjk_chars = np.zeros(0x10000)
        cjk_chars[grams["cjk_char"][:, 0]] = values["cjk_char"]
        pairs, triples = grams["cjk_pair"], grams["cjk_triple"]
        pair_keys = _key(pairs, 16)
        own_pairs = _Keyed.of(pair_keys, values["cjk_pair"])
        first_pairs = own_pairs.get(_key(triples[:, :2], 16), 0.0)
        cjk_grams = _Keyed.of(
            np.concatenate((pair_keys, _key(triples, 16))),
            np.concatenate(
                (
                    cjk_chars[pairs[:, 0]] + values["cjk_pair"],
                    cjk_chars[triples[:, 0]] + first_pairs + values["cjk_triple"],
                )
            ),
        )
        words = dict(zip(weights.words, count(1)))
        return cls(words, bits, latin_words, latin_grams, skip_flag, cjk_chars, cjk_grams)

    def short_score(self, view: str) -> tuple[float, bool]:
        """The weights' sum over a short view's n-grams, and whether it holds a CJK character:
        the lookups of `clause_sums`, one position at a time in Python (for a few dozen
        characters, cheaper than numpy's cost per call), summed in the same order (the same
        float as summing `clause_sums`)."""
        total, zh = 0, False
        for clause in view.split(CLAUSE_MARK):
            score = self._short_latin(clause) if _WORD.search(clause) else 0.0
            units = memoryview(clause.encode(_ENCODING, "surrogatepass")).cast("H")
            if any(map(_IS_CJK_BYTES.__getitem__, units)):
                zh = True
                score += self._short_cjk(units)
            total += score
        return total, zh

    def _short_latin(self, clause: str) -> float:
        numbers = list(map(self.words.get, _WORD.findall(clause), repeat(0)))
        words, get = self._latin_words, self.latin_grams.get_one
        total = 0
        for at, number in enumerate(numbers):
            first = number << self.word_bits
            weight = words[number]
            if at + 1 < len(numbers):
                weight = get(first | numbers[at + 1], weight)
            if at + 2 < len(numbers):
                weight += get(self.skip_flag | first | numbers[at + 2], 0.0)
            total += weight
        return total

    def _short_cjk(self, units: memoryview) -> float:
        edged = [_EDGE_UNIT, *(u if _IS_CJK_BYTES[u] else _EDGE_UNIT for u in units)]
        edged += (_EDGE_UNIT, _EDGE_UNIT)
        chars, get = self._cjk_chars, self.cjk_grams.get_one
        total = 0
        for at in range(len(units) + 1):
            first = edged[at]
            pair = first << 16 | edged[at + 1]
            total += get(pair << 16 | edged[at + 2], get(pair, chars[first]))
        return total

    @cached_property
    def _byte_words(self) -> dict[bytes, int]:
        """`words` keyed by their UTF-8 bytes."""
        return {word.encode(): number for word, number in self.words.items()}

    @cached_property
    def _latin_words(self) -> memoryview:
        return memoryview(self.latin_words)

    @cached_property
    def _cjk_chars(self) -> memoryview:
        return memoryview(self.cjk_chars)

    def clause_sums(
        self, view: str, spelt: _Spelt | None = None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The weights' sum over each clause of `view.split(CLAUSE_MARK)`, blank ones included,
        and whether each holds a CJK character (None: no clause does). `spelt`: the view's
        units, when the caller has them."""
        spelt = spelt or _Spelt.of(view)
        letters = spelt.units - np.uint16(ord("a")) < 26  # (below "a" wraps around)
        if letters.any():
            sums = self._latin_sums(view, spelt, letters)
        else:
            sums = np.zeros(spelt.clauses)
        is_cjk = _IS_CJK[spelt.units]
        if not is_cjk.any():
            return sums, None
        cjk = np.zeros(spelt.clauses, dtype=bool)
        cjk[spelt.clause[1:][is_cjk]] = True
        return sums + self._cjk_sums(spelt), cjk

    def _latin_sums(self, view: str, spelt: _Spelt, letters: np.ndarray) -> np.ndarray:
        # The words: the view's runs of latin letters, each in the clause of its first letter
        # (no word pair, nor pair with one word between, spans two clauses).
        starts = letters.copy()
        starts[1:] &= ~letters[:-1]
        clause = spelt.clause[1:][starts]
        # (in order, the same runs: `_WORD.findall(view)`, as UTF-8, found in C)
        words = view.encode("utf-8", "surrogatepass").translate(_LETTERS_ONLY).split()
        size = len(words)
        # a word no n-gram holds is 0: a pair with a 0 is no key
        numbers = np.fromiter(map(self._byte_words.get, words, repeat(0)), np.int64, size)
        firsts = numbers << self.word_bits
        found = self.latin_grams.get(
            np.concatenate((firsts[:-1] | numbers[1:], self.skip_flag | firsts[:-2] | numbers[2:])),
            np.nan,
        )
        pairs, skips = found[: size - 1], found[size - 1 :]
        pairs[clause[1:] != clause[:-1]] = np.nan
        skips[clause[2:] != clause[:-2]] = np.nan
        at = self.latin_words[numbers]
        # the last word's own weight is its default (no pair starts there)
        at[:-1] = np.where(np.isnan(pairs), at[:-1], pairs)
        at[:-2] += np.where(np.isnan(skips), 0.0, skips)
        return np.bincount(clause, weights=at, minlength=spelt.clauses)

    def _cjk_sums(self, spelt: _Spelt) -> np.ndarray:
        size = len(spelt.units)
        # The view as the tables read it, with an edge before and two after: an n-gram starts
        # at the edge before the view (a run's start) and at each unit.
        edged = np.full(size + 3, _EDGE_UNIT, dtype=np.int64)
        edged[1 : size + 1] = _CJK_OR_EDGE[spelt.units]
        pairs = edged[:-2] << 16 | edged[1:-1]
        found = self.cjk_grams.get(np.concatenate((pairs << 16 | edged[2:], pairs)), np.nan)
        triples, pairs = found[: size + 1], found[size + 1 :]
        # the longest n-gram found (no weight is NaN)
        at = np.where(
            np.isnan(triples),
            np.where(np.isnan(pairs), self.cjk_chars[edged[:-2]], pairs),
            triples,
        )
        # A clause's n-grams start from its opening mark (a run's start) to the next mark.
        return np.bincount(spelt.clause, weights=at, minlength=spelt.clauses)


@dataclass(frozen=True)
class _Spelt:
    """A view as UTF-16 units (a character beyond the 16-bit range is two), with their clauses."""

    units: np.ndarray
    clause: np.ndarray  # per position from the edge before the view: 0, then each unit's clause
    clauses: int  # as many as `view.split(CLAUSE_MARK)` gives

    @classmethod
    def of(cls, view: str) -> _Spelt:
        # (a lone surrogate, which JSON lets a client send, is one unit as well)
        units = np.frombuffer(view.encode(_ENCODING, "surrogatepass"), dtype=np.uint16)
        marks = np.zeros(len(units) + 1, dtype=np.int64)
        marks[1:] = units == _MARK_UNIT
        clause = marks.cumsum()  # a clause mark opens the next clause
        return cls(units, clause, int(clause[-1]) + 1)

    def filled(self) -> np.ndarray:
        """The indexes of the clauses that are not blank (a unit neither a space nor a clause
        mark), ascending."""
        counts = np.bincount(self.clause[1:][_NOT_BLANK[self.units]], minlength=self.clauses)
        return np.flatnonzero(counts)


def _logistic(score: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))


@cache
def load_model(data_dir: Path = DATA_DIR) -> NgramModel | None:
    """The shipped model, read once per process (None when no model file is shipped)."""
    path = data_dir / MODEL_FILE
    if not path.exists():
        return None
    with np.load(path) as archive:
        meta = json.loads(archive[_META])
        weights = Weights.read(archive)
    _ = weights.tables._byte_words  # laid out now, with the weights, not on the first message
    return NgramModel(
        weights,
        meta["biases"],
        meta["threshold"],
        meta["vetoes"],
        meta["strict_vetoes"],
        meta.get("window_thresholds", {}),
    )
