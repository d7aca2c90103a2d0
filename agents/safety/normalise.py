"""Normalisation of a message into the one string every crisis pattern is matched against.

The *view* of a message is: NFKC (full-width to half-width), casefold, format characters
(zero-width spaces) dropped, traditional Chinese folded to simplified and pinyin tone marks to
plain letters, emoji stand-ins (in English, or in Chinese next to a Chinese character), split
characters ("歹匕") and leetspeak spelled out, letters separated to dodge filters joined again
("k i l l", "w-a-n-t"), words glued together split ("iwanttodie", glued.py), runs of one
repeated character shortened ("diiiie", "死死死死"), and punctuation dropped except
clause ends, which become `|` so a pattern never spans two clauses. Latin words are separated
by one space; CJK characters are glued together (and to adjacent latin words), so "自 杀" and
"自-殺" both read "自杀".
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from pathlib import Path

import numpy as np
import re2

from agents.safety.glued import split_glued

DATA_DIR = Path(__file__).parent / "data"
VARIANTS_FILE = "zh_variants.txt"
CLAUSE_MARK = "|"

CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RE = re.compile(rf"[{CJK_CLASS}]")
# Emoji people use in place of a word: a means (read as the word, so a means emoji alone does
# not fire, as a means word alone does not), or death ("want to 🪦"), in English, or in
# Chinese next to a Chinese character ("想跳🏢" reads "想跳楼"). 💀 and ☠️ are left out: they
# mostly say "I'm dead (laughing)".
_EMOJI_WORDS: dict[str, tuple[str, str]] = {
    "💊": ("pills", "药"),
    "🔪": ("knife", "刀"),
    "🗡": ("knife", "刀"),
    "🪒": ("razor", "刀片"),
    "🪢": ("rope", "绳子"),
    "🔫": ("gun", "枪"),
    "🩸": ("blood", "血"),
    "🚆": ("train", "火车"),
    "🚂": ("train", "火车"),
    "🚄": ("train", "火车"),
    "🚅": ("train", "火车"),
    "🚇": ("train", "地铁"),
    "🚈": ("train", "火车"),
    "🛤": ("train tracks", "铁轨"),
    "🌉": ("bridge", "桥"),
    "🏢": ("building", "楼"),
    "🏙": ("building", "楼"),
    "🧗": ("climb", "爬"),
    "🪦": ("die", "死"),
    "⚰": ("die", "死"),
}
_EMOJI = re.compile("|".join(map(re.escape, _EMOJI_WORDS)))  # slow: run only when one is in
# The same in Chinese: right after 想/要… and at a clause's end ("想🪢，不想再熬了", "想🏢了"),
# a rope, a building, a bridge or a train stands for the act.
_ZH_ACTS = {"🪢": "上吊", "🏢": "跳楼", "🏙": "跳楼", "🌉": "跳桥"} | dict.fromkeys(
    "🚆🚂🚄🚅🚈", "卧轨"
)
_ZH_EMOJI_AS_ACT = re.compile(
    rf"(?<=想|要|去)([{''.join(_ZH_ACTS)}])\ufe0f?(?=[^\w{CJK_CLASS}]|$|了|吧|算了)"
)
# What may stand between an emoji and the word it is read with: spaces, other emoji, and the
# variation selector.
_EMOJI_GAP = frozenset(" \ufe0f").union(_EMOJI_WORDS)


def _emoji_word(found: re.Match[str]) -> str:
    """The word an emoji stands for: Chinese when the nearest character before it (or, at the
    start, after it) is Chinese, else English."""
    text, start, end = found.string, found.start(), found.end()
    while start and text[start - 1] in _EMOJI_GAP:
        start -= 1
    if start:
        neighbour = text[start - 1]
    else:
        while end < len(text) and text[end] in _EMOJI_GAP:
            end += 1
        neighbour = text[end] if end < len(text) else ""
    english, chinese = _EMOJI_WORDS[found.group()]
    return chinese if _CJK_RE.match(neighbour) else f" {english} "


# A place or a train right after a wish or a plan ("gonna 🌉 tonight", "wanna 🚆") stands for
# the act: read as "jump", which the lexicon weighs like the word. Not after "need to", "gotta"
# or "about to", which mostly mean taking the train.
_JUMP_EMOJI = "🚆🚂🚄🚅🚇🚈🛤🌉🏢🏙"
_EMOJI_AS_ACT = re.compile(
    r"(?<![a-z])(gonna|wanna|tryna|finna|going to|want to|ready to|plan to|planning to) ?"
    rf"[{_JUMP_EMOJI}]\ufe0f?(?: ?jump(?![a-z]))?"
)
# Pinyin with its tone marks ("wǒ xiǎng sǐ") reads as plain pinyin ("wo xiang si"): folded
# with the traditional characters, in the same pass.
_TONES = {
    ord(marked): plain
    for plain, marks in (("a", "āáǎà"), ("e", "ēéěè"), ("i", "īíǐì"), ("o", "ōóǒò"), ("u", "ūúǔù"))
    for marked in marks
} | {ord(marked): "ü" for marked in "ǖǘǚǜ"}
# Cyrillic and Greek letters that look like latin ones, put into an English word to dodge a
# filter ("kіll", "wаnt" with a Cyrillic і, а): folded only inside a word that mixes them with
# latin letters, so Russian or Greek words stay as they are.
_HOMOGLYPHS = {
    ord(lookalike): latin
    for latin, lookalikes in (
        ("a", "аα"),
        ("c", "с"),
        ("d", "ԁ"),
        ("e", "еёε"),
        ("h", "һ"),
        ("i", "іїι"),
        ("j", "ј"),
        ("k", "кκ"),
        ("l", "ӏ"),
        ("m", "м"),
        ("o", "оο"),
        ("p", "рρ"),
        ("s", "ѕ"),
        ("u", "υ"),
        ("v", "ν"),
        ("w", "ԝ"),
        ("x", "хχ"),
        ("y", "у"),
    )
    for lookalike in lookalikes
}
_HOMOGLYPH_CLASS = "".join(map(chr, _HOMOGLYPHS))
_HOMOGLYPH = re.compile(f"[{_HOMOGLYPH_CLASS}]")
_MIXED_WORD = re.compile(
    rf"[^\W\d_]*(?:[a-z][^\W\d_]*[{_HOMOGLYPH_CLASS}]|[{_HOMOGLYPH_CLASS}][^\W\d_]*[a-z])[^\W\d_]*"
)
# "2" for "to" after a wish or a plan ("want 2 die", "iwant2die"): glued on both sides it
# stays glued, so the glued-words step can split the phrase.
_TWO_AS_TO = re.compile(r"(?<=want|need|oing|onna|anna|eady|bout|ying|erve)( ?)2( ?)(?=[a-z])")
_TWO_AS_TO_RE2 = re2.compile(r"(?:want|need|oing|onna|anna|eady|bout|ying|erve) ?2 ?[a-z]")


def _two_as_to(found: re.Match[str]) -> str:
    return "to" if not found.group(1) and not found.group(2) else " to "


# A character written as its parts to dodge a filter ("歹匕" for 死).
_SPLIT_CHARACTERS = {"歹匕": "死"}
_LEET = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "@": "a",
        "$": "s",
        "!": "i",
        "|": "i",
        "*": "",
    }
)
# A word with a leet character between letters: "k!ll", "mys3lf", "su1c1de", "un@live", "s*icide".
_LEET_WORD = re.compile(
    r"[a-z][a-z0-9@$!|*]*[0-9@$!|*][a-z0-9@$!|*]*[a-z]|[a-z]+[0-9]+(?![a-z0-9])|[@$][a-z]+"
)
# Written to start with the apostrophe, so `re` jumps from one to the next instead of trying the
# look-behind at every position.
_APOSTROPHE = re.compile(r"['’](?<=[a-z]['’])(?=[a-z])")
# Clause ends: CJK punctuation (NFKC turns "，" into ","), new lines, dashes between words, and
# full stops and colons before a space, the end or CJK ("end.my.life" is one clause).
# Done in three steps that cannot interfere (their characters differ, and the dashes, which
# need a space either side, go first): dashes, then stops, then every single-character end.
_CLAUSE_DASHES = re.compile(r" [-–—]+ ")
_CLAUSE_STOPS = re.compile(r"[.:](?=\s|$)")
_CLAUSE_CHARS = "。；，、\n,;!?"
_REPEATS = re.compile(r"([^\W\d])\1\1+")
_TRIPLE = re.compile(r"(.)\1\1", re.DOTALL)  # any character: `_REPEATS` is asked only after it
_ARRAY_TRIPLE_CHARS = 400


@cache
def _variants(data_dir: Path = DATA_DIR) -> dict[int, str]:
    """Traditional → simplified characters (only those the lexicon can meet)."""
    table: dict[int, str] = {}
    for raw in (data_dir / VARIANTS_FILE).read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0]
        for pair in line.split():
            if len(pair) == 2:
                table[ord(pair[0])] = pair[1]
    return table


@cache
def _folds(data_dir: Path = DATA_DIR) -> dict[int, str]:
    """Characters folded one for one: traditional → simplified, tone-marked pinyin → plain."""
    return _TONES | _variants(data_dir)


@cache
def _fold_chars(data_dir: Path = DATA_DIR) -> re.Pattern[str]:
    """Any character `_folds` folds: most messages hold none or a few, so C-level searches
    spare the per-character translate."""
    return re.compile(f"[{re.escape(''.join(map(chr, _folds(data_dir))))}]")


def contains_cjk(text: str) -> bool:
    # `isascii` reads a flag the string keeps: no scan of an English message
    return not text.isascii() and _CJK_RE.search(text) is not None


_INVISIBLE = re.compile(r"[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
# Runs of anything but a word character, a CJK character or a clause mark (separators) become
# one space (`_separators_as_spaces`). The characters that may be separators, found without
# testing every character against `\w` (a Unicode category: `re` takes 17 ns a character):
# after casefolding, anything but these may be one.
_NOT_SEPARATOR_CLASS = rf"a-z0-9_ {CJK_CLASS}\{CLAUSE_MARK}"
_MAYBE_SEPARATOR = re.compile(f"[^{_NOT_SEPARATOR_CLASS}]")
_NOT_SEPARATOR_BYTES = bytes(
    code for code in range(128) if re.fullmatch(f"[{_NOT_SEPARATOR_CLASS}]", chr(code))
)
_UNDERSCORES = re.compile("_+")
# A space next to a CJK character; written to start with the space, so `re` jumps from space
# to space instead of trying every position.
_CJK_GAP = re.compile(rf" (?:(?<=[{CJK_CLASS}] )|(?=[{CJK_CLASS}]))")
_ARRAY_GAP_CHARS = 400  # a shorter text: `_CJK_GAP` (numpy's cost per call is more)
_IS_CJK_UNIT = np.zeros(0x10000, dtype=bool)  # by UTF-16 unit (every CJK character is one)
for _first, _last in re.findall(r"(.)-(.)", CJK_CLASS):
    _IS_CJK_UNIT[ord(_first) : ord(_last) + 1] = True
# Full-width forms and the ideographic space, folded as NFKC folds them (each to one ASCII
# character): Chinese text is mostly NFKC but for its punctuation, and full NFKC is slow.
_FULL_WIDTH = re.compile("[\uff01-\uff5e\u3000]")
# Letters split by single separators ("k i l l", "w-a-n-t", "s.u.i.c.i.d.e") are one word;
# wider gaps ("i w a n t  t o  d i e") still separate words, and a leading "i" stays a word.
_SPLIT_LETTERS = re.compile(r"(?<![a-z0-9])[a-z](?:[ .\-_*][a-z])+(?![a-z0-9])")
# The same searches in RE2 (one linear pass, no look-around): most messages need neither step.
_SPLIT_LETTERS_RE2 = re2.compile(r"(?:^|[^a-z0-9])[a-z](?:[ .\-_*][a-z])+(?:[^a-z0-9]|$)")
# `_LEET_WORD` without its look-ahead: where it finds nothing, the spelling-out cannot apply.
_LEET_WORD_RE2 = re2.compile(_LEET_WORD.pattern.replace("(?![a-z0-9])", ""))


LATIN_LETTER = re.compile("[a-z]")  # after casefolding: the lexicon's and detector's test too


def _join_split_letters(match: re.Match[str]) -> str:
    letters = match.group()[::2]
    if len(letters) > 3 and letters[0] == "i":
        return f"i {letters[1:]}"
    return letters


def _whole_characters(text: str) -> str:
    """`text` with every lone UTF-16 surrogate (JSON can spell one, `"\\ud83d"`; no UTF-8 text
    holds it, and RE2 matches UTF-8) as U+FFFD, and a high one followed by a low one as the
    character the pair spells."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def _nfkc(text: str) -> str:
    if unicodedata.is_normalized("NFKC", text):  # a quick check; NFKC itself is slow on CJK
        return text
    for wide in set(_FULL_WIDTH.findall(text)):
        text = text.replace(wide, unicodedata.normalize("NFKC", wide))
    if unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


