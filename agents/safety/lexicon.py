"""The crisis lexicon: patterns by signal, read from `data/crisis_lexicon_{lang}.txt`.

File format (one file per language): `[section]` headers, then one pattern per line (`#` starts
a comment). A pattern is a regular expression over the normalised view (see normalise.py) with
two conveniences: a space means "an optional space" (so "kill my self", "killmyself" and
"kill myself" read alike), and `{NAME}` is replaced by a fragment defined in the `[define]`
section as `NAME = regex`. Latin patterns are anchored at word edges; CJK patterns are not.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

import ahocorasick

from agents.safety.normalise import CLAUSE_MARK, DATA_DIR

LANGUAGES: tuple[str, ...] = ("en", "zh")
LEXICON_FILE = "crisis_lexicon_{lang}.txt"

# Signals that show risk on their own (subject to negation, subject and context checks).
STRONG_SIGNALS: tuple[str, ...] = (
    "explicit_intent",
    "passive_ideation",
    "burden",
    "plan",
    "farewell",
    "self_harm",
    "slang",
    "method",
)
# The bare word ("suicide", "自杀"): risk unless the message is about something or someone else.
MENTION = "mention"
# Components that show risk only together: a means with access to it or intent to use it,
# anywhere in the message; a death word with a wish or intent in the same clause.
MEANS, ACCESS, INTENT = "means", "access", "intent"
MEANS_PLAN = "means_plan"
DEATH, DESIRE = "death", "desire"
IDEATION = "ideation"
# The sections a candidate starts from: no match of theirs in a clause, nothing to check there.
GATED: tuple[str, ...] = (*STRONG_SIGNALS, MENTION, DEATH, MEANS)
# What keeps a match from firing.
BENIGN = "benign"  # idioms and hyperbole: a match inside one of these spans is ignored
PURPOSE = "purpose"  # an everyday purpose ("for the barbecue") cancels means and plan matches
CONTEXT = "context"  # fiction, coursework, news, prevention, helping someone else
GAME = "game"  # in a game even "I jumped off the cliff" is play
NEGATION = "negation"  # "not", "never", "不", "没有" right before a match
THIRD_PERSON = "third_person"
FIRST_PERSON = "first_person"

SECTIONS: tuple[str, ...] = (
    *STRONG_SIGNALS,
    MENTION,
    MEANS,
    ACCESS,
    INTENT,
    DEATH,
    DESIRE,
    BENIGN,
    PURPOSE,
    CONTEXT,
    GAME,
    NEGATION,
    THIRD_PERSON,
    FIRST_PERSON,
)
_DEFINE = "define"
_SECTION_RE = re.compile(r"^\[(\w+)\]$")
_NAME_RE = re.compile(r"\{([^\W\d]\w*)\}")


@dataclass(frozen=True)
class Pattern:
    """One compiled line, with the literals one of which every match must contain."""

    regex: re.Pattern[str]
    # Every match contains one literal of each set (no sets: no literal is required).
    factors: tuple[frozenset[str], ...]
    anchor: frozenset[str]  # the most selective set: the clauses to run on are found by it
    clauses: int  # how far a match can reach: 1 = its own clause, more with a wildcard
    gate: frozenset[str]  # like `anchor`, but one CJK character counts (for the Gate)
    gate_sets: tuple[frozenset[str], ...]  # like `factors`, one CJK character counts


@dataclass(frozen=True)
class Occurrences:
    """Where a lexicon's literals occur in one text, and where its clauses end."""

    positions: dict[str, list[int]]  # literal -> start offsets
    present: frozenset[str]
    marks: list[int]  # offsets of the clause marks, ascending
    regions: list[tuple[int, int]]  # the parts of the text worth checking, ascending

    def window(self, position: int, size: int, length: int) -> tuple[int, int]:
        """The clause holding `position` widened by `size - 1` clauses on either side."""
        index = bisect.bisect_left(self.marks, position)
        start = self.marks[index - size] + 1 if index - size >= 0 else 0
        # The closing mark is kept, so a pattern can look ahead to its clause's end.
        end = self.marks[index + size - 1] + 1 if index + size - 1 < len(self.marks) else length
        return start, end


