"""The n-gram layer in a long message (a journal entry): a risky sentence is scored on its own,
not only summed with an ordinary neighbour; a sentence the lexicon held back (a negation) does
not hide a risky one elsewhere; and the veto weighs what the lexicon fired on, not the riskiest
sentence of the whole entry. The models here are written by hand, so each rule is tested apart
from what training learned (`bench/crisis_long_messages.py` measures the shipped one)."""

from __future__ import annotations

from dataclasses import replace

from agents.safety import CrisisDetector
from agents.safety.detector import MODEL, MODEL_BENIGN
from agents.safety.ngram import NgramModel, Weights

# "zorblax" stands for a risky sentence the lexicon does not know: alone it fires (-3 + 4).
RISKY_WORD = "zorblax"
ORDINARY_WORD = "meeting"  # an ordinary sentence that reads as clearly safe


def _model(**weights: float) -> NgramModel:
    return NgramModel(
        Weights.of(weights), biases={"en": -3.0, "zh": -3.0}, vetoes={"en": 0.3, "zh": 0.3}
    )


def test_a_risky_sentence_between_two_ordinary_ones_fires_on_its_own() -> None:
    model = _model(**{RISKY_WORD: 4.0, ORDINARY_WORD: -2.0})
    detector = CrisisDetector(model=model)
    assert detector.detect(f"{RISKY_WORD} tonight").risky
    entry = (
        "The meeting ran late again. Zorblax tonight. The meeting notes are done. "
        "Another meeting on Monday. The meeting room was cold."
    )
    detection = detector.detect(entry)
    assert detection.risky and detection.signals == (MODEL,)
    assert detection.matches[0].text.strip() == "zorblax tonight"


def test_a_sentence_the_lexicon_held_back_does_not_hide_a_risky_one_elsewhere() -> None:
    # the negated sentence is what the model finds riskiest, but the lexicon explained it
    model = _model(**{RISKY_WORD: 4.0, "kill": 9.0})
    detector = CrisisDetector(model=model)
    negated = "I am not going to kill myself."
    alone = detector.detect(negated)
    assert not alone.risky and alone.held_back
    entry = f"{negated} Lunch was fine. Zorblax tonight. We went home. It rained."
    detection = detector.detect(entry)
    assert detection.risky and detection.signals == (MODEL,)
    assert "zorblax" in detection.matches[0].text


def test_the_veto_weighs_what_the_lexicon_fired_on_not_the_riskiest_sentence() -> None:
    # "soup" reads as somewhat risky (0.38): over the veto level (0.3), under the threshold
    model = _model(soup=2.5)
    detector = CrisisDetector(model=model)
    look_alike = "i want to kill myself"
    alone = detector.detect(look_alike)
    assert not alone.risky and {reason for _, reason in alone.held_back} == {MODEL_BENIGN}
    entry = f"The bus was late. {look_alike}. The soup was good. We went home. It rained."
    detection = detector.detect(entry)
    assert not detection.risky
    assert {reason for _, reason in detection.held_back} == {MODEL_BENIGN}


def test_after_a_veto_a_risky_sentence_elsewhere_still_fires() -> None:
    model = _model(**{RISKY_WORD: 4.0})
    detector = CrisisDetector(model=model)
    entry = (
        "The bus was late. i want to kill myself. The soup was good. Zorblax tonight. It rained."
    )
    detection = detector.detect(entry)
    assert detection.risky and detection.signals == (MODEL,)
    assert "zorblax" in detection.matches[0].text


def test_a_purpose_sentences_away_does_not_explain_a_plan_in_a_long_message() -> None:
    # the lexicon alone: "for cooking" explains a knife, not pills saved up four sentences later
    entry = (
        "I bought a new knife for cooking at the market this morning. The weather was lovely "
        "and we walked along the river. My sister called about the holidays and we argued about "
        "who hosts this year. Work has been slow but fine. I finished the book my friend lent "
        "me and started another one. The cat knocked over a plant again. I have been saving my "
        "pills for weeks and tonight I will take all of them. Dinner was pasta. I watered the "
        "garden. Tomorrow I need to call the bank about my card."
    )
    detection = CrisisDetector().detect(entry)
    assert detection.risky
    assert "take all of them" in " ".join(match.text for match in detection.matches)
    # a purpose next to its means still explains it
    assert not CrisisDetector().detect("I need a rope for camping this weekend, any tips?").risky


def test_a_long_message_has_its_own_threshold() -> None:
    # the riskiest of a long message's windows fires at its own, higher threshold
    model = _model(**{RISKY_WORD: 4.0})  # a "zorblax" clause alone: 0.73
    strict = replace(model, window_thresholds={"en": 0.8, "zh": 0.8})
    entry = "The bus was late. Zorblax tonight. The soup was good. We went home. It rained."
    assert CrisisDetector(model=model).detect(entry).risky
    assert not CrisisDetector(model=strict).detect(entry).risky
    assert CrisisDetector(model=strict).detect("Zorblax tonight.").risky  # short: 0.5


_JOURNAL = (
    "The weather was lovely and my sister called about the holidays, we argued about who hosts "
    "this year. I finished the book my friend lent me and started another one. The cat knocked "
    "over a plant again. Dinner was pasta and I watered the garden after. Work has been slow "
    "but fine, and the new manager seems decent."
)


def test_a_means_pairs_with_an_intent_only_nearby_in_a_long_message() -> None:
    # the lexicon alone: a bridge crossed in the morning and "no more overtime" three sentences
    # later are no plan; the same bridge with an intent in the next sentence is
    bridge = "We crossed the old bridge into town this morning."
    between = "Dinner was pasta. I finished my book."
    far = f"{_JOURNAL} {bridge} {between} My boss said no more overtime next month."
    assert len(far) > 400
    assert not CrisisDetector().detect(far).risky
    near = f"{_JOURNAL} {bridge} Tonight I'm going to jump. {_JOURNAL}"
    detection = CrisisDetector().detect(near)
    assert detection.risky and "means_plan" in detection.signals
    # a short message is one thought: a means and an intent anywhere in it pair
    assert CrisisDetector().detect("The old bridge again. No more, I am done.").risky


def test_a_purpose_explains_a_means_only_in_its_own_or_the_next_clause_in_a_long_message() -> None:
    # the lexicon alone: an errand two clauses on is a neighbouring sentence's, not the pills'
    pills = "Tonight I will take all of my pills."
    far = f"{_JOURNAL} {pills} Work was slow and quiet today. The interview is at ten."
    assert len(far) > 400
    assert CrisisDetector().detect(far).risky
    near = f"{_JOURNAL} I finally bought a rope. It is for the camping trip next week."
    detection = CrisisDetector().detect(near)
    assert not detection.risky
    assert [reason for _, reason in detection.held_back] == ["purpose"]
    assert CrisisDetector().detect(f"{_JOURNAL} I finally bought a rope.").risky
