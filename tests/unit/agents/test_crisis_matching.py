"""The crisis detector's fast paths change nothing: RE2 only says where Python's `re` need look,
and normalisation's shortcuts give the same view as the plain pipeline."""

from __future__ import annotations

import json
import random
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from re import _parser as sre_parse  # type: ignore[attr-defined]

import pytest
import re2

from agents.safety import CrisisDetector, Detection, glued, load_lexicons
from agents.safety import detector as detector_module
from agents.safety import lexicon as lexicon_module
from agents.safety import normalise as normalise_module
from agents.safety.detector import _Message
from agents.safety.lexicon import FIRST_PERSON, THIRD_PERSON
from agents.safety.normalise import CLAUSE_MARK, normalise

DEV_SET = Path(__file__).resolve().parents[2] / "data" / "crisis_dev_set.jsonl"


@pytest.fixture(scope="module")
def texts() -> list[str]:
    lines = DEV_SET.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines if line.strip()]


def test_every_match_of_a_pattern_is_in_its_re2_over_approximation(texts: list[str]) -> None:
    views = sorted({normalise(text) for text in texts})
    missed = []
    for lexicon in load_lexicons().values():
        for section, compiled in lexicon.sections.items():
            for pattern in compiled.patterns:
                superset = re2.compile(pattern.superset)
                for view in views:
                    for found in pattern.regex.finditer(view):
                        if not superset.fullmatch(found.group()):
                            missed.append((lexicon.lang, section, pattern.regex.pattern))
    assert missed == []


def test_every_match_of_a_lexicon_holds_a_character_of_its_script(texts: list[str]) -> None:
    """English clauses of a Chinese message (and Chinese ones of an English message) are not
    searched by a lexicon whose every pattern needs a character of its script."""
    lexicons = load_lexicons()
    assert lexicons["en"].script is not None
    assert not lexicons["en"].may_match_in("我不想活了，真的")
    views = sorted({normalise(text) for text in [*texts, *_long_messages(texts, 50)]})
    missed = []
    for lexicon in lexicons.values():
        if lexicon.script is None:
            continue
        for section, compiled in lexicon.sections.items():
            for pattern in compiled.patterns:
                for view in views:
                    for found in pattern.regex.finditer(view):
                        if not lexicon.script.search(found.group()):
                            missed.append((lexicon.lang, section, pattern.regex.pattern))
    assert missed == []


@pytest.mark.parametrize(
    ("pattern", "needs"),
    [
        ("kill (my)?self", True),
        ("(?:want|need) to die", True),
        ("[a-c]x?", True),
        ("(me)?", False),  # may match nothing
        (r"\w+", False),  # a Chinese character is a word character too
        ("[^ ]+", False),
        ("死|die", False),
        ("(?=die)", False),  # a look-ahead consumes nothing
        ("(?i)x", False),
        ("(?i:x)y", True),  # the "y" is still needed
        ("(?i:x)", False),
    ],
)
def test_a_pattern_needs_a_latin_letter_only_when_every_match_holds_one(
    pattern: str, needs: bool
) -> None:
    assert lexicon_module._needs(sre_parse.parse(pattern), re.compile("[a-z]")) is needs


def test_a_pattern_tried_only_where_it_can_start_finds_what_re_finds(texts: list[str]) -> None:
    """Patterns that `re` would try at every position are tried only at the characters a match
    can start with: the same matches, whole views and windows of them (look-behinds see the
    text before a window's start, look-aheads stop at its end)."""
    views = sorted({normalise(text) for text in [*texts, *_long_messages(texts, 100)]})
    rng = random.Random(10)
    patterns = [
        pattern
        for lexicon in load_lexicons().values()
        for section in lexicon.sections.values()
        for pattern in section.patterns
        if pattern.starts is not None
    ]
    assert len(patterns) > 50
    differing = []
    for view in views:
        start = rng.randint(0, len(view))
        end = rng.randint(start, len(view))
        for pattern in patterns:
            for window in ((0, len(view)), (start, end)):
                ours = [found.span() for found in pattern.finditer(view, *window)]
                theirs = [found.span() for found in pattern.regex.finditer(view, *window)]
                if ours != theirs:
                    differing.append((pattern.regex.pattern, view, window))
            ours_first, theirs_first = pattern.search(view), pattern.regex.search(view)
            if (ours_first and ours_first.span()) != (theirs_first and theirs_first.span()):
                differing.append((pattern.regex.pattern, view, None))
    assert differing == []


