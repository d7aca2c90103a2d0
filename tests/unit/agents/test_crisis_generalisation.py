"""How the crisis detector does on phrasings it was never tuned on, and its n-gram layer.

The held-out sets (`tests/data/crisis_heldout.jsonl`, then `crisis_heldout2.jsonl`,
`crisis_heldout3.jsonl`, `crisis_heldout6.jsonl`, `crisis_heldout7.jsonl`,
`crisis_heldout8.jsonl`, `crisis_heldout9.jsonl`, `crisis_heldout10.jsonl` and
`crisis_heldout11.jsonl`, each written later by other authors, and their `_ordinary` sets,
ordinary coaching messages by the authors of sets 6-11) were written
and committed (frozen) before the detector or the model was changed for them, and nothing is
tuned on them (their misses are never printed): the floors below are what the detectors
measured there, so a change that loses recall or adds false alarms on unseen phrasings fails.
Set 4 was held out in session 8 (measured at its start and end, docs/safety.md) and has been
trained on since session 9 (`crisis_former_heldout4*.jsonl`); set 5 was held out in session 9
and has been trained on since session 10 (`crisis_former_heldout5*.jsonl`).
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from agents.safety import CrisisDetector
from agents.safety.detector import MODEL
from agents.safety.ngram import load_model
from agents.safety.normalise import normalise
from agents.safety.train_ngram import ORDINARY_SETS, SELECTION_SETS, TRAINING_SETS, unseen_cases

DATA = Path(__file__).resolve().parents[2] / "data"
HELD_OUT_SETS = (
    "crisis_heldout.jsonl",
    "crisis_heldout2.jsonl",
    "crisis_heldout3.jsonl",
    "crisis_heldout6.jsonl",
    "crisis_heldout7.jsonl",
    "crisis_heldout8.jsonl",
    "crisis_heldout9.jsonl",
    "crisis_heldout10.jsonl",
    "crisis_heldout11.jsonl",
)
HELD_OUT_ORDINARY = (
    "crisis_heldout6_ordinary.jsonl",
    "crisis_heldout7_ordinary.jsonl",
    "crisis_heldout8_ordinary.jsonl",
    "crisis_heldout9_ordinary.jsonl",
    "crisis_heldout10_ordinary.jsonl",
    "crisis_heldout11_ordinary.jsonl",
)
# What the lexicon was written and tuned on.
TUNED_ON = ("crisis_dev_set.jsonl", "crisis_tuning.jsonl", "crisis_selection.jsonl")
# Measured on the held-out sets (docs/safety.md): (risky caught, risky, benign fired, benign),
# for the lexicon alone and with the n-gram model.
FLOORS = {
    # Sets 1-3: session 13's end (session 12's model; the lexicon's past time frame and a
    # purpose reaching one clause in a long message). Session 12's end: set 3 en 137 caught, zh
    # 7 false alarms; its lexicon alone: set 2 en 10, zh 11 false alarms, set 3 en 93 caught, 9
    # false alarms, zh 15 false alarms. Session 16's recovery story: set 3 zh lexicon alone 13
    # -> 12 false alarms. Session 17 (a cover, an event as a time, reports, story times):
    # caught set 1 zh +2 on both layers, set 2 zh +1, set 3 en +2, zh +1; set 2 zh false
    # alarms lexicon alone -2, with the model -1.
    ("crisis_heldout.jsonl", "en"): {"lexicon": (83, 107, 3, 105), "model": (102, 107, 1, 105)},
    ("crisis_heldout.jsonl", "zh"): {"lexicon": (80, 103, 7, 101), "model": (99, 103, 0, 101)},
    # Session 7's lexicon caught 7 more per language here for one more false alarm each.
    # Session 19's English past times (an age at an act told as done, "it's been a decade since",
    # "i was 14 when"): en lexicon alone -1 false alarm.
    ("crisis_heldout2.jsonl", "en"): {"lexicon": (94, 128, 6, 128), "model": (122, 128, 3, 128)},
    # Session 18's quotations of others ("我老婆说“你们没有我会更好”"): set 2 zh lexicon alone
    # 7 -> 6 false alarms.
    ("crisis_heldout2.jsonl", "zh"): {"lexicon": (100, 128, 6, 128), "model": (120, 128, 2, 128)},
    # Session 19's English past times (an age at an act told as done, "it's been a decade since",
    # "i was 14 when"): en lexicon alone -1 false alarm.
    ("crisis_heldout3.jsonl", "en"): {"lexicon": (96, 150, 7, 150), "model": (140, 150, 2, 150)},
    # Session 19's "every day" in a past time's clause (history, not a recurrence): set 3 zh
    # lexicon alone 12 -> 11 false alarms.
    ("crisis_heldout3.jsonl", "zh"): {"lexicon": (88, 150, 11, 150), "model": (136, 150, 6, 150)},
    # Set 6 (session 9) was measured on session 8's detector (en 127, 9; zh 116, 10), on the
    # model before train15 (en 132, 5; zh 132, 4), on session 9's shipped one (en 133, 4; zh
    # 131, 4), on session 10's first retrain (en 142, 5; zh 134, 3), on its shipped one (en
    # 141, 4; zh 131, 1), on session 11's (en 140, 3; zh 138, 4), on session 12's (en 146, 5;
    # zh 138, 4), on session 13's rejected retrain (en 145, 3; zh 138, 3) and on its end:
    # these rows. Session 14's lexicon (a school year is over, a scar still there is no
    # recurrence, 我想过 no wish now): zh lexicon alone 19 -> 17 false alarms. Session 16's
    # recovery story: en lexicon alone 16 -> 15. Session 17: zh caught +1 both layers.
    ("crisis_heldout6.jsonl", "en"): {"lexicon": (88, 150, 15, 150), "model": (146, 150, 4, 150)},
    # Session 18's quotations of others: zh lexicon alone 17 -> 16 false alarms.
    ("crisis_heldout6.jsonl", "zh"): {"lexicon": (84, 150, 16, 150), "model": (139, 150, 4, 150)},
    # Set 7 (session 10) was measured at that session's start on session 9's detector (en 128,
    # 15; zh 120, 12), on its first retrain (en 136, 10; zh 126, 10), on its shipped one (en
    # 134, 10; zh 127, 9), on session 11's (en 136, 9; zh 134, 7), on session 12's (en 141, 10;
    # zh 133, 8), on session 13's rejected retrain (en 137, 9; zh 136, 8) and on its end: these
    # rows. Session 11's lexicon: "shed" alone is no self-harm (one en catch is now the
    # model's), the waterside alone no means (zh -1). Session 15's burden: zh lexicon 74 -> 75.
    # Session 17's hoarding (a pharmacy or a doctor no purpose of means gathered over time):
    # zh caught +1 and false alarms +1 on both layers (a past hoarding the story does not read);
    # its reflexive ("她想割自己" is hers): false alarms -1 on both layers again; its story
    # times ("去年", "那时候" in a recovery story): -1 more on both layers. Session 19's "every
    # day" in a past time's clause: zh lexicon alone 20 -> 19 false alarms.
    # Session 19's English past times (an age at an act told as done, "it's been a decade since",
    # "i was 14 when"): en lexicon alone -1 false alarm.
    ("crisis_heldout7.jsonl", "en"): {"lexicon": (92, 150, 21, 150), "model": (141, 150, 9, 150)},
    ("crisis_heldout7.jsonl", "zh"): {"lexicon": (76, 150, 19, 150), "model": (134, 150, 6, 150)},
    # Set 8 (session 11) was measured at that session's start on session 10's shipped detector
    # (en 134, 4; zh 128, 9), at its end on the model retrained as decided before (en 130, 7;
    # zh 135, 6), on session 12's (en 136, 9; zh 137, 7), on session 13's rejected retrain (en
    # 130, 9; zh 134, 5) and on its end: these rows. Session 17: zh caught +1 both layers, and
    # with the hoarding lexicon alone +2 more, with the model +1.
    ("crisis_heldout8.jsonl", "en"): {"lexicon": (85, 150, 19, 150), "model": (136, 150, 9, 150)},
    # Session 18's quotations of others: zh false alarms -1 on both layers.
    ("crisis_heldout8.jsonl", "zh"): {"lexicon": (81, 150, 15, 150), "model": (139, 150, 5, 150)},
    # Set 9 (session 12) was measured at that session's start on session 11's shipped detector
    # (en 132, 5; zh 137, 9; its lexicon alone en 80, 19; zh 70, 25), at its end (en 137, 6; zh
    # 134, 8; lexicon alone en 80, 18; zh 70, 25), on session 13's rejected retrain (en 136, 5;
    # zh 128, 8) and on its end: these rows. Session 15's farewells and burden: lexicon alone
    # en 80 -> 81, zh 70 -> 72; with the model en 137 -> 138, zh 134 -> 135. Session 16's
    # recovery story: false alarms lexicon alone en 15 -> 13, zh 20 -> 19; with the model en
    # 5 -> 4, zh 8 -> 7. Session 17's reports: zh false alarms -1 both layers; its hoarding:
    # zh lexicon alone caught +1.
    # Session 18's reporting words in English ("texted me", "said tonight") and "my older
    # brother": en lexicon alone 13 -> 12 false alarms.
    ("crisis_heldout9.jsonl", "en"): {"lexicon": (81, 150, 12, 150), "model": (138, 150, 4, 150)},
    # Session 18's quotations of others: zh lexicon alone 18 -> 17 false alarms.
    # Session 19's named others ("我老婆", "我闺蜜": 我 is part of the name; "我发现我老婆在…"):
    # zh lexicon alone -1 false alarm.
    ("crisis_heldout9.jsonl", "zh"): {"lexicon": (73, 150, 16, 150), "model": (135, 150, 6, 150)},
    # Set 10 (session 13) was measured at that session's start on session 12's shipped detector
    # (en 139, 8; zh 140, 4; its lexicon alone en 94, 27; zh 76, 18), on the retrain it did not
    # ship (en 134, 10; zh 137, 3) and at its end: these rows. Session 15: en lexicon 94 -> 95.
    # Session 16's recovery story: false alarms lexicon alone en 26 -> 25, zh 16 -> 15; with
    # the model zh 3 -> 2. Session 17's hoarding: zh caught lexicon alone +2, with the model +1.
    # Session 18's means of a named other ("my sister is hoarding her pills"): en false alarms
    # -1 on both layers; its reporting words in English: lexicon alone -1 more.
    ("crisis_heldout10.jsonl", "en"): {"lexicon": (95, 150, 23, 150), "model": (139, 150, 7, 150)},
    # Session 19's named others ("我老婆", "我闺蜜": 我 is part of the name; "我发现我老婆在…"):
    # zh lexicon alone -1 false alarm.
    ("crisis_heldout10.jsonl", "zh"): {"lexicon": (78, 150, 14, 150), "model": (141, 150, 2, 150)},
    # Set 11 (session 14) was measured at that session's start on session 13's shipped detector
    # (session 12's model): these rows. Session 17: caught lexicon alone en +1, zh +3; with
    # the model zh +3. Then its reflexive ("她想割自己" is hers): lexicon alone zh -1 caught
    # (the model still catches it). Its story times: zh false alarms lexicon alone -1.
    # Session 19's English past times (an age at an act told as done, "it's been a decade since",
    # "i was 14 when"): en lexicon alone -1 false alarm.
    ("crisis_heldout11.jsonl", "en"): {"lexicon": (93, 150, 19, 150), "model": (141, 150, 10, 150)},
    # Session 18's quotations of others: zh lexicon alone 22 -> 20 false alarms.
    ("crisis_heldout11.jsonl", "zh"): {"lexicon": (76, 150, 20, 150), "model": (137, 150, 7, 150)},
}
# Held-out set 2 was written without seeing the development set, and a few texts came out
# word for word the same: those few are not unseen by the lexicon.
SHARED_WITH_TUNED = {
    "crisis_heldout.jsonl": 0,
    "crisis_heldout2.jsonl": 4,
    "crisis_heldout3.jsonl": 0,
    "crisis_heldout6.jsonl": 0,
    "crisis_heldout7.jsonl": 1,  # one spaced-letter phrase, the same as a development case
    "crisis_heldout8.jsonl": 0,
    "crisis_heldout9.jsonl": 0,
    "crisis_heldout10.jsonl": 0,
    # Three stock phrases word for word as in the development set ("everyone would be better off
    # without me", a spaced-letter and a leetspeak one).
    "crisis_heldout11.jsonl": 3,
}
# The ordinary messages of sets 6-11 (100 per language each, many of them low-mood): what
# the default detector fired on, as measured for the floors above.
ORDINARY_CEILING = {
    ("crisis_heldout6_ordinary.jsonl", "en"): (0, 100),
    ("crisis_heldout6_ordinary.jsonl", "zh"): (0, 100),
    ("crisis_heldout7_ordinary.jsonl", "en"): (0, 100),
    ("crisis_heldout7_ordinary.jsonl", "zh"): (0, 100),  # session 9's detector: 1
    ("crisis_heldout8_ordinary.jsonl", "en"): (0, 100),
    ("crisis_heldout8_ordinary.jsonl", "zh"): (0, 100),  # sessions 10 and 11: 1
    ("crisis_heldout9_ordinary.jsonl", "en"): (1, 100),  # session 11's detector: 1 too
    ("crisis_heldout9_ordinary.jsonl", "zh"): (1, 100),  # session 11's detector: 1 too
    ("crisis_heldout10_ordinary.jsonl", "en"): (0, 100),  # session 12's detector: 0 too
    ("crisis_heldout10_ordinary.jsonl", "zh"): (1, 100),  # session 12's detector: 1 too
    ("crisis_heldout11_ordinary.jsonl", "en"): (0, 100),
    ("crisis_heldout11_ordinary.jsonl", "zh"): (0, 100),
}


def _cases(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@cache
def _held_out(name: str) -> list[dict]:
    return _cases(DATA / name)


@pytest.fixture(scope="module")
def detector() -> CrisisDetector:
    return CrisisDetector(model=load_model())


@pytest.fixture(scope="module")
def lexicon_only() -> CrisisDetector:
    return CrisisDetector()


@pytest.mark.parametrize("name", HELD_OUT_SETS)
def test_the_held_out_sets_are_large_balanced_and_disjoint_from_what_was_tuned_on(
    name: str,
) -> None:
    cases = _held_out(name)
    assert len(cases) >= 400
    assert len({case["text"] for case in cases}) == len(cases)
    by_lang = Counter((case["lang"], case["risky"]) for case in cases)
    for lang in ("en", "zh"):
        assert 0.4 <= by_lang[lang, True] / (by_lang[lang, True] + by_lang[lang, False]) <= 0.6
    tuned = {case["text"] for other in TUNED_ON for case in _cases(DATA / other)}
    assert len(tuned.intersection(case["text"] for case in cases)) <= SHARED_WITH_TUNED[name]


@pytest.mark.parametrize("name", [*HELD_OUT_SETS, *HELD_OUT_ORDINARY])
def test_the_model_is_trained_and_thresholded_on_no_held_out_case(name: str) -> None:
    # The training sets hold a few phrasings that a held-out set also has (once normalised):
    # training drops every case whose view is a held-out case's.
    views = {normalise(case["text"]) for case in _held_out(name)}
    for sets in (TRAINING_SETS, SELECTION_SETS, ORDINARY_SETS):
        cases, _ = unseen_cases(DATA, sets)
        assert views.isdisjoint(normalise(case["text"]) for case in cases)


@pytest.mark.parametrize(("name", "lang"), list(FLOORS))
@pytest.mark.parametrize("layer", ["lexicon", "model"])
def test_held_out_recall_and_false_alarms_stay_at_the_measured_floor(
    detector: CrisisDetector,
    lexicon_only: CrisisDetector,
    name: str,
    lang: str,
    layer: str,
) -> None:
    caught_floor, risky_total, fired_ceiling, benign_total = FLOORS[name, lang][layer]
    chosen = detector if layer == "model" else lexicon_only
    risky = [c["text"] for c in _held_out(name) if c["lang"] == lang and c["risky"]]
    benign = [c["text"] for c in _held_out(name) if c["lang"] == lang and not c["risky"]]
    assert (len(risky), len(benign)) == (risky_total, benign_total)  # the set is frozen
    caught = sum(chosen.detect(text).risky for text in risky)
    fired = sum(chosen.detect(text).risky for text in benign)
    assert caught >= caught_floor
    assert fired <= fired_ceiling


@pytest.mark.parametrize(("name", "lang"), list(ORDINARY_CEILING))
def test_unseen_ordinary_messages_stay_below_the_measured_ceiling(
    detector: CrisisDetector, name: str, lang: str
) -> None:
    ceiling, total = ORDINARY_CEILING[name, lang]
    texts = [c["text"] for c in _held_out(name) if c["lang"] == lang]
    assert len(texts) == total and all(not c["risky"] for c in _held_out(name))
    assert sum(detector.detect(text).risky for text in texts) <= ceiling


@pytest.mark.parametrize(("name", "lang"), list(FLOORS))
def test_the_ngram_layer_catches_more_unseen_phrasings_than_the_lexicon_alone(
    detector: CrisisDetector,
    lexicon_only: CrisisDetector,
    name: str,
    lang: str,
) -> None:
    risky = [c["text"] for c in _held_out(name) if c["lang"] == lang and c["risky"]]
    by_lexicon = sum(lexicon_only.detect(text).risky for text in risky)
    with_model = sum(detector.detect(text).risky for text in risky)
    assert with_model > by_lexicon


@pytest.mark.parametrize(
    "message",
    [
        "honestly i am so ready for all of it to be over, for good this time",
        "已经准备好离开大家了",
    ],
)
def test_the_model_fires_where_the_lexicon_is_silent_and_names_its_window(
    detector: CrisisDetector, message: str
) -> None:
    assert not CrisisDetector().detect(message).risky
    detection = detector.detect(message)
    assert detection.risky
    assert detection.signals == (MODEL,)
    (match,) = detection.matches
    assert detection.view[match.start : match.end] == match.text


def test_the_model_does_not_overrule_what_the_lexicon_held_back(detector: CrisisDetector) -> None:
    detection = detector.detect("I'm not suicidal, just tired")
    assert not detection.risky
    assert {why for _, why in detection.held_back} == {"negated"}


def test_a_risky_sentence_buried_in_a_long_message_fires_with_its_own_span(
    detector: CrisisDetector,
) -> None:
    ordinary = "We talked about the project plan and the budget for next quarter. " * 12
    buried = "Honestly I've decided to kill myself after the holidays. "
    message = ordinary + buried + ordinary
    detection = detector.detect(message)
    assert detection.risky and "explicit_intent" in detection.signals
    assert detection.view == normalise(message)
    for match in detection.matches:
        assert detection.view[match.start : match.end] == match.text
        assert "kill myself" in match.text


def test_a_long_ordinary_message_does_not_fire(detector: CrisisDetector) -> None:
    message = "今天开会讨论了下个季度的预算和项目安排，大家都很认真。" * 30
    detection = detector.detect(message)
    assert not detection.risky and not detection.held_back


def test_the_model_is_shipped_loaded_once_and_deterministic() -> None:
    model = load_model()
    assert model is not None and model is load_model()
    assert model.threshold == 0.5  # each language's bias puts its chosen threshold there
    assert set(model.biases) == {"en", "zh"}
    view = normalise("感觉自己撑到头了，想走了")
    assert model.riskiest(view) == model.riskiest(view)
