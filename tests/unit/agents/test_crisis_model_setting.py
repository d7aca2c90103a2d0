"""`CONFIDANT_CRISIS_MODEL` (on by default) switches the guard's learned layer, through the real
plugin and the HTTP stream: a message only the n-gram model catches gets the helplines with the
setting on and reaches the coach with it off."""

from __future__ import annotations

import httpx
import pytest

from agents.safety import CrisisDetector
from agents.safety.ngram import load_model
from confidant.settings import Settings
from tests.support.scripted_model import ScriptedLlm
from tests.support.sse import of_type, parse_frames, streamed_text

ALICE = {"X-User-Id": "alice"}
# Risky, in words no lexicon line has: only the learned layer can catch them.
ONLY_THE_MODEL_CATCHES = {
    "en": ("honestly i am so ready for all of it to be over, for good this time", "988"),
    "zh": ("已经准备好离开大家了", "400-161-9995"),
}


async def _stream(client: httpx.AsyncClient, message: str) -> list[dict]:
    response = await client.post("/v1/chat", json={"message": message}, headers=ALICE)
    assert response.status_code == 200
    parts, done = parse_frames(response.text)
    assert done
    return parts


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_messages_are_caught_by_the_model_alone(lang: str) -> None:
    message, _ = ONLY_THE_MODEL_CATCHES[lang]
    assert not CrisisDetector().detect(message).risky
    assert CrisisDetector(model=load_model()).detect(message).risky


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_with_the_setting_on_the_guard_answers_with_the_helplines(
    make_client, lang: str
) -> None:
    message, hotline = ONLY_THE_MODEL_CATCHES[lang]
    model = ScriptedLlm(script=["Tell me more."])
    client, _ = make_client(model=model, crisis_model=True)
    parts = await _stream(client, message)
    assert of_type(parts, "data-crisis")[0]["data"]["signals"] == ["ngram_model"]
    assert hotline in streamed_text(parts)
    assert model.requests == []


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_with_the_setting_off_the_message_reaches_the_coach(make_client, lang: str) -> None:
    message, _ = ONLY_THE_MODEL_CATCHES[lang]
    model = ScriptedLlm(script=["Tell me more."])
    client, _ = make_client(model=model, crisis_model=False)
    parts = await _stream(client, message)
    assert of_type(parts, "data-crisis") == []
    assert "Tell me more." in streamed_text(parts)
    assert len(model.requests) == 1


# Risky wordings written for this test, in no data set: the lexicon has no line for them.
UNSEEN_WORDINGS = {
    "en": (
        "i have written everything down for my sister and sorted the passwords, "
        "after tonight it wont matter",
        "988",
    ),
    "zh": ("我把猫托付给邻居了，信也写好了，该走了", "400-161-9995"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_served_default_catches_a_wording_the_lexicon_misses(
    make_client, monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    monkeypatch.delenv("CONFIDANT_CRISIS_MODEL", raising=False)
    message, hotline = UNSEEN_WORDINGS[lang]
    assert not CrisisDetector().detect(message).risky
    model = ScriptedLlm(script=["Tell me more."])
    client, _ = make_client(model=model)  # the settings' default
    parts = await _stream(client, message)
    assert of_type(parts, "data-crisis")[0]["data"]["signals"] == ["ngram_model"]
    assert hotline in streamed_text(parts)
    assert model.requests == []


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFIDANT_CRISIS_MODEL", "on")
    assert Settings().crisis_model is True
    monkeypatch.setenv("CONFIDANT_CRISIS_MODEL", "off")
    assert Settings().crisis_model is False
    monkeypatch.delenv("CONFIDANT_CRISIS_MODEL")
    assert Settings().crisis_model is True  # on unless a deployment turns it off
