"""One crisis detector per process: with `CONFIDANT_CRISIS_MODEL` on, a message only the n-gram
model catches is a crisis everywhere a user could notice the difference - past the daily quota
and the rate limit it still gets the helplines (never a 429), and the relationship router sends it
to the guard without asking any model, exactly as the guard answers it."""

from __future__ import annotations

import httpx
import pytest

from agents.safety import CrisisDetector
from agents.safety.ngram import load_model
from tests.support.recording_model import RecordingLlm
from tests.support.scripted_model import ScriptedLlm
from tests.support.sse import of_type, parse_frames, streamed_text

ALICE = {"X-User-Id": "alice"}
# Risky phrasings written for this test, each checked by running the detector: in words no
# lexicon line has, so only the learned layer catches them. Several, so that a lexicon that
# learns one of them, or a retrained model, still leaves one to test with.
CANDIDATES = (
    "i've decided i'm not going to be around for much longer",
    "honestly i'm just ready for the end now",
    "soon it won't matter anymore, i'll be gone",
    "it would be easier if i simply stopped existing",
    "this will be my last week, i've decided",
)
HOTLINE = "988"


@pytest.fixture(scope="module")
def only_the_model_catches() -> str:
    """The first candidate the lexicon alone misses and the lexicon with the model catches."""
    lexicon, with_model = CrisisDetector(), CrisisDetector(model=load_model())
    for message in CANDIDATES:
        if not lexicon.detect(message).risky and with_model.detect(message).risky:
            return message
    pytest.fail("no candidate is caught by the n-gram model alone any more; write new ones")


async def _chat(client: httpx.AsyncClient, message: str, **body: object) -> httpx.Response:
    return await client.post("/v1/chat", json={"message": message, **body}, headers=ALICE)


def _parts(response: httpx.Response) -> list[dict]:
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done
    return parts


def _assert_the_crisis_reply(parts: list[dict]) -> None:
    """The guard's fixed reply, for what the n-gram layer caught: the part, then the helplines."""
    [crisis] = of_type(parts, "data-crisis")
    assert crisis["data"]["signals"] == ["ngram_model"]
    assert HOTLINE in streamed_text(parts)


async def test_past_the_quota_the_model_caught_message_gets_the_helplines(
    make_client, only_the_model_catches: str
) -> None:
    model = ScriptedLlm(script=["ok"])
    client, _ = make_client(model=model, crisis_model=True, tiers={"free": {"turns_per_day": 1}})
    assert (await _chat(client, "hello", session_id="s1")).status_code == 200
    assert (await _chat(client, "hello again", session_id="s1")).status_code == 429

    parts = _parts(await _chat(client, only_the_model_catches, session_id="s1"))
    _assert_the_crisis_reply(parts)
    assert len(model.requests) == 1  # only the first turn reached the model
    usage = (await client.get("/v1/me/usage", headers=ALICE)).json()
    assert usage["used"]["turns_per_day"] == 1  # admitted past the quota, not counted


async def test_with_the_setting_off_the_same_message_is_refused_past_the_quota(
    make_client, only_the_model_catches: str
) -> None:
    client, _ = make_client(crisis_model=False, tiers={"free": {"turns_per_day": 0}})
    refused = await _chat(client, only_the_model_catches)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "quota_exceeded"


async def test_past_the_rate_limit_the_model_caught_message_gets_the_helplines(
    make_client, only_the_model_catches: str
) -> None:
    client, _ = make_client(crisis_model=True, rate_limit_user_per_min=1, rate_limit_user_burst=1)
    assert (await client.get("/v1/sessions", headers=ALICE)).status_code == 200
    assert (await _chat(client, "hello")).status_code == 429
    _assert_the_crisis_reply(_parts(await _chat(client, only_the_model_catches)))


async def test_the_relationship_router_leaves_the_message_to_the_guard(
    make_client, only_the_model_catches: str
) -> None:
    counting = RecordingLlm()
    client, _ = make_client(model=counting, crisis_model=True)
    parts = _parts(await _chat(client, only_the_model_catches, app="relationship"))
    assert of_type(parts, "data-route")[0]["data"] == {"mode": "runner", "reason": "crisis guard"}
    _assert_the_crisis_reply(parts)
    assert counting.instructions == []  # neither the router nor any agent saw the message


async def test_with_the_setting_off_the_router_decides_the_route(
    make_client, only_the_model_catches: str
) -> None:
    counting = RecordingLlm()
    client, _ = make_client(model=counting, crisis_model=False)
    parts = _parts(await _chat(client, only_the_model_catches, app="relationship"))
    assert of_type(parts, "data-route")[0]["data"]["reason"] != "crisis guard"
    assert of_type(parts, "data-crisis") == []
    assert counting.instructions  # the router (and a specialist) were asked