def _clause_ends(text: str) -> str:
    mark = f" {CLAUSE_MARK} "
    if "-" in text or "–" in text or "—" in text:
        text = _CLAUSE_DASHES.sub(mark, text)
    if "." in text or ":" in text:
        text = _CLAUSE_STOPS.sub(mark, text)
    for end in _CLAUSE_CHARS:
        if end in text:
            text = text.replace(end, mark)
    return text


def _has_triple(text: str) -> bool:
    """Whether some character occurs three times in a row: on a long text, found with array
    comparisons of the characters as 32-bit integers (a regular expression's walk costs 20 µs
    on 2,000 characters), on a short one by the walk (numpy's cost per call is more)."""
    if len(text) < _ARRAY_TRIPLE_CHARS:
        return _TRIPLE.search(text) is not None
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    same = codes[1:] == codes[:-1]  # character i+1 repeats character i
    return bool((same[1:] & same[:-1]).any())


def _separators_as_spaces(text: str) -> str:
    """`text` with every run of separators (spaces included) as one space: each separator
    becomes a space (one `str.replace` per distinct one, found by a scan with no Unicode
    category test), then each run of spaces one space."""
    if text.isascii():  # `bytes.translate` drops the characters that cannot be one, in C
        maybe = set(text.encode().translate(None, _NOT_SEPARATOR_BYTES).decode())
    else:
        maybe = set(_MAYBE_SEPARATOR.findall(text))
    for character in maybe:
        if not character.isalnum():  # `\w` is a letter, a digit or "_" (not in `maybe`)
            text = text.replace(character, " ")
    while "  " in text:
        text = text.replace("  ", " ")
    return text