class Section:
    """A section's patterns.

    Given where the lexicon's literals occur in the text (`LiteralIndex.scan`), a pattern runs
    only when one literal of each of its required sets occurs, and then only around the
    occurrences of its most selective literal, so a 2,000-character message costs one scan and
    a few short regex runs instead of hundreds of full scans. The prefilter is lossless for
    matches within a few clauses. Without occurrences (short texts) every pattern runs.
    """

    def __init__(self, patterns: list[Pattern]) -> None:
        self.patterns = patterns
        self._always = [i for i, p in enumerate(patterns) if not p.factors]
        self._by_anchor: dict[str, list[int]] = {}
        for index, pattern in enumerate(patterns):
            for literal in pattern.anchor:
                self._by_anchor.setdefault(literal, []).append(index)
        self._anchors = frozenset(self._by_anchor)

    def finditer(self, text: str, found: Occurrences | None = None) -> Iterator[re.Match[str]]:
        if found is None:
            for pattern in self.patterns:
                yield from pattern.regex.finditer(text)
            return
        candidates = set(self._always)
        for literal in self._anchors & found.present:
            candidates.update(self._by_anchor[literal])
        for index in sorted(candidates):
            pattern = self.patterns[index]
            if not pattern.factors:
                for start, end in found.regions:
                    yield from pattern.regex.finditer(text, start, end)
            elif all(not required.isdisjoint(found.present) for required in pattern.factors):
                for start, end in _windows(text, pattern, found):
                    yield from pattern.regex.finditer(text, start, end)

    def search(self, text: str, found: Occurrences | None = None) -> re.Match[str] | None:
        return next(self.finditer(text, found), None)


_WIDE_WINDOW = 3  # a pattern with a wildcard may reach two clauses either side


def _windows(text: str, pattern: Pattern, found: Occurrences) -> list[tuple[int, int]]:
    """Windows of `text` around each occurrence of the pattern's anchor literals: the clause,
    or for a pattern with a wildcard two clauses either side too ("没有我，大家都会过得更好")."""
    spans = sorted(
        {
            found.window(position, pattern.clauses, len(text))
            for literal in pattern.anchor & found.present
            for position in found.positions[literal]
        }
    )
    merged: list[tuple[int, int]] = []
    for start, end in spans:  # overlapping windows would report a match twice
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


class LiteralIndex:
    """Finds every occurrence of a set of literals, overlapping ones too, in one pass of an
    Aho-Corasick automaton (pyahocorasick, in C)."""

    def __init__(self, literals: Iterable[str]) -> None:
        self._automaton = _automaton(literals)

    def scan(self, text: str, regions: list[tuple[int, int]] | None = None) -> Occurrences:
        found: dict[str, list[int]] = {}
        marks = [m.start() for m in _MARK.finditer(text)]
        regions = regions if regions is not None else [(0, len(text))]
        if self._automaton is not None:
            for region_start, region_end in regions:
                for end, literal in self._automaton.iter(text, region_start, region_end):
                    found.setdefault(literal, []).append(end - len(literal) + 1)
        return Occurrences(found, frozenset(found), marks, regions)


def _automaton(literals: Iterable[str]) -> ahocorasick.Automaton | None:
    automaton = ahocorasick.Automaton()
    for literal in literals:
        automaton.add_word(literal, literal)
    if len(automaton) == 0:
        return None
    automaton.make_automaton()
    return automaton


_MARK = re.compile(re.escape(CLAUSE_MARK))


