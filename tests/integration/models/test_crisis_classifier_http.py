"""The crisis guard's model classifier over the Gemini wire format (fake server): verdicts,
timeout and 5xx, alone and through the chat endpoint."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from agents.safety import CRISIS_STATE_KEY, CrisisClassifier
from agents.safety.classifier import CLASSIFIER_PROMPT
from confidant.bootstrap import build_runtime
from confidant.models import RetryingLlm, build_model
from confidant.sessions.records import SessionKey
from confidant.settings import Settings
from tests.support.fake_gemini import FakeGemini, Reply, error
from tests.support.sse import of_type, parse_frames, streamed_text
from tests.unit.conftest import asgi_app

# The lexicon lets this through; the n-gram layer (on by default) catches it, so the tests of
# the classifier as the layer after the lexicon turn the n-gram layer off.
LEXICON_SILENT = "I keep thinking everyone I love would have an easier life if I took a long walk"


def gemini_settings(base_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "model": "gemini",
        "GOOGLE_API_KEY": "fake-gemini-key",
        "gemini_base_url": base_url,
        "retry_delays": [0.01],
        "model_timeout_s": 10.0,
    } | overrides
    return Settings(**values)


def classifier_for(gemini: FakeGemini, timeout_s: float = 1.5) -> CrisisClassifier:
    model = build_model(gemini_settings(gemini.base_url))
    assert isinstance(model, RetryingLlm)
    return CrisisClassifier(model.inner, timeout_s=timeout_s)


def verdict(risk: bool, *signals: str) -> str:
    return json.dumps({"risk": risk, "signals": list(signals)})


async def test_a_risk_verdict_is_one_non_streaming_call_with_the_fixed_prompt(
    gemini: FakeGemini,
) -> None:
    gemini.enqueue(verdict(True, "burden", "passive_ideation"))
    result = await classifier_for(gemini).classify(LEXICON_SILENT)
    assert result is not None and result.risky
    assert result.signals == ("burden", "passive_ideation")
    [request] = _turn_requests(gemini)
    assert request.method == "generateContent"  # not streamed
    assert request.system_instruction == CLASSIFIER_PROMPT
    assert request.body["generationConfig"]["responseMimeType"] == "application/json"
    assert request.last_text == LEXICON_SILENT


async def test_a_safe_verdict(gemini: FakeGemini) -> None:
    gemini.enqueue("```json\n" + verdict(False) + "\n```")
    result = await classifier_for(gemini).classify("how do I stop procrastinating?")
    assert result is not None and not result.risky


@pytest.mark.parametrize(
    ("step", "logged"),
    [
        (Reply(text=verdict(True), delay_s=1.0), "timed out"),
        (error(503), "failed"),
        (error(500), "failed"),
        ("I think this person is fine", "no readable verdict"),
    ],
)
async def test_a_failure_or_timeout_gives_no_verdict_and_is_logged(
    gemini: FakeGemini, caplog: pytest.LogCaptureFixture, step: Any, logged: str
) -> None:
    gemini.enqueue(step)
    with caplog.at_level(logging.WARNING, logger="agents.safety.classifier"):
        result = await classifier_for(gemini, timeout_s=0.3).classify(LEXICON_SILENT)
    assert result is None
    assert logged in caplog.text
    assert LEXICON_SILENT not in caplog.text  # the message is never logged


@pytest.fixture
async def chat(gemini: FakeGemini, tmp_path) -> AsyncIterator[Any]:  # type: ignore[no-untyped-def]
    runtimes = []

    def factory(**overrides: Any) -> tuple[httpx.AsyncClient, Any]:
        settings = gemini_settings(
            gemini.base_url, sqlite_path=str(tmp_path / "confidant.db"), **overrides
        )
        runtime = build_runtime(settings)
        runtimes.append(runtime)
        transport = httpx.ASGITransport(app=asgi_app(runtime))
        return httpx.AsyncClient(transport=transport, base_url="http://confidant.test"), runtime

    yield factory
    for runtime in runtimes:
        await runtime.close()


async def _post(client: httpx.AsyncClient, message: str, session_id: str) -> list[dict]:
    response = await client.post(
        "/v1/chat",
        json={"message": message, "session_id": session_id},
        headers={"X-User-Id": "alice"},
    )
    parts, done = parse_frames(response.text)
    assert done
    return parts


async def test_the_classifier_catches_what_the_lexicon_misses_and_the_agent_is_never_called(
    chat: Any, gemini: FakeGemini
) -> None:
    client, runtime = chat(crisis_classifier=True, crisis_model=False)
    gemini.enqueue(verdict(True, "burden"))
    parts = await _post(client, LEXICON_SILENT, "k1")
    assert [r.method for r in _turn_requests(gemini)] == ["generateContent"]  # classifier only
    [crisis] = of_type(parts, "data-crisis")
    assert crisis["data"]["signals"] == ["burden"] and crisis["data"]["locale"] == "en"
    assert "988" in streamed_text(parts)
    stored = await runtime.store.load(SessionKey("alice", "onemind", "k1"))
    assert stored.record.state[CRISIS_STATE_KEY]["source"] == "classifier"


@pytest.mark.parametrize("classifier_step", [verdict(False), error(503)])
async def test_a_safe_verdict_or_a_failed_classifier_lets_the_coach_answer(
    chat: Any, gemini: FakeGemini, classifier_step: Any
) -> None:
    client, _ = chat(crisis_classifier=True, crisis_classifier_timeout_s=1.0)
    gemini.enqueue(classifier_step, "It sounds like part of you feels stuck.")
    parts = await _post(client, "I keep putting off my thesis", "k2")
    assert [r.method for r in _turn_requests(gemini)] == [
        "generateContent",
        "streamGenerateContent",
    ]
    assert of_type(parts, "data-crisis") == []
    assert "stuck" in streamed_text(parts)


def _turn_requests(gemini: FakeGemini) -> list[Any]:
    """The turn's own model calls: the post-turn jobs' extractors call the model after it."""
    return [r for r in gemini.requests if "CONFIDANT_EXTRACTOR" not in r.system_instruction]


async def test_the_lexicon_answers_first_and_the_classifier_is_off_by_default(
    chat: Any, gemini: FakeGemini
) -> None:
    client, _ = chat(crisis_classifier=True)
    parts = await _post(client, "I want to kill myself", "k3")
    assert _turn_requests(gemini) == []  # the lexicon fired: no classifier call, no agent call
    assert "explicit_intent" in of_type(parts, "data-crisis")[0]["data"]["signals"]

    client, _ = chat(crisis_model=False)
    gemini.enqueue("Tell me more.")
    await _post(client, LEXICON_SILENT, "k4")
    assert [r.method for r in _turn_requests(gemini)] == ["streamGenerateContent"]
