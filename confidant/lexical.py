"""Lexical features of zh and en text, for the offline retrieval and embedding.

No tokenizer model is needed: alphabetic text gives word tokens (stop words dropped, lightly
stemmed) and in-word character trigrams; Chinese gives character unigrams (minus the most
common function characters) and bigrams, which work without word segmentation.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

_CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN_RE = re.compile(f"[{_CJK_CLASS}]+")
_WORD_RE = re.compile(rf"[^\W\d_{_CJK_CLASS}]+")
# Words and characters too common to say anything about a passage's topic.
_EN_STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from has have i if in into is it its me my of"
    " on or so that the their them there they this to too was we what when with you your"
    " am not just really very about like get feel want".split()
)
_ZH_STOPCHARS = frozenset("的了是我你他她它在和也就都而很有着吗呢吧啊把被这那一个不要会")
_TRIGRAM_WEIGHT = 0.5  # trigrams catch inflections ("procrastinating"), words carry meaning
_SUFFIXES = ("ionism", "ating", "ation", "ism", "ing", "ion", "ed", "es", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def lexical_features(text: str) -> Counter[str]:
    """Feature counts of `text`: the space both documents and queries are embedded in."""
    normalised = unicodedata.normalize("NFKC", text).casefold()
    features: Counter[str] = Counter()
    for word in _WORD_RE.findall(normalised):
        if len(word) < 2 or word in _EN_STOPWORDS:
            continue
        features[f"w:{_stem(word)}"] += 1
        padded = f"^{word}$"
        for start in range(len(padded) - 2):
            features[f"t:{padded[start : start + 3]}"] += 1
    for run in _CJK_RUN_RE.findall(normalised):
        for char in run:
            if char not in _ZH_STOPCHARS:
                features[f"u:{char}"] += 1
        for start in range(len(run) - 1):
            features[f"b:{run[start : start + 2]}"] += 1
    return features


def feature_weight(feature: str) -> float:
    """Trigrams count half: they catch inflections, whole words carry the meaning."""
    return _TRIGRAM_WEIGHT if feature.startswith("t:") else 1.0