@pytest.mark.parametrize(
    ("pattern", "starts"),
    [
        ("(让)?(所有|一切)痛苦", "一所让"),  # an optional group: its start or what follows
        ("(?<![吉其])他|她们", "他她"),  # a look-behind consumes nothing
        ("(?:|信|会)告别", "会信告"),  # an empty branch
        ("(想|要)?\\w+", None),  # a word character may be anything
        ("(好)?死(?=了)|(?:难|苦)?[过活]", "好死难苦过活"),
        ("死|死亡", None),  # a literal start: `re` skips to it itself
        ("(想)?", None),  # may match nothing
        ("(要)?(die|死)", None),  # may start with a latin letter
    ],
)
def test_a_pattern_starts_only_with_the_characters_found(pattern: str, starts: str | None) -> None:
    found = lexicon_module._starts(pattern, sre_parse.parse(pattern))
    if starts is None:
        assert found is None
    else:
        assert found is not None
        assert {char for char in map(chr, range(0x4E00, 0xA000)) if found.match(char)} == set(
            starts
        )


def test_a_digit_may_start_a_chinese_pattern() -> None:
    line = r"(\d+|十几)楼|天台"
    found = lexicon_module._starts(line, sre_parse.parse(line))
    assert found is not None
    assert [char for char in "3十天楼几" if found.match(char)] == ["3", "十", "天"]


def _every_pattern_everywhere(self: _Message, section: str) -> Iterator[re.Match[str]]:
    """The reference: every pattern of the section run over the whole view, no RE2."""
    for lexicon in self.lexicons:
        for pattern in lexicon.sections[section].patterns:
            yield from pattern.regex.finditer(self.view)


def _differing(fast: list[Detection], reference: list[Detection]) -> list[int]:
    """Indexes where two runs disagree on verdict, signals, spans or held-back reasons."""
    return [
        index
        for index, (ours, theirs) in enumerate(zip(fast, reference, strict=True))
        if (ours.risky, ours.signals, ours.matches, ours.held_back)
        != (theirs.risky, theirs.signals, theirs.matches, theirs.held_back)
    ]


