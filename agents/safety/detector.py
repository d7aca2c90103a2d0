"""Deterministic, explainable crisis detection (zh + en), independent of any model.

Layers, in order:
1. normalise the message into one view (normalise.py: width, case, zero-width characters,
   traditional characters, pinyin tone marks, leetspeak, emoji stand-ins, split letters, glued
   words, repeated characters);
2. match the structured lexicon (lexicon.py, `data/crisis_lexicon_{lang}.txt`) by signal;
3. combine: a strong signal fires on its own, a means word fires only with access to it or
   intent to use it (`means_plan`), the bare word ("suicide", "自杀") fires only when the
   message is not about something or someone else;
4. keep a match from firing only when it is clearly not about the speaker now: inside a benign
   idiom ("killing it", "笑死"), negated right before ("I'm not suicidal", "不想死"), said of a
   third person ("my character kills…", "主角跳楼"), or in a message about fiction, coursework,
   news or prevention with no first-person subject. When unsure, it fires.

`detect()` returns the verdict with the signals and the matched spans (offsets into the view),
and the matches that were held back with the reason, so every decision can be explained.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from agents.safety.lexicon import (
    ACCESS,
    ACT_AHEAD,
    BENIGN,
    CONTEXT,
    COVER,
    DEATH,
    DESIRE,
    EVENT_TIME_AFTER,
    EVENT_TIME_BEFORE,
    FIRST_PERSON,
    GAME,
    GATED,
    HOARDING,
    IDEATION,
    INTENT,
    MEANS,
    MEANS_PLAN,
    MEDICAL_SOURCE,
    MENTION,
    NAMED_OTHER,
    NEGATION,
    PAST,
    PURPOSE,
    RECOVERED,
    RECURRENCE,
    RELAPSE,
    REPORTED_SPEECH,
    REPORTING,
    SELF_REVEAL,
    STORY_PAST,
    STRONG_SIGNALS,
    THIRD_PERSON,
    Candidates,
    LanguageLexicon,
    View,
    load_lexicons,
)
from agents.safety.ngram import WHOLE_CLAUSES, NgramModel, Window, language
from agents.safety.normalise import CLAUSE_MARK, LATIN_LETTER, contains_cjk, normalise
from agents.safety.quotes import Quotes
from agents.safety.resources import normalise_locale  # re-exported for the apps

MODEL = "ngram_model"  # the signal name when the n-gram layer fires
MODEL_BENIGN = "model_benign"  # the reason when the n-gram layer holds a lexicon match back
# What the n-gram layer may hold back when it reads the whole message as clearly benign ("two
# years ago I wanted to kill myself, today…", "my student told me she wants to die"): wishes,
# the bare word and slang, below the model's `vetoes` level. A means, a method, a plan, a
# farewell or an act of self-harm only below its far lower `strict_vetoes` level (chosen so
# that cross-validation lost at most one in a thousand risky catches of those; at the wishes'
# level it lost many).
MODEL_MAY_HOLD_BACK = frozenset(
    {"explicit_intent", "passive_ideation", "burden", "slang", MENTION, IDEATION}
)
# Words that hold a negator but say "cannot help it": they never negate what follows.
_NOT_NEGATION = re.compile(
    r"(?<![a-z])(cant|can not|cannot|couldnt|could not|wont|dont|never|not) (stop|help|resist|"
    r"control)|忍不住|控制不住|止不住|停不下|停不住|受不了|忍不了|撑不住|由不得|不得不|不由得|"
    r"不停|不断|不禁|不自觉|是不是|要不要|能不能|会不会|可不可以|该不该|想不想|敢不敢"
)
_CONTRAST = re.compile(r"(?<![a-z])(but|though|although|yet)(?![a-z])|但|可是|不过")
# Signals that a game or an everyday purpose explains ("I jumped off the cliff" in a game).
_PLAY_EXPLAINS = frozenset({"method", MENTION, MEANS_PLAN, IDEATION})
_PURPOSE_EXPLAINS = frozenset({"plan", "method", MEANS_PLAN, "farewell"})
# What a past frame explains: not a means said with access (the pills from back then may still
# be there) and not a farewell (a goodbye is an act of now). On training data, lexicon alone,
# the frame took back 331 look-alikes (recovery told in the past) and lost 5 risky messages;
# with those two as well (measured a round of list mending earlier), 62 more look-alikes and 5
# more risky messages.
_PAST_EXPLAINS = frozenset(
    {"explicit_intent", "passive_ideation", "burden", "plan", "self_harm", "slang", "method"}
    | {MENTION, IDEATION}
)
# What a recovery story explains (`_RecoveryStory`): with a good present said after it, the
# pills and the goodbye letters of back then are history too.
_STORY_EXPLAINS = _PAST_EXPLAINS | {MEANS_PLAN, "farewell"}
# How often, not when: in a clause after a past time it tells the history ("以前我每天都想死").
# ("现在每天" says now.)
_HABITUAL = re.compile(r"每天|天天|every (day|morning|night|evening)")
# Said between a past time and a match, the match is of now ("以前天天嚷嚷紫砂都是梗，现在
# 真的想紫砂了").
_NOW = re.compile(r"现在|如今|目前|眼下|\bnow\b|\btoday\b|these days|at the moment")
# A person right after one of these is an object ("to my friend", "给朋友").
_PREPOSITION = re.compile(
    r"(?:(?<![a-z])(?:to|for|with|at|about|from|of) (?:[a-z]+ ){0,2}"
    r"|[给跟和对向帮替为让被把].{0,4})$"
)
# "跟我说": the speaker who is told is no subject of what is told. (In English, "told me"
# alone took back 3 look-alikes, lexicon alone, and lost "keeps telling me about her self harm.
# it's made me start again". "给我" took back 4 look-alikes with the model, none held-out, and
# lost a held-out risky message on both layers.)
_TOLD_ME = re.compile(r"(?:[跟对和向]|告诉)$")
# Only a pronoun carries over from an earlier clause ("她老了，活够了"), never an object.
_PRONOUN = re.compile(r"he|she|they|him|her|them|他|她|他们|她们|i|im|ive|id|me|我|自己")
# A farewell is said to someone: "you" beside it is who is left, not who leaves ("谢谢你，再见，
# 这次是真的再见", "等你看到的时候不要哭"); for other signals "你去死吧" is about the other person.
_ADDRESSEE = re.compile(r"你|你们")
# The speaker's own ("my blades"): no first person for the subject ("my sister" is hers), but
# a means of theirs is the speaker's.
_MINE = re.compile(r"(?<![a-z])(?:my|mine|our)(?![a-z])")
# A named other who owns the means or is an object or a time is not who acts ("爸爸的刀片",
# "my dads pills", "by my mum", "等室友都睡了就去").
_OWNER = re.compile(r"的|s(?![a-z])| s(?![a-z])")
_NOT_SUBJECT = re.compile(_PREPOSITION.pattern + r"|(?:[等趁把被]|(?<![a-z])by )$")
# The speaker perceiving, right before a named other ("我发现", "i found out that").
_PERCEIVES = re.compile(
    r"(?:我(?:才)?(?:发现|看到|看见|注意到|听说|知道|怀疑)"
    r"|(?<![a-z])i (?:found out|found|noticed|saw|know|suspect|realised|realized|heard)"
    r"(?: that)? )$"
)
# "there is" starts a statement of its own ("my mum has cancer and theres a box of oramorph").
_THERE_IS = re.compile(r"(?<![a-z])theres?(?![a-z])")
# Quotations one after another are one speaker's ("“我是负担”“没有我会更好”", '"sorry" and "bye"').
_SAME_SPEAKER = re.compile(r"[ |、]*(?:和|或|(?:and|or) )?[ |、]*")
_REPORT_REACH = 40  # characters before a quotation asked for a reporting word
# "自己" is the subject's self, whoever the subject is ("她想割自己"): it names no person.
_REFLEXIVE = "自己"
_SAID_TO_SOMEONE = frozenset({"farewell"})
# A long message is checked only within this many clauses of a gate hit, either side: enough
# for a pattern's reach (two clauses), a subject carried over (two before) and the means rules.
_REGION_CLAUSES = 5
_CHECK_WHOLE_CHARS = 400
# In a long message, a game, a purpose or a context explains a match within this many clauses
# (its clause and two either side: as far as a short message reaches).
MODIFIER_CLAUSES = 2
# An everyday purpose is said of its means in the same clause or the next one ("I bought rope |
# it's for camping"); two clauses away in a long message it is mostly a neighbouring sentence's
# errand ("今晚打算把柜子里的药全吃了|今天下班早" was held back by 下班). On training data, one
# clause instead of two caught 10 more risky messages (6 of them long Chinese ones) and fired on
# 10 more look-alikes, lexicon alone; none instead of one: 8 more caught, 24 more fired.
PURPOSE_CLAUSES = 1
# A time said in the past ("when I was 15", "两年前") frames its own clause and the next one
# ("in high school | I used to cut"), in a message of any length; never an earlier clause ("I
# don't care if I die | I used to fight it").
PAST_CLAUSES = 1
# In a long message the veto weighs the clauses within this many of what the lexicon fired on,
# as one window. With their neighbours (1), ordinary ones diluted a risky sentence under the
# veto level; per window, more look-alikes fired (bench/crisis_long_messages.py, on training
# data).
VETO_CLAUSES = 0
_SUBJECT_CLAUSES = 3  # the match's clause and the two before it
_MAX_NEGATION_GAP_WORDS = 2  # "not going to | kill myself"
_MAX_NEGATION_GAP_CHARS = 3  # "没有 | 想过 | 轻生"


class Match(NamedTuple):
    """One matched span of the normalised view (a named tuple: a long message makes hundreds)."""

    signal: str
    start: int
    end: int
    text: str  # the view's text of the span (never logged)


@dataclass(frozen=True)
class Detection:
    """The verdict, why it was reached, and what was held back (with the reason)."""

    risky: bool
    signals: tuple[str, ...]  # distinct signals that fired, in order of first appearance
    matches: tuple[Match, ...]
    held_back: tuple[tuple[Match, str], ...] = ()
    view: str = ""

    def __bool__(self) -> bool:
        return self.risky


SAFE = Detection(risky=False, signals=(), matches=())


@dataclass
class _Message:
    prepared: View
    lexicons: tuple[LanguageLexicon, ...]
    candidates: dict[str, Candidates]  # per language: what may match, and where (RE2)
    quotes: Quotes  # what the message quotes, found when first asked about
    _spans: dict[str, list[Match]] = field(default_factory=dict)
    # The hold-back checks of a dense message ask the same questions of the same text again and
    # again (each candidate looks at its clause and the two before): each answer is a function
    # of the text asked about, so it is kept for the message's life.
    _found_in: dict[tuple[str, str], bool] = field(default_factory=dict)
    _negated_after: dict[str, bool] = field(default_factory=dict)
    _has: dict[str, bool] = field(default_factory=dict)
    _subject_in: dict[tuple[str, bool, bool], str | None] = field(default_factory=dict)
    _persons_in: dict[tuple[str, str], dict[str, list[int]]] = field(default_factory=dict)
    _quoted_by_other: dict[int, bool] = field(default_factory=dict)  # by a quotation's index

    @classmethod
    def of(cls, view: str, lexicons: tuple[LanguageLexicon, ...], quotes: Quotes) -> _Message:
        prepared = View.of(view)
        candidates = {lexicon.lang: lexicon.matcher.candidates(prepared) for lexicon in lexicons}
        return cls(prepared, lexicons, candidates, quotes)

    def blanked(self, checked: str, kept: Iterable[str]) -> _Message:
        """The message with far clauses blanked (`_around`). Blanking only removes text, so
        the patterns that may match are a subset of these; the `kept` sections' spans, all
        inside the regions kept, carry over."""
        spans = {section: self._spans[section] for section in kept}
        return _Message(View.of(checked), self.lexicons, self.candidates, self.quotes, spans)

    @property
    def view(self) -> str:
        return self.prepared.text

    def may_match(self, sections: Iterable[str]) -> bool:
        return any(found.section(name) for found in self.candidates.values() for name in sections)

    def _matches(self, section: str) -> Iterator[re.Match[str]]:
        for lexicon in self.lexicons:
            found = self.candidates[lexicon.lang]
            indexes = found.section(section)
            if indexes:
                yield from lexicon.matcher.finditer(self.prepared, section, indexes, found)

    def spans(self, section: str) -> list[Match]:
        if section not in self._spans:
            self._spans[section] = list(self.each_span(section))
        return self._spans[section]

    def each_span(self, section: str) -> Iterator[Match]:
        """`spans(section)` one by one (pattern by pattern, not in text order), found only as
        far as they are asked for: for a question the first span usually answers."""
        if section in self._spans:
            yield from self._spans[section]
            return
        for found in self._matches(section):
            if (end := found.end()) > (start := found.start()):
                yield Match(section, start, end, found.group())

    def has(self, section: str) -> bool:
        if section in self._spans:
            return bool(self._spans[section])
        if section not in self._has:
            self._has[section] = next(self._matches(section), None) is not None
        return self._has[section]

    def clause_before(self, start: int) -> str:
        return self.view[self.view.rfind(CLAUSE_MARK, 0, start) + 1 : start]

    def subject(self, match: Match, *, addressee_is_other: bool = True) -> str | None:
        """Who the match is about: "first", "third" or None. The nearest subject before it in
        its clause, else in the two clauses before (a subject carries over: "她老了，活够了");
        a person after a preposition is an object, not a subject ("给朋友发了…")."""
        reflexive = _REFLEXIVE in match.text
        if self._person_in(FIRST_PERSON, match.text.replace(_REFLEXIVE, "")):
            return "first"
        if reflexive:  # "割自己": the speaker's self unless a third person alone comes before it
            if self._person_in(FIRST_PERSON, self.clause_before(match.start)):  # "她…我就结束自己"
                return "first"
            before = self._subject_before(match, addressee_is_other)
            return "third" if before == "third" else "first"
        return self._subject_before(match, addressee_is_other)

    def _subject_before(self, match: Match, addressee_is_other: bool) -> str | None:
        end = match.start
        clause_end = self.view.find(CLAUSE_MARK, end)  # the end of the match's own clause
        # A clause that opens with a report ("说", "回家说") is said by whoever the clause
        # before is about: any person carries over into it, not only a pronoun.
        reported = False
        for index in range(_SUBJECT_CLAUSES):
            start = self.view.rfind(CLAUSE_MARK, 0, end) + 1
            before = self.view[start:end]
            clause = self.view[start : len(self.view) if clause_end == -1 else clause_end]
            person = self._nearest_subject(
                before,
                clause,
                pronouns_only=index > 0 and not reported,
                addressee_is_other=addressee_is_other,
            )
            if person is not None or start == 0:
                return person
            if index == 0:  # asked only when the subject is not in the match's own clause
                reported = self._found(REPORTED_SPEECH, before)
            end = clause_end = start - 1
        return None

    def _nearest_subject(
        self, before: str, clause: str, *, pronouns_only: bool, addressee_is_other: bool
    ) -> str | None:
        """The nearest person in `before`, a prefix of `clause` (asked once per text)."""
        key = (before, pronouns_only, addressee_is_other)
        if key not in self._subject_in:
            self._subject_in[key] = self._find_nearest_subject(
                before, clause, pronouns_only, addressee_is_other
            )
        return self._subject_in[key]

    def _persons(self, lexicon: LanguageLexicon, text: str) -> dict[str, list[int]]:
        """Per section (negation, first and third person), the patterns that may match in
        `text`, by one RE2 pass (asked once per text: a match's clause start is asked about by
        the negation and the subject checks, an earlier clause by every match after it)."""
        key = (lexicon.lang, text)
        if key not in self._persons_in:
            # No RE2 pass where the lexicon cannot match (English words in a Chinese clause).
            self._persons_in[key] = (
                lexicon.persons.candidates(text) if lexicon.may_match_in(text) else {}
            )
        return self._persons_in[key]

    def _person_matches(self, section: str, text: str) -> Iterator[re.Match[str]]:
        """`Section.finditer` of each language's section over `text`, the same matches in the
        same order, with the RE2 pass shared by the sections and kept."""
        for lexicon in self.lexicons:
            patterns = lexicon.sections[section].patterns
            for index in self._persons(lexicon, text).get(section, ()):
                yield from patterns[index].finditer(text)

    def _person_in(self, section: str, text: str) -> bool:
        """`_found` for the sections of `LanguageLexicon.persons`."""
        return next(self._person_matches(section, text), None) is not None

    def _find_nearest_subject(
        self, before: str, clause: str, pronouns_only: bool, addressee_is_other: bool
    ) -> str | None:
        # A pattern's over-approximation has no anchor or look-around: where RE2 finds no
        # person in the whole clause (asked once per clause), it finds none in its start.
        if before != clause and not any(
            self._persons(lexicon, clause).keys() - {NEGATION} for lexicon in self.lexicons
        ):
            return None
        nearest: tuple[int, str] | None = None
        for section, person in ((FIRST_PERSON, "first"), (THIRD_PERSON, "third")):
            for found in self._person_matches(section, before):
                if pronouns_only and not _PRONOUN.fullmatch(found.group()):
                    continue
                if person == "first" and _TOLD_ME.search(before[: found.start()]):
                    continue
                if person == "third" and _PREPOSITION.search(before[: found.start()]):
                    continue
                if (
                    person == "third"
                    and not addressee_is_other
                    and _ADDRESSEE.fullmatch(found.group())
                ):
                    continue
                if nearest is None or found.end() > nearest[0]:
                    nearest = (found.end(), person)
        return nearest[1] if nearest else None

    def in_clause(self, match: Match, section: str) -> bool:
        """Whether `section` matches in the clause that holds `match`."""
        start = self.view.rfind(CLAUSE_MARK, 0, match.start) + 1
        end = self.view.find(CLAUSE_MARK, match.end)
        clause = self.view[start : len(self.view) if end == -1 else end]
        offset = match.start - start  # the match itself is not its own partner
        return self._found(section, clause[:offset] + " " + clause[offset + len(match.text) :])

    def negated(self, match: Match) -> bool:
        before = self.clause_before(match.start)
        if before not in self._negated_after:
            self._negated_after[before] = self._negates(before)
        return self._negated_after[before]

    def of_named_other(self, match: Match) -> bool:
        """Whether the match's clause is about someone the speaker names by relation and not
        about the speaker ("my sister is hoarding her pills", "我室友在囤药"; not "my sister
        found my pills"): the speaker's words inside the name ("my", "我") and "自己", which is
        the subject's self, do not count."""
        start = self.view.rfind(CLAUSE_MARK, 0, match.start) + 1
        end = self.view.find(CLAUSE_MARK, match.start)
        clause = self.view[start : len(self.view) if end == -1 else end]
        at = match.start - start
        rest, named = clause, False
        for lexicon in self.lexicons:
            if lexicon.may_match_in(clause):
                for found in lexicon.sections[NAMED_OTHER].finditer(clause):
                    # the speaker who sees what the named one does is no actor ("我发现我老婆在
                    # 偷偷存药", "i found out my sister is hoarding")
                    seen = _PERCEIVES.search(clause, 0, found.start())
                    start = found.start() if seen is None else seen.start()
                    rest = rest[:start] + " " * (found.end() - start) + rest[found.end() :]
                    # the subject: before the act, not an owner ("爸爸的刀片", "my dads pills")
                    # nor an object or a time ("by my mum", "等室友睡了")
                    named |= (
                        found.end() <= at
                        and not _OWNER.match(clause, found.end())
                        and not _NOT_SUBJECT.search(clause, 0, found.start())
                        and not _THERE_IS.search(clause, found.end(), at + len(match.text))
                    )
        rest = rest.replace(_REFLEXIVE, " ")
        return named and not self._person_in(FIRST_PERSON, rest) and not _MINE.search(rest)

    def quoted_from_other(self, match: Match) -> bool:
        """Whether the match ends inside a quotation of what someone else said ("我老婆说“你们没有
        我会更好”", 'he said "maybe you'd all be better off without me"'; what the match takes in
        before the quotation is the report's frame: "孩子说你们没有我会更好"): a reporting word
        ends the text before the quotation, or before the quotations it follows ("说了很多“我是
        负担”“没有我会更好”"), and its subject is a third person."""
        if (index := self.quotes.ending(match.end)) is None:
            return False
        spans = self.quotes.spans
        while index and _SAME_SPEAKER.fullmatch(self.view[spans[index - 1][1] : spans[index][0]]):
            index -= 1
        if index not in self._quoted_by_other:
            self._quoted_by_other[index] = self._reported_by_other(spans[index][0])
        return self._quoted_by_other[index]

    def _reported_by_other(self, start: int) -> bool:
        """Whether the text before `start` ends with a reporting word (a `[reporting]` line's
        first group) said by a third person: the subject up to the word ("I told her" is the
        speaker's; "我爷爷八十多了，最近总说" opens with a report, so 爷爷 says it)."""
        offset = max(0, start - _REPORT_REACH)
        before = self.view[offset:start].rstrip(" " + CLAUSE_MARK)
        for lexicon in self.lexicons:
            if lexicon.may_match_in(before) and (
                verb := lexicon.sections[REPORTING].search(before)
            ):
                at = offset + verb.end(1)
                return self.subject(Match(REPORTING, at, at, "")) == "third"
        return False

    def is_purpose(self, found: Match) -> bool:
        """Whether a purpose span says what a means is for: not negated ("not for cooking") and
        not a cover told to others ("told the shop it was for a party")."""
        return not self.negated(found) and not self._found(COVER, self.clause_before(found.start))

    def is_a_time(self, found: Match) -> bool:
        """Whether a purpose span is an event said as a time ("after my exam", "等我把论文交了")."""
        end = self.view.find(CLAUSE_MARK, found.end)
        after = self.view[found.end : len(self.view) if end == -1 else end]
        return self._found(EVENT_TIME_BEFORE, self.clause_before(found.start)) or self._found(
            EVENT_TIME_AFTER, after
        )

    def is_medical_source(self, found: Match) -> bool:
        """Whether a purpose span is where medicine comes from ("pharmacy", "医生", "处方")."""
        return self._found(MEDICAL_SOURCE, found.text)

    def ahead(self, match: Match) -> bool:
        """Whether the match's clause says, before it, that the act is to come ("就", "要",
        "going to")."""
        return self._found(ACT_AHEAD, self.clause_before(match.start))

    def _negates(self, before: str) -> bool:
        """Whether a negation ends `before` (the start of a match's clause up to the match)."""
        before = _NOT_NEGATION.sub(lambda m: "_" * len(m.group()), before)
        last: re.Match[str] | None = None
        for found in self._person_matches(NEGATION, before):
            if last is None or found.end() > last.end():
                last = found
        if last is None:
            return False
        gap = before[last.end() :]
        if _CONTRAST.search(gap):
            return False
        if contains_cjk(gap) or contains_cjk(last.group()):
            return len(gap.replace(" ", "")) <= _MAX_NEGATION_GAP_CHARS
        return len(gap.split()) <= _MAX_NEGATION_GAP_WORDS

    def _found(self, section: str, text: str) -> bool:
        key = (section, text)
        if key not in self._found_in:
            self._found_in[key] = any(
                lexicon.sections[section].search(text)
                for lexicon in self.lexicons
                if lexicon.may_match_in(text)
            )
        return self._found_in[key]


class CrisisDetector:
    """Decides whether a message shows risk of suicide or self-harm, and explains why."""

    def __init__(
        self,
        lexicons: dict[str, LanguageLexicon] | None = None,
        model: NgramModel | None = None,
    ) -> None:
        """`model`: the n-gram layer (`load_model()` for the repository's weights; the served
        detector has it unless CONFIDANT_CRISIS_MODEL is off). Without it, the lexicon alone."""
        self._lexicons = lexicons or load_lexicons()
        self._model = model

    def detect(self, text: str) -> Detection:
        view = normalise(text) if text else ""
        if not view:
            return SAFE
        detection = self._by_lexicon(view, text)
        if self._model is None:
            return detection
        if detection.risky:
            detection = _held_by_model(self._model, detection)
            if detection.risky:
                return detection
        # (after a veto too: what it held back is out of the model's windows, so in a long
        # message a risky sentence elsewhere still fires)
        return _by_model(self._model, detection)

    def _by_lexicon(self, view: str, text: str) -> Detection:
        """The lexicon's verdict on `view`, the normalised `text` (whose quotation marks say
        who said what)."""
        lexicons = tuple(
            lexicon
            for lang, lexicon in self._lexicons.items()
            if (lang == "zh" and contains_cjk(view)) or (lang != "zh" and LATIN_LETTER.search(view))
        )
        message = _Message.of(view, lexicons, Quotes(text, view))
        whole = message  # what the speaker says anywhere (a reveal far from the hit) counts
        if not message.may_match(GATED):  # no pattern a candidate starts from can match
            return Detection(risky=False, signals=(), matches=(), view=view)
        # A long message (a journal entry) is read around its hits, and what explains a hit
        # or pairs with it counts only nearby.
        long_view = len(view) > _CHECK_WHOLE_CHARS
        if long_view:
            starts = sorted(m.start for section in GATED for m in message.spans(section))
            if not starts:
                return Detection(risky=False, signals=(), matches=(), view=view)
            checked = _around(view, starts, message.prepared.marks)
            if checked != view:
                message = message.blanked(checked, GATED)
        distinct = {
            (m.signal, m.start, m.end): m
            for signal in (*STRONG_SIGNALS, MENTION)
            for m in message.spans(signal)
        }
        candidates = list(distinct.values())
        deaths = message.spans(DEATH)
        benign = _Cover(message.spans(BENIGN) if candidates or deaths else [])
        for death in deaths:
            if not benign.covers(death) and message.in_clause(death, DESIRE):
                candidates.append(Match(IDEATION, death.start, death.end, death.text))
        means = _planned_means(message, whole, long_view)
        if means:
            first = means[0]
            candidates.append(Match(MEANS_PLAN, first.start, first.end, first.text))
        if not candidates:
            return Detection(risky=False, signals=(), matches=(), view=view)
        if not benign:
            benign = _Cover(message.spans(BENIGN))
        fired: list[Match] = []
        held_back: list[tuple[Match, str]] = []
        purpose = _Purpose(message, long_view)
        if not long_view:
            context = _Nearby.anywhere(message.has(CONTEXT))
            play = _Nearby.anywhere(message.has(GAME))
        else:
            marks = message.prepared.marks
            context = _Nearby.of(message.spans(CONTEXT), marks)
            play = _Nearby.of(message.spans(GAME), marks)
        # Risk told as history, unless the message says it is back or now.
        past = _Nearby.of(
            [] if _said_now(message) else message.spans(PAST),
            message.prepared.marks,
            PAST_CLAUSES,
            ahead=0,
        )
        story = _RecoveryStory.of(message)
        for match in sorted(candidates, key=lambda m: (m.start, m.end)):
            reason = _reason_to_hold_back(
                match, message, whole, benign, context, play, purpose, past, story
            )
            if reason is None:
                fired.append(match)
            else:
                held_back.append((match, reason))
        return Detection(
            risky=bool(fired),
            signals=tuple(dict.fromkeys(m.signal for m in fired)),
            matches=tuple(fired),
            held_back=tuple(held_back),
            view=view,
        )


def _said_now(message: _Message) -> bool:
    """Whether the message says its risk is back or now ("again", "最近", "每天"): "every day"
    after a past time in its own clause tells how often it was then ("以前我每天都想死", "back
    then i was cutting every night") and does not count; any other recurrence word does
    ("以前那些念头又回来了")."""
    marks = message.prepared.marks
    framed: dict[int, int] | None = None  # clause -> where its first past time starts
    for span in message.each_span(RECURRENCE):
        if not _HABITUAL.fullmatch(span.text):
            return True
        if framed is None:
            framed = {}
            for past in message.spans(PAST):
                clause = bisect.bisect_left(marks, past.start)
                framed[clause] = min(past.start, framed.get(clause, past.start))
        if span.start < framed.get(bisect.bisect_left(marks, span.start), len(message.view)):
            return True
    return False


def _now_after_past(match: Match, message: _Message, past: _Nearby) -> bool:
    """Whether "now" is said between the past times that frame `match` and the match: "大学的
    时候我也想过跳楼，如今真想跳楼了" is of now."""
    before = [span for span in past.near(match) if span.start < match.start]
    if not before:
        return False
    last = max(span.end for span in before)
    return _NOW.search(message.view, last, match.start) is not None


def _planned_means(message: _Message, whole: _Message, long_view: bool) -> list[Match]:
    """The means said with access to them or intent to use them: a means plan. "I'm not going
    to jump" shows no intent: only access or intent said without a negation counts. Access
    said of someone the speaker names by relation is theirs ("my roommate has been saving
    pills", "我妹妹在囤药"), unless the speaker says the other is them; an intent is not (its
    time may be the speaker's: "室友今晚都不回来"). Access or intent quoted from someone else is
    theirs ('my friend just texted "i have the pills in front of me"')."""
    means = message.spans(MEANS)
    if not means:
        return []
    revealed = whole.has(SELF_REVEAL)
    plans = (
        found
        for part in (ACCESS, INTENT)
        for found in message.spans(part)
        if not message.negated(found) and (revealed or not _theirs(message, found, part))
    )
    if not long_view:  # a short message is one thought: a plan anywhere in it plans its means
        return means if next(plans, None) is not None else []
    # In a long message the means and the access or intent are one thought only near each
    # other: pills in one sentence of a journal entry and "I want" in another are not a plan.
    near = _Nearby.of(list(plans), message.prepared.marks)
    return [found for found in means if near.explains(found)]


def _theirs(message: _Message, found: Match, part: str) -> bool:
    """Whether access (`part`) or intent is someone else's: access said of a named other, or
    either quoted from someone else."""
    return (part == ACCESS and message.of_named_other(found)) or message.quoted_from_other(found)


@dataclass(frozen=True)
class _RecoveryStory:
    """A message that tells a recovery: a time that is over, a good present said after it
    ("now I'm a nurse", "现在过得很好") and no relapse ("again", "又", "复发"). What it says before
    its last good present is history, however far from the time ("大二的时候|整整半年每天都想死");
    what comes after it is new, and so is a clause that says it is now and names no time that is
    over ("kms thoughts on loop since friday | 2 years clean before that")."""

    until: int  # the start of the last good present
    live: frozenset[int]  # clauses with a "now" and no time that is over
    marks: list[int]

    @classmethod
    def of(cls, message: _Message) -> _RecoveryStory | None:
        recovered = message.spans(RECOVERED)
        if not recovered:
            return None
        past = message.spans(PAST) + message.spans(STORY_PAST)
        if not past or message.has(RELAPSE):
            return None
        marks = message.prepared.marks
        framed = {bisect.bisect_left(marks, span.start) for span in past}
        now = {bisect.bisect_left(marks, span.start) for span in message.spans(RECURRENCE)}
        until = max(span.start for span in recovered)
        return cls(until, frozenset(now - framed), marks)

    def explains(self, match: Match) -> bool:
        return (
            match.start < self.until
            and bisect.bisect_left(self.marks, match.start) not in self.live
        )


def _by_model(model: NgramModel, detection: Detection) -> Detection:
    """The lexicon is silent: the n-gram model fires on a window that reads as risky."""
    held = [(match.start, match.end) for match, _ in detection.held_back]
    window = model_window(model, detection.view, held)
    if window is None or not model.fires(window, language(detection.view)):
        return detection
    match = Match(MODEL, window.start, window.end, detection.view[window.start : window.end])
    return Detection(True, (MODEL,), (match,), detection.held_back, detection.view)


def model_window(model: NgramModel, view: str, held: Iterable[tuple[int, int]]) -> Window | None:
    """The model's riskiest window among those holding nothing the lexicon held back (`held`:
    spans of the view), or None. What the lexicon held back (an idiom, a negation, a third
    person, a novel) was weighed by an explicit rule: the model does not overrule it. A long
    message is scored without the clauses holding such a span, so that an idiom in one of its
    sentences does not hide a risky sentence elsewhere; a short one, scored whole, is the
    model's only when it holds none."""
    spans = sorted(held)
    if not spans:
        return model.riskiest(view)
    if view.count(CLAUSE_MARK) < WHOLE_CLAUSES:
        window = model.riskiest(view)
        overlaps = any(start < window.end and window.start < end for start, end in spans)
        return None if overlaps else window
    return model.riskiest(_blank_clauses(view, spans))


def veto_window(model: NgramModel, view: str, fired: Iterable[tuple[int, int]]) -> Window:
    """The riskiest window the model finds around what the lexicon fired on (`fired`: spans of
    the view): in a short message, the message; in a long one, only the clauses within
    VETO_CLAUSES of a fired span. The veto asks whether the model reads *that* as far from
    risky: the riskiest of a long message's many windows was rarely under a veto level, so a
    look-alike the veto held back alone fired once it stood in a journal entry."""
    if view.count(CLAUSE_MARK) < WHOLE_CLAUSES:
        return model.riskiest(view)
    clauses = view.split(CLAUSE_MARK)
    hit = _clauses_of(clauses, sorted(fired))
    near = {i for h in hit for i in range(h - VETO_CLAUSES, h + VETO_CLAUSES + 1)}
    # (at most WHOLE_CLAUSES of them: one window, as a short message is)
    return model.riskiest(_blanked(clauses, keep=near))


def _blank_clauses(view: str, spans: list[tuple[int, int]]) -> str:
    """The view with every clause that overlaps one of `spans` blanked (offsets and clause
    marks kept)."""
    clauses = view.split(CLAUSE_MARK)
    hit = _clauses_of(clauses, spans)
    return _blanked(clauses, keep=set(range(len(clauses))) - hit)


def _clauses_of(clauses: list[str], spans: Iterable[tuple[int, int]]) -> set[int]:
    """The indexes of the clauses (of a view, in order) that overlap one of `spans` (each span
    looked up from its start: a dense message has hundreds of spans and of clauses)."""
    starts: list[int] = []
    ends: list[int] = []
    offset = 0
    for clause in clauses:
        starts.append(offset)
        ends.append(offset + len(clause))
        offset += len(clause) + 1
    found: set[int] = set()
    for start, end in spans:
        index = max(bisect.bisect_right(starts, start) - 1, 0)
        while index < len(starts) and starts[index] < end:
            if start < ends[index]:
                found.add(index)
            index += 1
    return found


def _blanked(clauses: list[str], keep: set[int]) -> str:
    return CLAUSE_MARK.join(
        clause if index in keep else " " * len(clause) for index, clause in enumerate(clauses)
    )


def _held_by_model(model: NgramModel, detection: Detection) -> Detection:
    """The model reads every window of the message as far from risky (below the veto level of
    what the lexicon fired on): it holds the matches back (and says so)."""
    wishes_only = MODEL_MAY_HOLD_BACK.issuperset(detection.signals)
    levels = model.vetoes if wishes_only else model.strict_vetoes
    level = levels.get(language(detection.view), 0.0)
    if not level:
        return detection
    fired = [(match.start, match.end) for match in detection.matches]
    if veto_window(model, detection.view, fired).probability >= level:
        return detection
    held = detection.held_back + tuple((match, MODEL_BENIGN) for match in detection.matches)
    return Detection(False, (), (), held, detection.view)


def _around(view: str, starts: list[int], marks: list[int]) -> str:
    """The view with every clause far from a match a candidate starts from blanked (offsets
    kept, clause marks kept)."""
    regions: list[tuple[int, int]] = []
    for hit in starts:
        index = bisect.bisect_left(marks, hit)
        start = marks[index - _REGION_CLAUSES] + 1 if index - _REGION_CLAUSES >= 0 else 0
        last = index + _REGION_CLAUSES - 1
        end = marks[last] + 1 if last < len(marks) else len(view)
        if regions and start <= regions[-1][1]:
            regions[-1] = (regions[-1][0], max(end, regions[-1][1]))
        else:
            regions.append((start, end))
    pieces: list[str] = []
    done = 0
    for start, end in regions:
        pieces += [_blank(view[done:start]), view[start:end]]
        done = end
    pieces.append(_blank(view[done:]))
    return "".join(pieces)


def _blank(text: str) -> str:
    """Every character but the clause marks as a space (string methods: a regular expression
    replacing each character costs 0.1 ms on 2,000 characters)."""
    return CLAUSE_MARK.join(" " * len(clause) for clause in text.split(CLAUSE_MARK))


class _Cover:
    """Spans, ready to say whether one of them holds a match (in log time: by start, with the
    furthest end reached so far)."""

    def __init__(self, spans: Iterable[Match]) -> None:
        ordered = sorted((span.start, span.end) for span in spans)
        self._starts = [start for start, _ in ordered]
        self._reach: list[int] = []
        for _, end in ordered:
            self._reach.append(max(end, self._reach[-1]) if self._reach else end)

    def __bool__(self) -> bool:
        return bool(self._starts)

    def covers(self, match: Match) -> bool:
        index = bisect.bisect_right(self._starts, match.start) - 1
        return index >= 0 and self._reach[index] >= match.end


@dataclass(frozen=True)
class _Nearby:
    """Where a modifier was found (a game, an everyday purpose, fiction, study or news), to say
    whether it explains a match: in a short message, found anywhere in it; in a long one, only
    within MODIFIER_CLAUSES clauses of the match (a purpose: PURPOSE_CLAUSES). A recipe or a
    novel three sentences away in a journal entry says nothing of this sentence: a risky
    sentence buried in ordinary text was held back by the purpose or the context of its
    neighbours. A past time frames only its own clause and the next, at any length."""

    found: bool
    clauses: tuple[int, ...] | None = None  # the clause of each span (None: a short message)
    marks: list[int] = field(default_factory=list)
    reach: int = MODIFIER_CLAUSES  # clauses before the match's
    ahead: int = MODIFIER_CLAUSES  # clauses after it
    spans: tuple[Match, ...] = ()  # the spans, in the order of `clauses`

    @classmethod
    def anywhere(cls, found: bool) -> _Nearby:
        return cls(found)

    @classmethod
    def of(
        cls,
        spans: list[Match],
        marks: list[int],
        reach: int = MODIFIER_CLAUSES,
        ahead: int | None = None,  # as far as `reach` unless said
    ) -> _Nearby:
        ordered = sorted(
            ((bisect.bisect_left(marks, span.start), span) for span in spans), key=lambda p: p[0]
        )
        clauses = tuple(clause for clause, _ in ordered)
        ahead = reach if ahead is None else ahead
        return cls(bool(spans), clauses, marks, reach, ahead, tuple(span for _, span in ordered))

    def explains(self, match: Match) -> bool:
        if not self.found or self.clauses is None:
            return self.found
        low, high = self._window(match)
        return low < high

    def near(self, match: Match) -> tuple[Match, ...]:
        """The spans within reach of `match` (of a long message: `of`)."""
        low, high = self._window(match)
        return self.spans[low:high]

    def _window(self, match: Match) -> tuple[int, int]:
        at = bisect.bisect_left(self.marks, match.start)
        return (
            bisect.bisect_left(self.clauses or (), at - self.reach),
            bisect.bisect_right(self.clauses or (), at + self.ahead),
        )


class _Purpose:
    """The everyday purposes that may explain a match: in a short message any, in a long one
    those within PURPOSE_CLAUSES of it; not negated ("not for cooking") and not a cover told to
    others ("told the shop it was for a party"). An act to come timed by an event ("after my
    last exam | I'm going to jump", "等她结婚那天我就…") is not explained by the event; a means or
    a goodbye may be ("the pills from my surgery", "出国前把钥匙交给我姐"), and so may an act
    told as done ("下班后…吞药的女孩"). Each span is checked only when a match asks (a dense
    message has dozens)."""

    def __init__(self, message: _Message, long_view: bool) -> None:
        self._message = message
        self._spans = message.spans(PURPOSE)
        marks = message.prepared.marks
        self._near = _Nearby.of(self._spans, marks, PURPOSE_CLAUSES) if long_view else None

    def explains(self, match: Match) -> bool:
        message = self._message
        near = self._spans if self._near is None else self._near.near(match)
        timed = match.signal == "plan" or (match.signal == "method" and message.ahead(match))
        hoarded = match.signal == MEANS_PLAN and message.has(HOARDING)
        return any(
            message.is_purpose(span)
            and not (timed and message.is_a_time(span))
            and not (hoarded and message.is_medical_source(span))
            for span in near
        )


def _reason_to_hold_back(
    match: Match,
    message: _Message,
    whole: _Message,  # before a long message's far clauses were blanked
    benign: _Cover,
    context: _Nearby,
    play: _Nearby,
    purpose: _Purpose,
    past: _Nearby,
    story: _RecoveryStory | None,
) -> str | None:
    """Why `match` is not about the speaker's risk now, or None (it fires). A self-reveal ("the
    friend is me") is said of the whole message, often far from the match: it is asked of
    `whole`, and only when a third person or a context would hold the match back."""
    if benign.covers(match):
        return "benign"
    if match.signal == MEANS_PLAN:
        subject: str | None = "first" if message.has(FIRST_PERSON) else None
    else:
        if message.negated(match):
            return "negated"
        subject = message.subject(match, addressee_is_other=match.signal not in _SAID_TO_SOMEONE)
        if subject != "third" and message.quoted_from_other(match):
            subject = "third"
        if subject == "third":
            if not whole.has(SELF_REVEAL):
                return "third_person"
            subject = "first"
    if (
        match.signal in _PAST_EXPLAINS
        and past.explains(match)
        and not _now_after_past(match, message, past)
    ):
        return "past"
    if story is not None and match.signal in _STORY_EXPLAINS and story.explains(match):
        return "past"
    if match.signal in _PLAY_EXPLAINS and play.explains(match):
        return "game"
    if match.signal in _PURPOSE_EXPLAINS and purpose.explains(match):
        return "purpose"
    if (
        (match.signal == MENTION or subject is None)
        and context.explains(match)
        and not whole.has(SELF_REVEAL)
    ):
        return "context"
    return None


__all__ = ["SAFE", "CrisisDetector", "Detection", "Match", "normalise_locale"]