class Gate:
    """The clauses where a signal pattern can match at all: every literal set the pattern
    requires (one CJK character counts here) occurs within the pattern's reach of the clause.
    One automaton pass and a few set operations per clause with a hit; patterns that require no
    literal are run whole. Lossless; a long message is then checked only around these clauses."""

    def __init__(self, patterns: Iterable[Pattern]) -> None:
        patterns = list(patterns)
        self._by_anchor: dict[str, list[Pattern]] = {}
        for pattern in patterns:
            for literal in pattern.gate:
                self._by_anchor.setdefault(literal, []).append(pattern)
        literals = {x for p in patterns for required in p.gate_sets for x in required}
        self._automaton = _automaton(literals)
        unanchored = [f"(?:{p.regex.pattern})" for p in patterns if not p.gate]
        self._regex = re.compile("|".join(unanchored)) if unanchored else None

    def hot(self, text: str, marks: list[int]) -> list[int]:
        """Offsets in the clauses that may hold a match (one offset per such clause)."""
        hot: list[int] = []
        if self._regex is not None:
            hot += [match.start() for match in self._regex.finditer(text)]
        if self._automaton is None:
            return hot
        clauses: dict[int, set[str]] = {}
        for end, literal in self._automaton.iter(text):
            clauses.setdefault(bisect.bisect_left(marks, end), set()).add(literal)
        for clause, present in clauses.items():
            if self._can_match(clause, present, clauses):
                hot.append(marks[clause - 1] + 1 if clause > 0 else 0)
        return hot

    def _can_match(self, clause: int, present: set[str], clauses: dict[int, set[str]]) -> bool:
        for literal in present:
            for pattern in self._by_anchor.get(literal, ()):
                near = present
                if pattern.clauses > 1:
                    reach = range(clause - pattern.clauses + 1, clause + pattern.clauses)
                    near = set().union(*(clauses.get(i, ()) for i in reach))
                if all(not required.isdisjoint(near) for required in pattern.gate_sets):
                    return True
        return False


@dataclass(frozen=True)
class LanguageLexicon:
    """One language's compiled sections."""

    lang: str
    sections: dict[str, Section]
    sizes: dict[str, int]  # patterns per section, for docs and tests
    index: LiteralIndex  # every section's required literals
    gate: Gate  # where a signal can match at all


def _factors(items: object, cjk_chars: int = 2) -> tuple[frozenset[str], ...]:
    """Sets of literals: every match of the parsed pattern contains one literal of each set."""
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            candidates.append(frozenset({"".join(run)}))
            run.clear()

    for op, av in items:  # type: ignore[attr-defined]
        if op is sre.LITERAL:
            run.append(chr(av))
            continue
        flush()
        if op is sre.SUBPATTERN:
            candidates += _factors(av[3], cjk_chars)
        elif op is sre.ATOMIC_GROUP:
            candidates += _factors(av, cjk_chars)
        elif op is sre.BRANCH:
            # One set per branch would be too strict; keep each branch's most selective set.
            branches = [_factors(branch, cjk_chars) for branch in av[1]]
            if all(branches):
                candidates.append(frozenset().union(*(_best(b) for b in branches)))
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT) and av[0] >= 1:
            candidates += _factors(av[2], cjk_chars)
    flush()
    return tuple(c for c in candidates if c and all(_selective(x, cjk_chars) for x in c))


_MIN_LITERAL = 3  # a set holding a shorter latin literal ("i", "to") is in nearly every text


def _selective(literal: str, cjk_chars: int) -> bool:
    return len(literal) >= _MIN_LITERAL or (len(literal) >= cjk_chars and not literal.isascii())


def _best(sets: tuple[frozenset[str], ...]) -> frozenset[str]:
    return max(sets, key=lambda c: (min(map(len, c)), -len(c)))


# Words and characters in nearly every message: a gate set holding one of them is a last resort.
_COMMON = frozenset(
    "the that this what all one about self end out being feel something can could will would "
    "want going gonna ready just with for from have been they them there when time life way "
    "不 会 就 了 下 我 上 把 过 想 自己 要 是 的 在 有 去 你 他 她 这 那 都 也 还 "
    "说 到 好 太 很 人 个 们 一 没 能 看 来 得 着 吗 吧 啊 呢 给 让 被 对 里 多 么 "
    "出 起 心 后 天 时 事 活 伤 真 再".split()
)


def _rarest(sets: tuple[frozenset[str], ...]) -> frozenset[str]:
    """The set least likely to occur in ordinary text: fewest common words, then `_best`."""
    return min(sets, key=lambda c: (sum(x in _COMMON for x in c), -min(map(len, c)), len(c)))