def test_detections_equal_running_every_pattern_everywhere(
    texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Long messages mixing the set's English and Chinese cases: runs of clauses a lexicon
    # cannot match in are skipped.
    messages = [*texts, *_long_messages(texts, 100)]
    detector = CrisisDetector()
    fast = [detector.detect(text) for text in messages]
    monkeypatch.setattr(_Message, "_matches", _every_pattern_everywhere)
    reference = [detector.detect(text) for text in messages]
    assert _differing(fast, reference) == []


def _long_messages(texts: list[str], count: int) -> list[str]:
    """Messages of 2 to 40 cases of the set, joined by clause ends, spaces or contrasts: many
    candidates, subjects and negations per message, sharing clauses."""
    rng = random.Random(7)
    joiners = [". ", "。", " ", "，", "\n", " but ", "但是", "! "]
    return [
        rng.choice(joiners).join(rng.choice(texts) for _ in range(rng.randint(2, 40)))
        for _ in range(count)
    ]


def _per_match_search(self: _Message, section: str, text: str) -> Iterator[re.Match[str]]:
    """The reference hold-back search: each section's own RE2 set on each text, nothing kept."""
    for lexicon in self.lexicons:
        yield from lexicon.sections[section].finditer(text)


def _per_match_nearest_subject(
    self: _Message, before: str, clause: str, *, pronouns_only: bool, addressee_is_other: bool
) -> str | None:
    nearest: tuple[int, str] | None = None
    for section, person in ((FIRST_PERSON, "first"), (THIRD_PERSON, "third")):
        for found in _per_match_search(self, section, before):
            if pronouns_only and not detector_module._PRONOUN.fullmatch(found.group()):
                continue
            if person == "third" and detector_module._PREPOSITION.search(before[: found.start()]):
                continue
            addressee = detector_module._ADDRESSEE.fullmatch(found.group())
            if person == "third" and not addressee_is_other and addressee:
                continue
            if nearest is None or found.end() > nearest[0]:
                nearest = (found.end(), person)
    return nearest[1] if nearest else None


def _per_match_negated(self: _Message, match: detector_module.Match) -> bool:
    return self._negates(self.clause_before(match.start))


def test_hold_back_answers_kept_per_message_equal_asking_per_match(
    texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hold-back checks share one RE2 pass per text, keep their answers for the message and
    skip a clause where no person may match: the same detections as asking each section anew for
    every match, on the set and on long messages built from it."""
    messages = [*texts, *_long_messages(texts, 400)]
    detector = CrisisDetector()
    fast = [detector.detect(text) for text in messages]
    monkeypatch.setattr(_Message, "_nearest_subject", _per_match_nearest_subject)
    monkeypatch.setattr(_Message, "negated", _per_match_negated)
    monkeypatch.setattr(
        _Message,
        "_person_matches",
        lambda self, section, text: _per_match_search(self, section, text),
    )
    monkeypatch.setattr(
        _Message,
        "_found",
        lambda self, section, text: any(
            lexicon.sections[section].search(text) for lexicon in self.lexicons
        ),
    )
    reference = [detector.detect(text) for text in messages]
    assert _differing(fast, reference) == []
    assert sum(len(detection.held_back) for detection in fast) > len(messages)


def _plain_normalise(text: str) -> str:
    """normalise() without its shortcuts: every step, one regular expression each."""
    m = normalise_module
    text = unicodedata.normalize("NFKC", text)
    folded = m._INVISIBLE.sub("", text).casefold().translate(m._folds())
    folded = m._MIXED_WORD.sub(lambda found: found.group().translate(m._HOMOGLYPHS), folded)
    folded = m._EMOJI_AS_ACT.sub(r"\1 jump ", folded)
    folded = m._ZH_EMOJI_AS_ACT.sub(lambda found: m._ZH_ACTS[found.group(1)], folded)
    folded = m._EMOJI.sub(m._emoji_word, folded)
    for parts, character in m._SPLIT_CHARACTERS.items():
        folded = folded.replace(parts, character)
    folded = re.sub(r"(?<=[a-z])['’](?=[a-z])", "", folded)
    folded = m._TWO_AS_TO.sub(m._two_as_to, folded)
    folded = m._LEET_WORD.sub(lambda found: found.group().translate(m._LEET), folded)
    folded = m._SPLIT_LETTERS.sub(m._join_split_letters, folded)
    folded = glued.RUN.sub(lambda found: glued.split_run(found.group()), folded)
    folded = re.sub(r"[。；，、\n,;!?]|[.:](?=\s|$)| [-–—]+ ", f" {CLAUSE_MARK} ", folded)
    folded = re.sub(r"([^\W\d])\1\1+", r"\1", folded)
    cjk = m.CJK_CLASS
    folded = re.sub(rf"[^\w{cjk}\{CLAUSE_MARK}]+|_+", " ", folded).strip()
    return re.sub(rf"(?<=[{cjk}]) | (?=[{cjk}])", "", folded)


def _tricky_pieces() -> list[str]:
    """Characters and words that each step of normalisation acts on."""
    pieces = list("abdeiklmostuy 0134579@$!|*.,;:?-–—_'’\n\t") + list(
        "自杀死想跳楼我，。？！：；（）　ＡＢ１！～殺樂哈"
    )
    pieces += ["\u200b", "\u00ad", "💊", "🔪", "é", "ﬁ", "²", "e\u0301", "，\u0301", "ß", "İ"]
    # emoji stand-ins, tone marks, a split character, and words that glue into phrases
    pieces += ["🚆", "🪦", "⚰️", "gonna", "want to", "ǒ", "Ǐ", "歹", "匕", "kill", "die", "myself"]
    pieces += [
        "і",
        "а",
        "о",
        "α",
        "κ",
        "2",
        "want",
        "привет",
        "🪢",
        "🏢",
        "要",
        "了",
    ]  # homoglyphs, "2" for "to"
    return pieces


def test_normalise_equals_the_plain_pipeline(texts: list[str]) -> None:
    pieces = _tricky_pieces()
    rng = random.Random(6)
    probes = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(20000)]
    differ = [text for text in [*texts, *probes] if normalise(text) != _plain_normalise(text)]
    assert differ == []


def test_normalise_of_long_texts_equals_the_plain_pipeline(texts: list[str]) -> None:
    """A long view (400 characters or more) takes array operations instead of some regular
    expressions: the same view."""
    pieces = _tricky_pieces()
    rng = random.Random(11)
    probes = ["".join(rng.choices(pieces, k=rng.randint(150, 900))) for _ in range(300)]
    probes += [rng.choice(["，", ". ", " ", "\n"]).join(rng.sample(texts, 40)) for _ in range(100)]
    assert sum(len(normalise(text)) >= 400 for text in probes) > 350
    differ = [text for text in probes if normalise(text) != _plain_normalise(text)]
    assert differ == []
