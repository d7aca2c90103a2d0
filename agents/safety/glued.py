"""Words glued together to dodge a filter ("iwanttodie", "imgonnakillmyself") split apart again.

Only a run of at least `MIN_RUN` latin letters that holds a risk stem ("kill", "die", "life"…)
is looked at, and it is split only when the whole run reads as words of the English lexicon's
own vocabulary (plus a few function words), in as few words as possible, and that takes at
least three words ("want to die" can be glued to "i": two-word glues such as "killmyself" are
matched by the lexicon already, where a space is optional). So ordinary long words
("lifestyle", "deadline", "studied") stay as they are, and a run that does not split is left
alone: the lexicon, not this step, decides what is risky.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import re2

DATA_DIR = Path(__file__).parent / "data"
LEXICON_FILE = "crisis_lexicon_en.txt"

MIN_RUN = 8
MAX_RUN = 60  # a glued sentence is short; longer runs (keys, hashes) are not words
MIN_WORDS = 3
# Slang that the lexicon matches only as a whole word: a run holding one splits into two words
# already ("wannakms").
_WHOLE_WORD_SLANG = frozenset({"kms", "kys"})
# Words too short or too common to be taken from the lexicon's patterns (which hold regex
# fragments such as "ap" of "dis+ap+e+ar"): only these words of one or two letters are known.
FUNCTION_WORDS = frozenset(
    "i a im id me my to so go do be it in on at of or up no an is am if we he us ok rn fr "
    "the and just now not dont cant wont all this that with for you your they them lol tbh "
    "gonna wanna gotta tryna finna want need really honestly literally kinda lowkey actually "
    "already still even more any anymore about going tonight today ive ill its "
    # pinyin typed without spaces: "woxiangsi"
    "wo ni si zi qu bu le xiang".split()
)
# A run is looked at only when it holds one of these (kept short: each is a risk word's stem, or
# a word that no ordinary English word holds, such as "wantto").
_RISK_STEM = re.compile(
    r"kill|die|dying|dead|suicid|unaliv|kms|kys|myself|life|live|alive|exist|disappear|"
    r"vanish|jump|hang|overdos|wrist|bleed|wake|anymore|wantto|wanna|gonna|xiang|zisha"
)
# A run of letters as the normalised text has it: casefolded, apostrophes dropped.
RUN = re.compile(rf"(?<![a-z0-9])[a-z]{{{MIN_RUN},{MAX_RUN}}}(?![a-z0-9])")
# A whole word of a pattern: not a suffix group ("bleed(ing)?") nor a fragment ("dis+ap+e+ar").
_LEXICON_WORD = re.compile(r"(?<![\\a-z?])(?<![a-z]\()[a-z]{3,}(?![a-z]*[+*{\\])")
_CLASS = re.compile(r"\[[^\]]*\]")
_NOT_WORDS = frozenset({"ing"})  # a suffix alternative: "remov(e|ing)"


@cache
def vocabulary(data_dir: Path = DATA_DIR) -> frozenset[str]:
    """The words of the English lexicon's patterns (three letters or more, outside character
    classes and escapes) and the function words."""
    words: set[str] = set(FUNCTION_WORDS)
    for raw in (data_dir / LEXICON_FILE).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "[")):
            continue
        if "=" in line.split("|", 1)[0] and line[0].isupper():  # a [define] line: NAME = regex
            line = line.split("=", 1)[1]
        # A character class is a letter of a word ("fantasi[sz]ing"): no word either side of it.
        words.update(_LEXICON_WORD.findall(_CLASS.sub(r"\\", line)))
    return frozenset(words - _NOT_WORDS)


@cache
def _longest(data_dir: Path = DATA_DIR) -> int:
    return max(map(len, vocabulary(data_dir)))


def split_run(run: str, data_dir: Path = DATA_DIR) -> str:
    """`run` as words when it is a glued phrase holding a risk stem, else `run` itself."""
    if _RISK_STEM.search(run) is None:
        return run
    words = vocabulary(data_dir)
    if run in words:
        return run
    longest = _longest(data_dir)
    size = len(run)
    # fewest[i]: the fewest words that spell run[:i], and where the last of them starts.
    fewest: list[tuple[int, int] | None] = [None] * (size + 1)
    fewest[0] = (0, 0)
    for end in range(1, size + 1):
        best: tuple[int, int] | None = None
        for start in range(max(0, end - longest), end):
            before = fewest[start]
            if before is not None and run[start:end] in words:
                # Fewest words; among equals, the longest last word (deterministic).
                if best is None or before[0] + 1 < best[0]:
                    best = (before[0] + 1, start)
        fewest[end] = best
    if fewest[size] is None:
        return run
    pieces: list[str] = []
    end = size
    while end:
        start = fewest[end][1]  # type: ignore[index]
        pieces.append(run[start:end])
        end = start
    pieces.reverse()
    if len(pieces) < MIN_WORDS and not _WHOLE_WORD_SLANG.intersection(pieces):
        return run
    return " ".join(pieces)


# The runs of letters that hold a risk stem, found in one RE2 pass (a leftmost match of this
# is a whole run: `[a-z]*` reaches back to the run's first letter and on to its last). It runs
# over UTF-8 bytes: a run is ASCII, so it is spliced as bytes, and the binding's mapping of a
# str match's offsets back to characters (which costs more than the search) is never needed.
# A stem in a run of MIN_RUN letters or more: some b letters before it and a after it, with
# b + a = MIN_RUN - len(stem). Asking for that keeps short words ("killing", "life") out of
# the pass.
def _stem_in_run(stem: str) -> str:
    others = max(0, MIN_RUN - len(stem))
    return "|".join(
        f"[a-z]{{{before}}}{stem}[a-z]{{{others - before}}}" for before in range(others + 1)
    )


_STEM_IN_RUN = "|".join(map(_stem_in_run, _RISK_STEM.pattern.split("|")))
_STEM_RUN_RE2 = re2.compile(rf"[a-z]*(?:{_STEM_IN_RUN})[a-z]*".encode())
_DIGITS = frozenset(b"0123456789")


def split_glued(text: str, data_dir: Path = DATA_DIR) -> str:
    """`text` with every glued phrase (see module doc) split into words: the same as
    `RUN.sub(split_run)`, looking only at the few runs that hold a risk stem."""
    encoded = text.encode()
    pieces: list[bytes] = []
    done = 0
    for found in _STEM_RUN_RE2.finditer(encoded):
        start, end = found.span()
        if not MIN_RUN <= end - start <= MAX_RUN:
            continue
        if (start and encoded[start - 1] in _DIGITS) or (
            end < len(encoded) and encoded[end] in _DIGITS
        ):
            continue
        run = found.group().decode()
        words = split_run(run, data_dir)
        if words != run:
            pieces += [encoded[done:start], words.encode()]
            done = end
    if not pieces:
        return text
    pieces.append(encoded[done:])
    return b"".join(pieces).decode()
