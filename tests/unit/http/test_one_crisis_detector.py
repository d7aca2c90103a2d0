"""One crisis detector per process: with `CONFIDANT_CRISIS_MODEL` on, a message only the n-gram
model catches is a crisis everywhere a user could notice the difference - past the daily quota
and the rate limit it still gets the helplines (never a 429), and the relationship router sends it
to the guard without asking any model, exactly as the guard answers it."""

from __future__ import annotations

import httpx

from agents.safety import CrisisDetector
from agents.safety.ngram import load_model
from tests.support.recording_model import RecordingLlm
from tests.support.scripted_model import ScriptedLlm
from tests.support.sse import of_type, parse_frames, streamed_text

ALICE = {"X-User-Id": "alice"}
# Found by running the detector on phrasings written for this test: risky, in words no lexicon
# line has, so only the learned layer catches it.
ONLY_THE_MODEL_CATCHES = "i've decided i'm not going to be around for much longer"
HOTLINE = "988"


async def _chat(client: httpx.AsyncClient, message: str, **body: object) -> httpx.Response:
    return await client.post("/v1/chat", json={"message": message, **body}, headers=ALICE)


def _parts(response: httpx.Response) -> list[dict]:
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done
    return parts


def _is_the_crisis_reply(parts: list[dict]) -> bool:
    crisis = of_type(parts, "data-crisis")
    return (
        bool(crisis)
        and crisis[0]["data"]["signals"] == ["ngram_model"]
        and (HOTLINE in streamed_text(parts))
    )


def test_the_message_is_caught_by_the_model_alone() -> None:
    assert not CrisisDetector().detect(ONLY_THE_MODEL_CATCHES).risky
    assert CrisisDetector(model=load_model()).detect(ONLY_THE_MODEL_CATCHES).risky


async def test_past_the_quota_the_model_caught_message_gets_the_helplines(make_client) -> None:
    model = ScriptedLlm(script=["ok"])
    client, _ = make_client(model=model, crisis_model=True, tiers={"free": {"turns_per_day": 1}})
    assert (await _chat(client, "hello", session_id="s1")).status_code == 200
    assert (await _chat(client, "hello again", session_id="s1")).status_code == 429

    parts = _parts(await _chat(client, ONLY_THE_MODEL_CATCHES, session_id="s1"))
    assert _is_the_crisis_reply(parts)
    assert len(model.requests) == 1  # only the first turn reached the model
    usage = (await client.get("/v1/me/usage", headers=ALICE)).json()
    assert usage["used"]["turns_per_day"] == 1  # admitted past the quota, not counted


async def test_with_the_setting_off_the_same_message_is_refused_past_the_quota(
    make_client,
) -> None:
    client, _ = make_client(crisis_model=False, tiers={"free": {"turns_per_day": 0}})
    refused = await _chat(client, ONLY_THE_MODEL_CATCHES)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "quota_exceeded"


async def test_past_the_rate_limit_the_model_caught_message_gets_the_helplines(
    make_client,
) -> None:
    client, _ = make_client(crisis_model=True, rate_limit_user_per_min=1, rate_limit_user_burst=1)
    assert (await client.get("/v1/sessions", headers=ALICE)).status_code == 200
    assert (await _chat(client, "hello")).status_code == 429
    assert _is_the_crisis_reply(_parts(await _chat(client, ONLY_THE_MODEL_CATCHES)))


async def test_the_relationship_router_leaves_the_message_to_the_guard(make_client) -> None:
    counting = RecordingLlm()
    client, _ = make_client(model=counting, crisis_model=True)
    parts = _parts(await _chat(client, ONLY_THE_MODEL_CATCHES, app="relationship"))
    assert of_type(parts, "data-route")[0]["data"] == {"mode": "runner", "reason": "crisis guard"}
    assert _is_the_crisis_reply(parts)
    assert counting.instructions == []  # neither the router nor any agent saw the message


async def test_with_the_setting_off_the_router_decides_the_route(make_client) -> None:
    counting = RecordingLlm()
    client, _ = make_client(model=counting, crisis_model=False)
    parts = _parts(await _chat(client, ONLY_THE_MODEL_CATCHES, app="relationship"))
    assert of_type(parts, "data-route")[0]["data"]["reason"] != "crisis guard"
    assert of_type(parts, "data-crisis") == []
    assert counting.instructions  # the router (and a specialist) were asked
