"""The n-gram layer's veto: when the model reads every window of a message as clearly benign,
what the lexicon fired on is held back, with the reason. A wish or a word alone is held back
below the model's veto level; a means, a method, a plan, a farewell or an act of self-harm only
below its far lower strict level, and never by a model that has none."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents.safety import CrisisDetector
from agents.safety.detector import MODEL_BENIGN, MODEL_MAY_HOLD_BACK
from agents.safety.ngram import NgramModel, Weights, load_model

# A model that reads everything as benign (no weights, a very low bias), vetoing below 0.5.
CALM = NgramModel(
    weights=Weights.of({}), biases={"en": -10.0, "zh": -10.0}, vetoes={"en": 0.5, "zh": 0.5}
)


@pytest.mark.parametrize(
    "message", ["I want to kill myself", "我想死", "i wish i could disappear forever"]
)
def test_a_wish_the_model_reads_as_benign_is_held_back_with_the_reason(message: str) -> None:
    assert CrisisDetector().detect(message).risky
    detection = CrisisDetector(model=CALM).detect(message)
    assert not detection.risky
    assert detection.held_back and {reason for _, reason in detection.held_back} == {MODEL_BENIGN}


@pytest.mark.parametrize(
    "message",
    [
        "I have saved up 60 pills and I'm taking them tonight",  # means and a time
        "I cut my arms again last night",  # self-harm
        "I wrote the note and gave my dog to my sister, goodbye",  # farewell
        "我把安眠药攒够了，今晚就吃",
        "我又割腕了",
    ],
)
def test_means_self_harm_and_farewells_are_not_held_back_at_the_wishes_level(
    message: str,
) -> None:
    lexicon = CrisisDetector().detect(message)
    assert lexicon.risky
    assert CrisisDetector(model=CALM).detect(message).signals == lexicon.signals
    strict = replace(CALM, strict_vetoes={"en": 0.5, "zh": 0.5})
    detection = CrisisDetector(model=strict).detect(message)
    assert not detection.risky
    assert {reason for _, reason in detection.held_back} == {MODEL_BENIGN}


def test_without_veto_levels_the_model_holds_nothing_back() -> None:
    silent = NgramModel(weights=Weights.of({}), biases={"en": -10.0, "zh": -10.0})
    assert CrisisDetector(model=silent).detect("I want to kill myself").risky


def test_the_shipped_model_holds_back_recovery_told_in_the_past_but_not_a_relapse() -> None:
    # no time word the lexicon's past frame knows ("three years ago" it holds back itself)
    recovered = (
        "After I wanted to kill myself I got help. This spring I finished my nursing degree "
        "and I'm so proud of where I am."
    )
    relapse = "I wanted to kill myself last year and honestly I still do"
    shipped = CrisisDetector(model=load_model())
    assert CrisisDetector().detect(recovered).risky  # the lexicon alone answers with helplines
    assert not shipped.detect(recovered).risky
    assert shipped.detect(relapse).risky
    assert shipped.detect("I want to kill myself").risky


def test_the_shipped_model_holds_back_past_self_harm_and_a_night_survived_not_a_relapse() -> None:
    shipped = CrisisDetector(model=load_model())
    for recovered, relapse in (
        (
            "The scars on my arms are from when I used to self-harm at school. Today I wore a "
            "t-shirt to work and didn't even think about them.",
            "I haven't cut myself in two years, but tonight I cut again and I want to keep going.",
        ),
        (
            "那天我在天台站了一夜，是陌生人把我劝下来的，现在每年都会想起他",
            "那天我在天台站了一夜，今晚我又上来了，这次不会下去了",
        ),
    ):
        lexicon = CrisisDetector().detect(recovered)
        assert lexicon.risky and not MODEL_MAY_HOLD_BACK.issuperset(lexicon.signals)
        assert not shipped.detect(recovered).risky
        assert shipped.detect(relapse).risky
