"""The crisis lexicon: patterns by signal, read from `data/crisis_lexicon_{lang}.txt`.

File format (one file per language): `[section]` headers, then one pattern per line (`#` starts
a comment). A pattern is a regular expression over the normalised view (see normalise.py) with
two conveniences: a space means "an optional space" (so "kill my self", "killmyself" and
"kill myself" read alike), and `{NAME}` is replaced by a fragment defined in the `[define]`
section as `NAME = regex`. Latin patterns are anchored at word edges; CJK patterns are not.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

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
# Components that show risk only together: a means with access to it or intent to use it.
MEANS, ACCESS, INTENT = "means", "access", "intent"
MEANS_PLAN = "means_plan"
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


class Section:
    """A section's patterns, matched clause by clause (a match never spans a clause end).

    A lossless prefilter keeps long messages cheap: a pattern runs only on the clauses that
    hold one literal of each of its required sets, so a 2,000-character message costs a few
    hundred substring tests and a few short regex runs instead of hundreds of full scans.
    """

    def __init__(self, patterns: list[Pattern]) -> None:
        self.patterns = patterns

    def finditer(self, text: str, seen: dict[str, bool] | None = None) -> Iterator[re.Match[str]]:
        seen = {} if seen is None else seen
        for pattern in self.patterns:
            if not all(
                any(seen[f] if f in seen else seen.setdefault(f, f in text) for f in required)
                for required in pattern.factors
            ):
                continue
            if not pattern.factors or len(text) <= _SHORT_TEXT:
                yield from pattern.regex.finditer(text)
                continue
            for start, end in _clauses_with(text, pattern.anchor):
                yield from pattern.regex.finditer(text, start, end)

    def search(self, text: str, seen: dict[str, bool] | None = None) -> re.Match[str] | None:
        return next(self.finditer(text, seen), None)


_SHORT_TEXT = 200  # shorter texts are matched whole
_MIN_LITERAL = 3  # a set holding a shorter literal ("i", "to") is in nearly every text


def _clauses_with(text: str, literals: frozenset[str]) -> list[tuple[int, int]]:
    """The (start, end) of every clause of `text` holding one of `literals`, in order."""
    found: set[tuple[int, int]] = set()
    for literal in literals:
        position = text.find(literal)
        while position != -1:
            start = text.rfind(CLAUSE_MARK, 0, position) + 1
            end = text.find(CLAUSE_MARK, position)
            end = len(text) if end == -1 else end
            found.add((start, end))
            position = text.find(literal, end)
    return sorted(found)


@dataclass(frozen=True)
class LanguageLexicon:
    """One language's compiled sections."""

    lang: str
    sections: dict[str, Section]
    sizes: dict[str, int]  # patterns per section, for docs and tests


def _factors(items: object) -> tuple[frozenset[str], ...]:
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
            candidates += _factors(av[3])
        elif op is sre.ATOMIC_GROUP:
            candidates += _factors(av)
        elif op is sre.BRANCH:
            # One set per branch would be too strict; keep each branch's most selective set.
            branches = [_factors(branch) for branch in av[1]]
            if all(branches):
                candidates.append(frozenset().union(*(_best(b) for b in branches)))
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT) and av[0] >= 1:
            candidates += _factors(av[2])
    flush()
    return tuple(c for c in candidates if c and all(map(_selective, c)))


def _selective(literal: str) -> bool:
    return len(literal) >= _MIN_LITERAL or (len(literal) >= 2 and not literal.isascii())


def _best(sets: tuple[frozenset[str], ...]) -> frozenset[str]:
    return max(sets, key=lambda c: (min(map(len, c)), -len(c)))


def _expand(pattern: str, defines: dict[str, str]) -> str:
    """`{NAME}` replaced by its definition (definitions may use earlier ones)."""
    return _NAME_RE.sub(lambda m: f"(?:{defines[m.group(1)]})", pattern)


def _compile(lang: str, section: str, pattern: str) -> Pattern:
    # Latin patterns match whole words only ("end it all" never inside "weekend it all").
    body = rf"(?<![a-z0-9])(?:{pattern})(?![a-z0-9])" if lang == "en" else pattern
    try:
        regex = re.compile(body)
    except re.error as error:  # name the bad line
        raise ValueError(f"{lang} lexicon [{section}] {pattern!r}: {error}") from error
    factors = _factors(sre_parse.parse(pattern))
    return Pattern(regex, factors, _best(factors) if factors else frozenset())


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
        # A space in a pattern is an optional space ("kill my self" ~ "killmyself").
        sections[section] = Section(
            [_compile(lang, section, _expand(p, defines).replace(" ", " ?")) for p in patterns]
        )
    return LanguageLexicon(lang, sections, {name: len(p) for name, p in raw.items()})


@cache
def load_lexicons(data_dir: Path = DATA_DIR) -> dict[str, LanguageLexicon]:
    """Every language's lexicon, read and compiled once per process."""
    return {
        lang: parse_lexicon(
            lang, (data_dir / LEXICON_FILE.format(lang=lang)).read_text(encoding="utf-8")
        )
        for lang in LANGUAGES
    }
