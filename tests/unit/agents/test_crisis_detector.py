"""Crisis keyword matching: normalisation, variants and false positives."""

from __future__ import annotations

import pytest

from agents.safety import CrisisDetector, load_lexicon, tokenize
from agents.safety.detector import normalise_locale


@pytest.fixture(scope="module")
def detector() -> CrisisDetector:
    return CrisisDetector()


@pytest.mark.parametrize(
    "message",
    [
        "I want to kill myself",
        "K i l l  myself",
        "ｋｉｌｌ ｍｙｓｅｌｆ",  # full-width
        "KILL-MY-SELF!!!",
        "kill\u200bmyself",  # zero-width space
        "k\u200bi\u200bl\u200bl my\u00a0self",
        "I've been thinking about suicide",
        "I feel suicidal tonight",
        "honestly kms",
        "I just want to unalive",
        "I want to end it all.",
        "I don't want to live anymore",
        "I'd be better off dead",
        "我想自杀",
        "自 杀",
        "自\u200b杀",
        "我不想活了",
        "真的想死",
        "我想自殺",  # traditional
        "有輕生的念頭",  # traditional
        "想要轻生",
        "我活不下去了",
        "想要割腕",
        "我想自杀，但是想死你了",  # a benign phrase elsewhere does not hide a real match
    ],
)
def test_crisis_messages_match(detector: CrisisDetector, message: str) -> None:
    assert detector.detect(message) is not None


@pytest.mark.parametrize(
    "message",
    [
        "",
        "This is a killer app",
        "I could kill for a coffee",
        "That joke killed me",
        "the weekend it all went wrong",
        "I want to spend my life doing art",
        "We drove 50 kms to the lake",
        "skills myself",
        "I'm killing myself laughing",
        "I'm stuck on my thesis and keep procrastinating",
        "我好想你，想死你了",
        "笑死我了",
        "论文写不下去了",
        "我想把这件事做完",
    ],
)
def test_ordinary_messages_do_not_match(detector: CrisisDetector, message: str) -> None:
    assert detector.detect(message) is None


def test_detect_reports_the_listed_keyword(detector: CrisisDetector) -> None:
    assert detector.detect("ｋｉｌｌ ｍｙｓｅｌｆ") == "kill myself"
    assert detector.detect("我 想 自 殺") == "自殺"


def test_tokenize_normalises_width_case_and_invisible_characters() -> None:
    assert tokenize("ＨＥＬＬＯ\u200b Wor-ld 你好") == ["hello", "wor", "ld", "你", "好"]


def test_lexicon_is_loaded_once_per_process() -> None:
    assert load_lexicon() is load_lexicon()
    lexicon = load_lexicon()
    labels = {pattern.label for pattern in lexicon.patterns}
    assert {"自杀", "輕生", "kms", "unalive", "end it all", "想死"} <= labels
    assert "kill" not in labels  # bare verbs would fire on "I could kill for a coffee"


@pytest.mark.parametrize(
    ("locale", "hotline"),
    [("zh", "010-82951332"), ("zh", "400-161-9995"), ("en", "988"), ("en", "local emergency")],
)
def test_reply_contains_the_locale_hotline(
    detector: CrisisDetector, locale: str, hotline: str
) -> None:
    assert hotline in detector.reply(locale)


def test_reply_locale_prefers_state_then_script(detector: CrisisDetector) -> None:
    assert detector.reply_locale("zh", "kill myself") == "zh"
    assert detector.reply_locale("en-US", "我想自杀") == "en"
    assert detector.reply_locale(None, "我想自杀") == "zh"
    assert detector.reply_locale("fr", "kill myself") == "en"
    assert "988" in detector.reply("fr")


def test_normalise_locale() -> None:
    assert normalise_locale("zh-CN") == "zh"
    assert normalise_locale("EN_us") == "en"
    assert normalise_locale("de") is None
    assert normalise_locale(3) is None