def _expand(pattern: str, defines: dict[str, str]) -> str:
    """`{NAME}` replaced by its definition (definitions may use earlier ones)."""
    return _NAME_RE.sub(lambda m: f"(?:{defines[m.group(1)]})", pattern)


_LETTER_SPACE_LETTER = re.compile(r"(?<=[a-z]) (?=[a-z])")


def _spaces(pattern: str) -> str:
    """A space between two letters is optional ("kill my self" ~ "killmyself"); any other space
    is optional after a word's end only, so "car .{0,9}died" never matches "care if i died"."""
    marked = _LETTER_SPACE_LETTER.sub("\0", pattern.replace(" ?", "\0"))
    return marked.replace(" ", r"\b ?").replace("\0", " ?")


def _compile(lang: str, section: str, pattern: str) -> Pattern:
    # Latin patterns match whole words only ("end it all" never inside "weekend it all").
    body = rf"(?<![a-z0-9])(?:{pattern})(?![a-z0-9])" if lang == "en" else pattern
    try:
        regex = re.compile(body)
    except re.error as error:  # name the bad line
        raise ValueError(f"{lang} lexicon [{section}] {pattern!r}: {error}") from error
    if re.fullmatch(pattern, ""):  # e.g. a stray "|": it would match everywhere
        raise ValueError(f"{lang} lexicon [{section}] {pattern!r} matches the empty string")
    parsed = sre_parse.parse(pattern)
    factors = _factors(parsed)
    clauses = _WIDE_WINDOW if _has_wildcard(parsed) else 1
    gate = _factors(parsed, cjk_chars=1)
    return Pattern(
        regex,
        factors,
        _rarest(factors) if factors else frozenset(),
        clauses,
        _rarest(gate) if gate else frozenset(),
        gate,
    )


def _has_wildcard(items: object) -> bool:
    """Whether the parsed pattern can match a clause mark ("." or a negated class)."""
    for op, av in items:  # type: ignore[attr-defined]
        if op in (sre.ANY, sre.NOT_LITERAL) or (op is sre.IN and av and av[0][0] is sre.NEGATE):
            return True
        if op is sre.BRANCH and any(_has_wildcard(b) for b in av[1]):
            return True
        if op is sre.SUBPATTERN and _has_wildcard(av[3]):
            return True
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT) and _has_wildcard(av[2]):
            return True
        if op in (sre.ASSERT, sre.ASSERT_NOT) and _has_wildcard(av[1]):
            return True
    return False


def parse_lexicon(lang: str, text: str) -> LanguageLexicon:
    raw: dict[str, list[str]] = {name: [] for name in (*SECTIONS, _DEFINE)}
    current: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if not line:
            continue
        header = _SECTION_RE.match(line)
        if header:
            current = header.group(1)
            if current not in raw:
                raise ValueError(f"{lang} lexicon line {number}: unknown section [{current}]")
            continue
        if current is None:
            raise ValueError(f"{lang} lexicon line {number}: pattern before any [section]")
        raw[current].append(line)
    defines: dict[str, str] = {}
    for definition in raw.pop(_DEFINE):
        name, _, value = definition.partition("=")
        defines[name.strip()] = _expand(value.strip(), defines)
    sections: dict[str, Section] = {}
    for section, patterns in raw.items():
        sections[section] = Section(
            [_compile(lang, section, _spaces(_expand(p, defines))) for p in patterns]
        )
    literals = {
        literal
        for section in sections.values()
        for pattern in section.patterns
        for required in pattern.factors
        for literal in required
    }
    sizes = {name: len(p) for name, p in raw.items()}
    triggers = [p for name in GATED for p in sections[name].patterns]
    gate = Gate(triggers)
    return LanguageLexicon(lang, sections, sizes, LiteralIndex(literals), gate)


@cache
def load_lexicons(data_dir: Path = DATA_DIR) -> dict[str, LanguageLexicon]:
    """Every language's lexicon, read and compiled once per process."""
    return {
        lang: parse_lexicon(
            lang, (data_dir / LEXICON_FILE.format(lang=lang)).read_text(encoding="utf-8")
        )
        for lang in LANGUAGES
    }
