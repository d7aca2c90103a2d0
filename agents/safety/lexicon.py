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
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from re import _compiler as sre_compiler  # type: ignore[attr-defined]
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from re._compiler import MAXCODE  # type: ignore[import-not-found]

import re2

from agents.safety.normalise import CJK_CLASS, CLAUSE_MARK, DATA_DIR, LATIN_LETTER

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
# A time frame: a match said in the past ("when I was 15", "两年前") is history, not risk now,
# unless the message says it is back (RECURRENCE: "again", "still", "tonight", "又").
PAST = "past"
RECURRENCE = "recurrence"
# The speaker says the "friend" or the character is them ("asking for a friend | the friend is
# me", "其实那个朋友就是我"): a third person or a story no longer holds a match back.
SELF_REVEAL = "self_reveal"
# A good present said by the speaker ("I'm a nurse now", "现在过得很好"): with a time that is
# over, the message is a recovery story, and a "now" said beside a time that is over ("那段时间
# 每天都想死") is no recurrence.
RECOVERED = "recovered"
RELAPSE = "relapse"  # it is back ("again", "relapsed", "又", "复发"): no recovery story then
# Times that are over in a recovery story only ("last year", "once", "去年", "那时候"): alone
# they frame nothing ("去年" may be this past year's news, "那时候" may look forward).
STORY_PAST = "story_past"
# A purpose told to others as a cover ("told the shop it was for a party", "跟店员说是去露营的",
# "she thinks I'm moving"): said before the purpose in its clause, it is no everyday purpose.
COVER = "cover"
# An everyday event said as a time, not as a purpose ("after my last exam", "等我把论文交了",
# "答辩完那天"): asked of the text before the event in its clause, and of the text after it.
EVENT_TIME_BEFORE, EVENT_TIME_AFTER = "event_time_before", "event_time_after"
# A clause that opens with a report ("室友半夜在阳台哭，说不想活了", "儿子回家说想死"): what
# follows is said by whoever the clause before is about, a noun as well as a pronoun.
REPORTED_SPEECH = "reported_speech"
# An act said as one to come ("就", "要", "going to"): asked of the text before a method.
ACT_AHEAD = "act_ahead"
# Means gathered over time ("stockpiling", "saved every one", "攒了三个月", "跑了五家药店"): a
# pharmacy, a doctor or a prescription (`MEDICAL_SOURCE`, asked of a purpose's own text) is
# where the means came from, not what it is for.
HOARDING, MEDICAL_SOURCE = "hoarding", "medical_source"
# Someone the speaker names by their relation ("my sister", "my son's friend", "我室友", "表姐"):
# access to a means said in a clause about them alone, with them as the one who acts, is theirs
# ("my roommate has been saving pills", "我妹妹在囤药"). Pronouns, "someone" and characters
# name nobody: a hypothetical or a story may be the speaker's.
NAMED_OTHER = "named_other"
# Words that report speech ("说", "写了", "said", "texted"), asked of the text before a quotation:
# what follows in quotation marks is said by the verb's subject ("我老婆说“你们没有我会更好”").
REPORTING = "reporting"
# Sections asked only of a part of one clause, never of a whole message: not in the `ViewMatcher`.
CLAUSE_PART_SECTIONS = frozenset(
    {
        COVER,
        EVENT_TIME_BEFORE,
        EVENT_TIME_AFTER,
        ACT_AHEAD,
        REPORTED_SPEECH,
        MEDICAL_SOURCE,
        NAMED_OTHER,
        REPORTING,
    }
)

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
    PAST,
    RECURRENCE,
    SELF_REVEAL,
    RECOVERED,
    RELAPSE,
    STORY_PAST,
    COVER,
    EVENT_TIME_BEFORE,
    EVENT_TIME_AFTER,
    ACT_AHEAD,
    REPORTED_SPEECH,
    HOARDING,
    MEDICAL_SOURCE,
    NAMED_OTHER,
    REPORTING,
)
_DEFINE = "define"
_SECTION_RE = re.compile(r"^\[(\w+)\]$")
_NAME_RE = re.compile(r"\{([^\W\d]\w*)\}")