def _utf16_units(text: str) -> np.ndarray:
    """`text` as UTF-16 units (a lone surrogate, which JSON lets a client send, is one too)."""
    return np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)


def _without_cjk_gaps(text: str) -> str:
    """`text` without the spaces next to a CJK character: `_CJK_GAP.sub("", text)`, on a long
    text by array operations on its UTF-16 units (the regular expression costs 50 µs on 2,000
    characters of Chinese; a space and a CJK character are one unit each)."""
    if len(text) < _ARRAY_GAP_CHARS:
        return _CJK_GAP.sub("", text)
    units = _utf16_units(text)
    cjk = _IS_CJK_UNIT[units]
    near = np.zeros(len(units), dtype=bool)
    near[1:] = cjk[:-1]
    near[:-1] |= cjk[1:]
    gaps = near & (units == ord(" "))
    if not gaps.any():
        return text
    return units[~gaps].tobytes().decode("utf-16-le", "surrogatepass")


# Which of the rare characters a text may hold, as bits: format characters, characters folded
# one for one, and look-alike letters (none of which the other steps make, nor the folding).
_INVISIBLE_KIND, _FOLD_KIND, _HOMOGLYPH_KIND = 1, 2, 4
_ANY_KIND = _INVISIBLE_KIND | _FOLD_KIND | _HOMOGLYPH_KIND
_ARRAY_KINDS_CHARS = 400  # a shorter text is searched for each kind (numpy's cost per call)


