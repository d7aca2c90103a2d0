"""Deterministic crisis-keyword detection (zh + en), independent of any model.

Text and keywords go through the same normalisation: NFKC (full-width to half-width), casefold,
zero-width characters dropped, then split into tokens (runs of letters/digits; every CJK
character is a token of its own). Matching runs on the tokens glued together ("squashed"), so
"K i l l  myself", "kill-my-self" and "自 杀" all match, but a match must start and end on token
boundaries, so "end it all" does not fire inside "weekend it all" and "killer app" never matches
"kill myself".
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
KEYWORD_FILES: tuple[str, ...] = ("crisis_keywords_zh.txt", "crisis_keywords_en.txt")
REPLIES_FILE = "crisis_replies.json"
SUPPORTED_LOCALES: tuple[str, ...] = ("zh", "en")
FALLBACK_LOCALE = "en"

_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# One CJK character, or a run of other letters/digits (underscore excluded: it is punctuation here).
_TOKEN_RE = re.compile(rf"[{_CJK_CLASS}]|[^\W_{_CJK_CLASS}]+")
_CJK_RE = re.compile(rf"[{_CJK_CLASS}]")
_PREFIX_MARK = "*"
_BENIGN_MARK = "!"


def _drop_invisible(text: str) -> str:
    # Zero-width and other format characters (category Cf) are used to dodge filters.
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def tokenize(text: str) -> list[str]:
    """The normalised tokens of `text` (the unit both keywords and messages are compared in)."""
    normalised = _drop_invisible(unicodedata.normalize("NFKC", text)).casefold()
    return _TOKEN_RE.findall(normalised)


def contains_cjk(text: str) -> bool:
    return _CJK_RE.search(text) is not None


@dataclass(frozen=True)
class _Squashed:
    """Tokens glued together, with the offsets where tokens start and end."""

    text: str
    starts: frozenset[int]
    ends: frozenset[int]
    numeric_ends: frozenset[int]  # ends of tokens that are numbers ("50 kms" is a distance)

    @classmethod
    def of(cls, tokens: Sequence[str]) -> _Squashed:
        starts: set[int] = set()
        ends: set[int] = set()
        numeric_ends: set[int] = set()
        offset = 0
        for token in tokens:
            starts.add(offset)
            offset += len(token)
            ends.add(offset)
            if token.isdigit():
                numeric_ends.add(offset)
        return cls("".join(tokens), frozenset(starts), frozenset(ends), frozenset(numeric_ends))


@dataclass(frozen=True)
class _Pattern:
    label: str  # the keyword as written in the data file (what `detect` reports)
    squashed: str
    prefix: bool  # "suicid*": may end inside a token

    def spans(self, target: _Squashed) -> Iterable[tuple[int, int]]:
        position = target.text.find(self.squashed)
        while position != -1:
            end = position + len(self.squashed)
            if (
                position in target.starts
                and (self.prefix or end in target.ends)
                and position not in target.numeric_ends
            ):
                yield position, end
            position = target.text.find(self.squashed, position + 1)


def _parse_pattern(line: str) -> _Pattern | None:
    prefix = line.endswith(_PREFIX_MARK)
    squashed = "".join(tokenize(line.rstrip(_PREFIX_MARK)))
    return _Pattern(label=line, squashed=squashed, prefix=prefix) if squashed else None


@dataclass(frozen=True)
class CrisisLexicon:
    """Keyword patterns, benign exceptions and per-locale replies, as loaded from data files."""

    patterns: tuple[_Pattern, ...]
    benign: tuple[_Pattern, ...]
    replies: dict[str, str]


def _read_lines(path: Path) -> list[str]:
    lines = (raw.strip() for raw in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


@cache
def load_lexicon(data_dir: Path = DATA_DIR) -> CrisisLexicon:
    """Reads the keyword and reply files once per process (the lists never change at runtime)."""
    # Keyed by what is matched, so spelling variants that normalise alike are kept once.
    patterns: dict[tuple[str, bool], _Pattern] = {}
    benign: dict[tuple[str, bool], _Pattern] = {}
    for file_name in KEYWORD_FILES:
        for line in _read_lines(data_dir / file_name):
            is_benign = line.startswith(_BENIGN_MARK)
            pattern = _parse_pattern(line.removeprefix(_BENIGN_MARK).strip())
            if pattern is None:
                continue
            target = benign if is_benign else patterns
            target.setdefault((pattern.squashed, pattern.prefix), pattern)
    raw_replies = json.loads((data_dir / REPLIES_FILE).read_text(encoding="utf-8"))
    replies = {locale: str(entry["reply"]) for locale, entry in raw_replies.items()}
    missing = [locale for locale in SUPPORTED_LOCALES if locale not in replies]
    if missing:
        raise ValueError(f"{REPLIES_FILE} lacks a reply for {missing}")
    return CrisisLexicon(tuple(patterns.values()), tuple(benign.values()), replies)


def normalise_locale(locale: object) -> str | None:
    """Base language of a locale tag (zh-CN -> zh); None when unsupported."""
    if not isinstance(locale, str):
        return None
    base = locale.strip().lower().replace("_", "-").split("-")[0]
    return base if base in SUPPORTED_LOCALES else None


class CrisisDetector:
    """Finds crisis phrases in a message and gives the fixed reply for a locale."""

    def __init__(self, lexicon: CrisisLexicon | None = None) -> None:
        self._lexicon = lexicon or load_lexicon()

    def detect(self, text: str) -> str | None:
        """The first crisis keyword found in `text` (as written in the list), else None."""
        if not text:
            return None
        target = _Squashed.of(tokenize(text))
        if not target.text:
            return None
        benign_spans = [span for pattern in self._lexicon.benign for span in pattern.spans(target)]
        for pattern in self._lexicon.patterns:
            for start, end in pattern.spans(target):
                if not any(lo <= start and end <= hi for lo, hi in benign_spans):
                    return pattern.label
        return None

    def reply(self, locale: str) -> str:
        """The fixed crisis reply (with hotlines) for `locale`; English when unsupported."""
        return self._lexicon.replies[normalise_locale(locale) or FALLBACK_LOCALE]

    def reply_locale(self, preferred: object, text: str) -> str:
        """The session's locale when it is supported, else guessed from the message's script."""
        return normalise_locale(preferred) or ("zh" if contains_cjk(text) else FALLBACK_LOCALE)
