"""The n-gram layer's veto: when the lexicon fires on a wish or a word alone and the model reads
every window of the message as clearly benign, the match is held back, with the reason; a
means, a method, a plan, a farewell or an act of self-harm is never held back by the model."""

from __future__ import annotations

import pytest

from agents.safety import CrisisDetector
from agents.safety.detector import MODEL_BENIGN
from agents.safety.ngram import NgramModel, load_model

# A model that reads everything as benign (no weights, a very low bias), vetoing below 0.5.
CALM = NgramModel(weights={}, biases={"en": -10.0, "zh": -10.0}, vetoes={"en": 0.5, "zh": 0.5})


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
def test_means_self_harm_and_farewells_are_never_held_back_by_the_model(message: str) -> None:
    lexicon = CrisisDetector().detect(message)
    assert lexicon.risky
    assert CrisisDetector(model=CALM).detect(message).signals == lexicon.signals


def test_without_veto_levels_the_model_holds_nothing_back() -> None:
    silent = NgramModel(weights={}, biases={"en": -10.0, "zh": -10.0})
    assert CrisisDetector(model=silent).detect("I want to kill myself").risky


def test_the_shipped_model_holds_back_recovery_told_in_the_past_but_not_a_relapse() -> None:
    recovered = (
        "Three years ago I wanted to kill myself. This spring I finished my nursing degree "
        "and I'm so proud of where I am."
    )
    relapse = "I wanted to kill myself last year and honestly I still do"
    shipped = CrisisDetector(model=load_model())
    assert CrisisDetector().detect(recovered).risky  # the lexicon alone answers with helplines
    assert not shipped.detect(recovered).risky
    assert shipped.detect(relapse).risky
    assert shipped.detect("I want to kill myself").risky