@cache
def _kind_of_unit(data_dir: Path = DATA_DIR) -> np.ndarray:
    """By UTF-16 unit, its kinds (every such character is one unit)."""
    kinds = np.zeros(0x10000, dtype=np.uint8)
    for kind, codes in (
        (_INVISIBLE_KIND, list(map(ord, _INVISIBLE.findall("".join(map(chr, range(0x10000))))))),
        (_FOLD_KIND, list(_folds(data_dir))),
        (_HOMOGLYPH_KIND, list(_HOMOGLYPHS)),
    ):
        kinds[codes] |= kind
    return kinds


def _kinds(text: str) -> int:
    """The kinds of rare character `text` may hold (a long text: those it holds, by one array
    lookup instead of a regular expression's scan per kind, 10-20 µs each on 2,000 characters
    of Chinese)."""
    if text.isascii():  # none is ASCII
        return 0
    if len(text) < _ARRAY_KINDS_CHARS:
        return _ANY_KIND
    units = _utf16_units(text)
    return int(np.bitwise_or.reduce(_kind_of_unit()[units]))


def normalise(text: str) -> str:
    """The view of `text` that every crisis pattern is matched against (see module doc)."""
    folded = _nfkc(_whole_characters(text))
    # Format characters are dropped after casefolding: no character casefolds to one, and each
    # casefolds to itself, so the order does not matter (checked for every code point).
    folded = folded.casefold()
    kinds = _kinds(folded)
    if kinds & _INVISIBLE_KIND and _INVISIBLE.search(folded):
        folded = _INVISIBLE.sub("", folded)
    if kinds & _FOLD_KIND and _fold_chars().search(folded):
        # One pass over the few traditional characters found: the same as `str.translate`,
        # which looks every character up in the table (0.4 ms on 2,000 Chinese characters).
        table = _folds()
        folded = _fold_chars().sub(lambda found: table[ord(found.group())], folded)
    if kinds & _HOMOGLYPH_KIND and _HOMOGLYPH.search(folded):
        folded = _MIXED_WORD.sub(lambda found: found.group().translate(_HOMOGLYPHS), folded)
    if any(emoji in folded for emoji in _EMOJI_WORDS):  # `in` is C-level; a regex, 0.1 ms
        folded = _EMOJI_AS_ACT.sub(r"\1 jump ", folded)
        folded = _ZH_EMOJI_AS_ACT.sub(lambda found: _ZH_ACTS[found.group(1)], folded)
        folded = _EMOJI.sub(_emoji_word, folded)
    for parts, character in _SPLIT_CHARACTERS.items():
        if parts in folded:
            folded = folded.replace(parts, character)
    if "'" in folded or "’" in folded:
        folded = _APOSTROPHE.sub("", folded)
    if "2" in folded and _TWO_AS_TO_RE2.search(folded):
        folded = _TWO_AS_TO.sub(_two_as_to, folded)
    # Leetspeak, split letters and glued words are all made of latin letters: a message with
    # none (most Chinese ones) skips their three passes.
    if LATIN_LETTER.search(folded):
        if _LEET_WORD_RE2.search(folded):
            folded = _LEET_WORD.sub(lambda m: m.group().translate(_LEET), folded)
        if _SPLIT_LETTERS_RE2.search(folded):
            folded = _SPLIT_LETTERS.sub(_join_split_letters, folded)
        folded = split_glued(folded)
    folded = _clause_ends(folded)
    if _has_triple(folded):
        folded = _REPEATS.sub(r"\1", folded)
    folded = _separators_as_spaces(folded)
    if "_" in folded:
        folded = _UNDERSCORES.sub(" ", folded)
    folded = folded.strip()
    return _without_cjk_gaps(folded) if contains_cjk(folded) else folded