@dataclass(frozen=True)
class Pattern:
    """One line, checked at load, and its RE2 over-approximation (see `_superset`)."""

    source: str  # the line in Python `re` syntax, as `regex` compiles it
    superset: str  # RE2 syntax: matches wherever `regex` matches, and maybe elsewhere
    clauses: int  # how far a match can reach: 1 = its own clause, more with a wildcard
    # The characters a match can start with, as a class (`_starts`), or None: Python's `re`
    # then tries the pattern only where one of them is.
    starts: re.Pattern[str] | None = None

    def finditer(
        self, text: str, pos: int = 0, endpos: int | None = None
    ) -> Iterator[re.Match[str]]:
        """`regex.finditer(text, pos, endpos)`: the same matches."""
        end = len(text) if endpos is None else endpos
        if self.starts is None:
            yield from self.regex.finditer(text, pos, end)
            return
        # A match is never empty (`_starts`), so after one the next is searched from its end,
        # and `match` at a position sees the text before it as `finditer` would.
        match = self.regex.match
        for start in self.starts.finditer(text, pos, end):
            at = start.start()
            if at >= pos and (found := match(text, at, end)) is not None:
                yield found
                pos = found.end()

    def search(self, text: str) -> re.Match[str] | None:
        """`regex.search(text)`."""
        if self.starts is None:
            return self.regex.search(text)
        return next(self.finditer(text), None)

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Compiled when RE2 first says the line may match: compiling all 900 lines cost a
        cold start most of a second, and most messages touch a few of them. The line was
        parsed and checked at load (`_compile`), so this cannot fail."""
        return re.compile(self.source)


# RE2 (google-re2) runs a whole set of patterns over a text in one linear pass and finds a
# pattern's next match without Python-level backtracking; the lexicon's own syntax (look-around,
# Unicode classes) stays with Python's `re`, which confirms every match. RE2 only says where
# to look, so no verdict depends on it: a pattern RE2 rules out cannot match.
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.max_mem = 64 << 20  # the DFA cache of a language's whole set stays warm
_UNANCHORED = re2._Anchor.UNANCHORED  # the binding's Match(anchor, text, pos, endpos)
_ANCHOR_START = re2._Anchor.ANCHOR_START
_ANY = r"(?s:.)"


def _re2_literal(code: int) -> str:
    char = chr(code)
    return char if char.isalnum() else f"\\x{{{code:x}}}"


def _re2_class(items: object) -> str:
    negated = False
    parts: list[str] = []
    category = False
    for op, av in items:  # type: ignore[attr-defined]
        if op is sre.NEGATE:
            negated = True
        elif op is sre.LITERAL:
            parts.append(_re2_literal(av))
        elif op is sre.RANGE:
            parts.append(f"{_re2_literal(av[0])}-{_re2_literal(av[1])}")
        elif op is sre.CATEGORY:
            category = True
        else:
            return _ANY
    if category:
        # Python's \w and \d are Unicode-wide; RE2's are ASCII. "Anything but a space or a
        # clause mark" holds every character they match (a view has no other separator).
        if negated or any(op is not sre.CATEGORY for op, _ in items):  # type: ignore[attr-defined]
            return _ANY
        if any(av not in (sre.CATEGORY_WORD, sre.CATEGORY_DIGIT) for _, av in items):  # type: ignore[attr-defined]
            return _ANY
        return f"[^ {_re2_literal(ord(CLAUSE_MARK))}]"
    return f"[{'^' if negated else ''}{''.join(parts)}]"


def _superset(items: object) -> str:
    """The parsed pattern in RE2 syntax with its look-arounds, word boundaries and anchors
    dropped and its classes widened: it matches wherever the pattern does (and maybe more)."""
    out: list[str] = []
    for op, av in items:  # type: ignore[attr-defined]
        if op is sre.LITERAL:
            out.append(_re2_literal(av))
        elif op is sre.NOT_LITERAL:
            out.append(f"[^{_re2_literal(av)}]")
        elif op is sre.ANY:
            out.append(".")
        elif op is sre.IN:
            out.append(_re2_class(av))
        elif op is sre.BRANCH:
            out.append("(?:" + "|".join(_superset(branch) for branch in av[1]) + ")")
        elif op is sre.SUBPATTERN:
            out.append(f"(?:{_superset(av[3])})")
        elif op is sre.ATOMIC_GROUP:
            out.append(f"(?:{_superset(av)})")
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, high, item = av
            upper = "" if high == sre.MAXREPEAT else str(high)
            out.append(f"(?:{_superset(item)}){{{low},{upper}}}")
        elif op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            continue  # dropping a condition only widens the match
        else:  # a back reference or anything else RE2 lacks: anything may follow
            out.append(f"{_ANY}*")
    return "".join(out)


def _re2_set(patterns: list[Pattern]) -> re2.Set | None:
    if not patterns:
        return None
    found = re2.Set.SearchSet(_RE2_OPTIONS)
    for pattern in patterns:
        found.Add(pattern.superset)
    found.Compile()
    return found


class Section:
    """A section's patterns, with an RE2 set of their over-approximations: a text is matched
    against the patterns the set says may match, in their order, and against no other."""

    def __init__(self, patterns: list[Pattern]) -> None:
        self.patterns = patterns
        self._set = _re2_set(patterns)

    def candidates(self, text: str) -> list[int]:
        """Indexes of the patterns that may match somewhere in `text`, ascending."""
        if self._set is None or not text:
            return []
        return sorted(self._set.Match(text) or ())

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        for index in self.candidates(text):
            yield from self.patterns[index].finditer(text)

    def search(self, text: str) -> re.Match[str] | None:
        for index in self.candidates(text):
            found = self.patterns[index].search(text)
            if found is not None:
                return found
        return None


class SectionSet:
    """Several sections' patterns in one RE2 set: one pass over a short text says, per section,
    which patterns may match in it (the hold-back checks ask this of many clauses)."""

    def __init__(self, sections: dict[str, Section], names: tuple[str, ...]) -> None:
        self._ids = [
            (name, index) for name in names for index in range(len(sections[name].patterns))
        ]
        self._set = _re2_set([pattern for name in names for pattern in sections[name].patterns])

    def candidates(self, text: str) -> dict[str, list[int]]:
        """Per section, the indexes of the patterns that may match in `text`, ascending (the
        same as each section's own `Section.candidates`)."""
        found: dict[str, list[int]] = {}
        if self._set is None or not text:
            return found
        for number in sorted(self._set.Match(text) or ()):
            section, index = self._ids[number]
            found.setdefault(section, []).append(index)
        return found


_WIDE_WINDOW = 3  # a pattern with a wildcard may reach two clauses either side
_MARK = re.compile(re.escape(CLAUSE_MARK))
_BYTE_MARK = re.compile(re.escape(CLAUSE_MARK.encode()))


@dataclass(frozen=True)
class View:
    """A normalised message prepared for matching: its UTF-8 bytes (RE2 reports byte offsets)
    and where its clauses end, in characters and in bytes."""

    text: str
    data: bytes
    marks: list[int]  # character offsets of the clause marks, ascending
    byte_marks: list[int]  # the same marks as byte offsets
    # A wide pattern's windows, by over-approximation and reach: a function of the view, and
    # several patterns share one ("说\w*(?=…)" twice in the Chinese benign section).
    wide_windows: dict[tuple[str, int], list[tuple[int, int]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def of(cls, text: str) -> View:
        data = text.encode("utf-8")
        marks = [m.start() for m in _MARK.finditer(text)]
        same = len(data) == len(text)  # ASCII: byte and character offsets agree
        byte_marks = marks if same else [m.start() for m in _BYTE_MARK.finditer(data)]
        return cls(text, data, marks, byte_marks)

    def char_offset(self, offset: int) -> int:
        """The character offset of a byte offset (counted from its clause's start only)."""
        if len(self.data) == len(self.text):  # ASCII
            return offset
        clause = bisect.bisect_left(self.byte_marks, offset)
        clause_bytes = self.byte_marks[clause - 1] + 1 if clause > 0 else 0
        clause_chars = self.marks[clause - 1] + 1 if clause > 0 else 0
        return clause_chars + len(self.data[clause_bytes:offset].decode("utf-8"))


class Candidates:
    """What RE2 found in one message: per section the patterns that may match (ascending), and
    for a pattern confined to one clause the character windows (runs of whole clauses) where
    it may. Every pattern is found at once, unless no narrow pattern of a section a candidate
    starts from (`GATED`) may match (most messages): then the other sections' narrow ones are
    found when one of those sections is first asked about, which such a message seldom is."""

    def __init__(self, matcher: ViewMatcher, view: View) -> None:
        self._matcher = matcher
        self._view = view  # the view the windows are of (a blanked message keeps them)
        self.windows: dict[int, list[tuple[int, int]]] = {}  # pattern number -> windows
        self._numbers, complete = matcher.find(view, self.windows)
        self._others_due = not complete
        self._sections = matcher.sections(self._numbers)

    def section(self, name: str) -> list[int]:
        """The indexes of the section's patterns that may match, ascending (none: empty)."""
        if self._others_due and name not in _GATED_SECTIONS:
            self._others_due = False
            self._matcher.find_others(self._view, self._numbers, self.windows)
            self._sections = self._matcher.sections(self._numbers)
        return self._sections.get(name, [])


_CHUNK_BYTES = 256  # a message is checked in runs of whole clauses about this long
_GATED_SECTIONS = frozenset(GATED)
_SEARCHED_FIRST_BYTES = 2 * _CHUNK_BYTES  # a longer message is first searched for gated ones


class ViewMatcher:
    """All of a language's patterns in RE2 sets: a few linear passes over a message say which
    patterns may match in it and where. A pattern confined to one clause is found by running
    the set of such patterns over runs of whole clauses (its over-approximation never crosses a
    clause mark, so it matches inside one run or not at all); a pattern with a wildcard, by
    one set over the whole message and then its own RE2 search. Python's `re` then runs each
    pattern only there: a match of the pattern is a match of its over-approximation. A
    2,000-character message costs a few passes and a few short runs."""

    def __init__(self, sections: dict[str, Section], script: re.Pattern[str] | None = None) -> None:
        """`script`: a class every match of every pattern holds a character of (or None); a run
        of clauses without one is not searched."""
        self._script = script
        self._ids: list[tuple[str, int]] = []
        patterns: list[Pattern] = []
        for name, section in sections.items():
            for index, pattern in enumerate(section.patterns):
                self._ids.append((name, index))
                patterns.append(pattern)
        self._narrow = [n for n, p in enumerate(patterns) if p.clauses == 1]
        self._narrow_set = _re2_set([patterns[n] for n in self._narrow])
        # Whether a gated section's narrow pattern (`GATED`: one a candidate starts from) may
        # match anywhere, by one search of their over-approximations as one alternation: a
        # match in a run of clauses is a match in the whole message. Where none may (most
        # messages), the runs are searched for the other sections' narrow patterns only when
        # one of those is first asked about, which a message with no candidate never is. (A
        # set over the whole message would say so too, but RE2's automaton for a set remembers
        # which patterns matched so far: on a message dense with matches its states multiply,
        # built anew for each message.) The alternation is anchored at the start after a lazy
        # wildcard: the same yes or no, and RE2 needs no reverse automaton to find where a
        # match starts (10 ms to build on the first message).
        gated = [patterns[n].superset for n in self._narrow if self._ids[n][0] in GATED]
        self._gated_narrow = (
            re2._re2.RE2(
                f"{_ANY}*?(?:{'|'.join(f'(?:{p})' for p in gated)})".encode(), _RE2_OPTIONS
            )
            if gated
            else None
        )
        self._other_narrow = [n for n in self._narrow if self._ids[n][0] not in GATED]
        self._other_narrow_set = _re2_set([patterns[n] for n in self._other_narrow])
        self._wide = [n for n, p in enumerate(patterns) if p.clauses > 1]
        self._wide_set = _re2_set([patterns[n] for n in self._wide])
        self._finders = {
            n: re2._re2.RE2(patterns[n].superset.encode("utf-8"), _RE2_OPTIONS) for n in self._wide
        }
        self._supersets = {n: patterns[n].superset for n in self._wide}
        self._sections = sections
        self._section_start = {  # each section's first pattern number
            name: self._ids.index((name, 0))
            for name, section in sections.items()
            if section.patterns
        }

    def candidates(self, view: View) -> Candidates:
        """The patterns that may match in the view, and where."""
        return Candidates(self, view)

    def find(self, view: View, windows: dict[int, list[tuple[int, int]]]) -> tuple[set[int], bool]:
        """The patterns that may match in the view (the narrow ones' windows into `windows`),
        and whether that is all of them: every wide one, and every narrow one unless no gated
        narrow one may match; then the others' narrow ones are left to `find_others`."""
        numbers: set[int] = set()
        if not view.text:
            return numbers, True
        if self._wide_set is not None:
            numbers.update(self._wide[found] for found in self._wide_set.Match(view.data) or ())
        # (in a message of one or two runs, searching first would cost as much as the runs)
        if self._gated_narrow is not None and len(view.data) > _SEARCHED_FIRST_BYTES:
            first = self._gated_narrow.Match(_ANCHOR_START, view.data, 0, len(view.data))
            if first[0][0] < 0:
                return numbers, False
        self._find_narrow(view, self._narrow, self._narrow_set, numbers, windows)
        return numbers, True

    def find_others(
        self, view: View, numbers: set[int], windows: dict[int, list[tuple[int, int]]]
    ) -> None:
        """The narrow patterns `find` left out (no gated section's may match: the others'), into
        `numbers` (their windows into `windows`)."""
        self._find_narrow(view, self._other_narrow, self._other_narrow_set, numbers, windows)

    def _find_narrow(
        self,
        view: View,
        narrow: list[int],
        narrow_set: re2.Set | None,
        numbers: set[int],
        windows: dict[int, list[tuple[int, int]]],
    ) -> None:
        if narrow_set is None:
            return
        for char_start, char_end, byte_start, byte_end in _chunks(view):
            if self._script and not self._script.search(view.text, char_start, char_end):
                continue  # English patterns in a run of Chinese clauses
            for found in narrow_set.Match(view.data[byte_start:byte_end]) or ():
                number = narrow[found]
                numbers.add(number)
                windows.setdefault(number, []).append((char_start, char_end))

    def sections(self, numbers: set[int]) -> dict[str, list[int]]:
        """Pattern numbers as, per section, their indexes in it, ascending."""
        sections: dict[str, list[int]] = {}
        for number in sorted(numbers):
            section, index = self._ids[number]
            sections.setdefault(section, []).append(index)
        return sections

    def finditer(
        self, view: View, section: str, indexes: list[int], found: Candidates
    ) -> Iterator[re.Match[str]]:
        """The matches of the section's patterns `indexes` in the view, pattern by pattern."""
        offset = self._section_start.get(section, 0)
        for index in indexes:
            pattern = self._sections[section].patterns[index]
            number = offset + index
            if pattern.clauses == 1:
                windows = found.windows[number]
            else:
                windows = self._windows(view, number, pattern.clauses)
            finditer = pattern.regex.finditer if pattern.starts is None else pattern.finditer
            for start, end in windows:
                yield from finditer(view.text, start, end)

    def _windows(self, view: View, number: int, size: int) -> list[tuple[int, int]]:
        """Character spans where the pattern may match: each from where its over-approximation
        matches to the end of that match's clause widened by `size - 1` clauses (the closing
        mark kept, so a pattern can look ahead to its clause's end); overlapping ones joined."""
        key = (self._supersets[number], size)
        if key not in view.wide_windows:
            view.wide_windows[key] = self._find_windows(view, self._finders[number], size)
        return view.wide_windows[key]

    @staticmethod
    def _find_windows(view: View, finder: re2._re2.RE2, size: int) -> list[tuple[int, int]]:
        marks = view.byte_marks
        length = len(view.data)
        # Byte offsets, and the index of the clause mark that ends the window (or None: the end).
        spans: list[tuple[int, int, int | None]] = []
        position = 0
        while position < length:
            start, end = finder.Match(_UNANCHORED, view.data, position, length)[0]
            if start < 0:
                break
            last = bisect.bisect_left(marks, max(start, end - 1)) + size - 1
            window_end, closing = (marks[last] + 1, last) if last < len(marks) else (length, None)
            if spans and start < spans[-1][1]:
                if window_end > spans[-1][1]:
                    spans[-1] = (spans[-1][0], window_end, closing)
            else:
                spans.append((start, window_end, closing))
            # A wide pattern may look ahead past its window's end ("要死了(?=.{0,12}考试)"):
            # every match of its over-approximation widens the window.
            position = window_end if size == 1 else end
        if len(view.data) == len(view.text):
            return [(start, end) for start, end, _ in spans]
        # A window ends just after a clause mark or at the end: its character offset is known.
        return [
            (view.char_offset(start), len(view.text) if last is None else view.marks[last] + 1)
            for start, _, last in spans
        ]


def _chunks(view: View) -> list[tuple[int, int, int, int]]:
    """Runs of whole clauses of about `_CHUNK_BYTES`, each ending just after a clause mark or at
    the end: (character start, character end, byte start, byte end)."""
    chunks: list[tuple[int, int, int, int]] = []
    char_start = byte_start = 0
    marks, byte_marks, length = view.marks, view.byte_marks, len(view.data)
    while byte_start < length:
        index = bisect.bisect_left(byte_marks, byte_start + _CHUNK_BYTES)
        if index < len(byte_marks):
            char_end, byte_end = marks[index] + 1, byte_marks[index] + 1
        else:
            char_end, byte_end = len(view.text), length
        chunks.append((char_start, char_end, byte_start, byte_end))
        char_start, byte_start = char_end, byte_end
    return chunks


@dataclass(frozen=True)
class LanguageLexicon:
    """One language's compiled sections."""

    lang: str
    sections: dict[str, Section]
    sizes: dict[str, int]  # patterns per section, for docs and tests
    matcher: ViewMatcher  # the other sections' patterns, for whole messages
    persons: SectionSet  # negation, first and third person: for the text before each match
    # A character class every match of every pattern holds a character of (latin letters for
    # English), or None: a text without one matches none of the patterns, so it is not searched.
    script: re.Pattern[str] | None = None

    def may_match_in(self, text: str) -> bool:
        """False when no pattern of this lexicon can match in `text` (a cheap `re` scan)."""
        return self.script is None or self.script.search(text) is not None


def _expand(pattern: str, defines: dict[str, str]) -> str:
    """`{NAME}` replaced by its definition (definitions may use earlier ones)."""
    return _NAME_RE.sub(lambda m: f"(?:{defines[m.group(1)]})", pattern)


_LETTER_SPACE_LETTER = re.compile(r"(?<=[a-z]) (?=[a-z])")


def _spaces(pattern: str) -> str:
    """A space between two letters is optional ("kill my self" ~ "killmyself"); any other space
    is optional after a word's end only, so "car .{0,9}died" never matches "care if i died"."""
    marked = _LETTER_SPACE_LETTER.sub("\0", pattern.replace(" ?", "\0"))
    return marked.replace(" ", r"\b ?").replace("\0", " ?")


def _compile(lang: str, section: str, pattern: str) -> tuple[Pattern, object]:
    """The line's `Pattern` and its parse (for `_needs`), checked now as `re.compile` would
    check it: the line is parsed once here and compiled only when first used."""
    # Latin patterns match whole words only ("end it all" never inside "weekend it all").
    body = rf"(?<![a-z0-9])(?:{pattern})(?![a-z0-9])" if lang == "en" else pattern
    try:
        # A line that parses alone is a whole expression, so the body (fixed-width look-arounds
        # around a group of it) parses too, unless the line sets global flags ("(?i)"), which
        # only the body's first item may: compiling the body then names the error.
        items = sre_parse.parse(pattern)
        if body != pattern and items.state.flags & ~sre.SRE_FLAG_UNICODE:
            re.compile(body)
        if "(?<" in pattern:  # only "(?<=" and "(?<!" make a look-behind
            _check_look_behinds(items)
        # A match of the empty string is possible only if the shortest match is empty.
        empty = items.getwidth()[0] == 0 and re.fullmatch(pattern, "") is not None
    except re.error as error:  # name the bad line
        raise ValueError(f"{lang} lexicon [{section}] {pattern!r}: {error}") from error
    if empty:  # e.g. a stray "|": it would match everywhere
        raise ValueError(f"{lang} lexicon [{section}] {pattern!r} matches the empty string")
    clauses = _WIDE_WINDOW if _has_wildcard(items) else 1
    superset = _superset(items)
    try:
        re2.compile(superset, _RE2_OPTIONS)
    except re2.error as error:
        raise ValueError(f"{lang} lexicon [{section}] {pattern!r}: not for RE2: {error}") from error
    return Pattern(body, superset, clauses, _starts(body, items, wrapped=body != pattern)), items


def _check_look_behinds(items: object) -> None:
    """The checks `re.compile` makes after parsing (a look-behind needs a fixed width), so a
    line that parses at load also compiles when first used."""
    for op, av in items:  # type: ignore[attr-defined]
        if op in (sre.ASSERT, sre.ASSERT_NOT):
            direction, inner = av
            if direction < 0:
                low, high = inner.getwidth()
                if low > MAXCODE:
                    raise re.error("looks too much behind")
                if low != high:
                    raise re.error("look-behind requires fixed-width pattern")
            _check_look_behinds(inner)
        elif op is sre.BRANCH:
            for branch in av[1]:
                _check_look_behinds(branch)
        elif op is sre.SUBPATTERN:
            _check_look_behinds(av[3])
        elif op is sre.ATOMIC_GROUP:
            _check_look_behinds(av)
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            _check_look_behinds(av[2])
        elif op is sre.GROUPREF_EXISTS:
            for branch in av[1:]:
                if branch is not None:
                    _check_look_behinds(branch)


# Python's `re` tries a pattern at every position unless it starts with a literal or a class
# (a Chinese pattern that starts with a group, "(让)?(所有|一切)", or an English one with its
# word-edge look-behind): 60-170 ns a character on 2,000 characters of dense Chinese. When
# every match starts with one of a few CJK characters, finding those first (one class, in C)
# and trying the pattern there only is 2-4 times cheaper; with latin letters, frequent in
# English text, it is slower, so English patterns keep the plain search.
_CJK_ONLY = re.compile(f"[{CJK_CLASS}]+")


def _starts(body: str, parsed: object, *, wrapped: bool = False) -> re.Pattern[str] | None:
    """A class of the characters every match of `body` starts with, or None where that is not
    worth it: `re` already skips to a literal or class start, the pattern may match nothing (an
    empty match moves `finditer` on differently), or a start may be outside CJK. `parsed`: the
    line's parse, already made (`wrapped`: the line is inside the word-edge look-arounds `body`
    adds, which consume nothing, so its matches start with the same characters; a wrapped line
    sets no global flag, `_compile`)."""
    if parsed.state.flags & sre.SRE_FLAG_IGNORECASE:  # type: ignore[attr-defined]
        return None
    if parsed.getwidth()[0] == 0:  # type: ignore[attr-defined]
        return None
    chars, may_be_empty = _first_chars(parsed)
    if chars is None or may_be_empty or not chars:
        return None
    text = "".join(sorted(chr(char) for char in chars - {_DIGIT}))
    if text and not _CJK_ONLY.fullmatch(text):
        return None
    own = sre_parse.parse(body) if wrapped else parsed
    if (
        sre_compiler._get_literal_prefix(own, 0)[0]
        or sre_compiler._get_charset_prefix(own, 0) is not None
    ):
        return None
    digits = r"\d" if _DIGIT in chars else ""
    return re.compile(f"[{re.escape(text)}{digits}]")


def _first_chars(items: object) -> tuple[set[int] | None, bool]:
    """(characters, may be empty): every character a match of the parsed sequence can start
    with (more is safe), and whether it may consume nothing; None when not known."""
    chars: set[int] = set()
    for op, av in items:  # type: ignore[attr-defined]
        if op is sre.LITERAL:
            chars.add(av)
            return chars, False
        if op is sre.IN:
            for item, value in av:
                if item is sre.LITERAL:
                    chars.add(value)
                elif item is sre.RANGE and value[1] - value[0] <= _MAX_START_RANGE:
                    chars.update(range(value[0], value[1] + 1))
                elif item is sre.CATEGORY and value is sre.CATEGORY_DIGIT:
                    chars.add(_DIGIT)  # "\d+楼": rare in Chinese text, kept as \d
                else:  # a negation, a category (\w), a wide range: anything may start it
                    return None, False
            return chars, False
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            continue  # consumes nothing
        if op is sre.BRANCH:
            branches = [_first_chars(branch) for branch in av[1]]
            found: tuple[set[int] | None, bool] = (None, False)
            if any(branch is None for branch, _ in branches):
                return found
            for branch, _ in branches:
                chars |= branch  # type: ignore[operator]
            if not any(empty for _, empty in branches):
                return chars, False
            continue
        if op in (sre.SUBPATTERN, sre.ATOMIC_GROUP):
            if op is sre.SUBPATTERN and av[1] & re.IGNORECASE:
                return None, False
            inner, empty = _first_chars(av[3] if op is sre.SUBPATTERN else av)
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            inner, empty = _first_chars(av[2])
            empty = empty or av[0] == 0
        else:  # a back reference, a wildcard, anything else
            return None, False
        if inner is None:
            return None, False
        chars |= inner
        if not empty:
            return chars, False
    return chars, True


_MAX_START_RANGE = 256
_DIGIT = -1  # `_first_chars`: any decimal digit (\d)


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
    parsed: list[object] = []  # every line's parse, for `_needs`
    for section, patterns in raw.items():
        compiled = [_compile(lang, section, _spaces(_expand(p, defines))) for p in patterns]
        sections[section] = Section([pattern for pattern, _ in compiled])
        parsed.extend(items for _, items in compiled)
    sizes = {name: len(p) for name, p in raw.items()}
    persons = SectionSet(sections, (NEGATION, FIRST_PERSON, THIRD_PERSON))
    script = next(
        (regex for regex in _SCRIPTS if all(_needs(items, regex) for items in parsed)),
        None,
    )
    whole = {n: section for n, section in sections.items() if n not in CLAUSE_PART_SECTIONS}
    return LanguageLexicon(lang, sections, sizes, ViewMatcher(whole, script), persons, script)


# The scripts a lexicon's patterns may all need a character of (see `LanguageLexicon.script`).
_SCRIPTS = (LATIN_LETTER, re.compile(f"[{CJK_CLASS}]"))


def _needs(items: object, script: re.Pattern[str]) -> bool:
    """Whether every match of the parsed pattern holds a character of `script`: some element
    of it always consumes one (a literal or a class of such characters only, a group or every
    branch that needs one, a repeat at least once of one). Look-arounds and anything else count
    as not needing one, so a yes is always true."""
    if getattr(items, "state", None) is not None and items.state.flags & re.IGNORECASE:  # type: ignore[attr-defined]
        return False
    return any(_element_needs(op, av, script) for op, av in items)  # type: ignore[attr-defined]


def _element_needs(op: object, av: object, script: re.Pattern[str]) -> bool:
    if op is sre.LITERAL:
        return script.fullmatch(chr(av)) is not None  # type: ignore[arg-type]
    if op is sre.IN:
        chars: list[int] = []
        for item, value in av:  # type: ignore[attr-defined]
            if item is sre.LITERAL:
                chars.append(value)
            elif item is sre.RANGE:
                chars.extend(range(value[0], value[1] + 1))
            else:  # a negation or a category (\w, \d): may match outside the script
                return False
        return all(script.fullmatch(chr(char)) for char in chars)
    if op is sre.SUBPATTERN:  # (group, flags added, flags removed, pattern)
        if av[1] & re.IGNORECASE:  # type: ignore[index]
            return False  # "(?i:x)" matches "X" too
        return _needs(av[3], script)  # type: ignore[index]
    if op is sre.ATOMIC_GROUP:
        return _needs(av, script)
    if op is sre.BRANCH:
        return all(_needs(branch, script) for branch in av[1])  # type: ignore[index]
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        return av[0] >= 1 and _needs(av[2], script)  # type: ignore[index]
    return False


@cache
def load_lexicons(data_dir: Path = DATA_DIR) -> dict[str, LanguageLexicon]:
    """Every language's lexicon, read and compiled once per process."""
    return {
        lang: parse_lexicon(
            lang, (data_dir / LEXICON_FILE.format(lang=lang)).read_text(encoding="utf-8")
        )
        for lang in LANGUAGES
    }
