"""The optional second layer: a small, separate model call that judges crisis risk.

It runs only when the lexicon is silent, as one non-streaming call through ADK's
`BaseLlm.generate_content_async` with a fixed safety prompt and a JSON verdict, under a strict
timeout. Any failure (timeout, HTTP error, unreadable answer) returns None: the lexicon's
verdict stands, and the failure is logged (never the message).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from contextlib import aclosing
from dataclasses import dataclass

from google.adk.models import BaseLlm, LlmRequest
from google.genai import types

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 1.5
CLASSIFIER_SIGNAL = "classifier"
CLASSIFIER_PROMPT = """\
You are a safety classifier for a coaching chat app. Decide whether the user's message shows
that the user themself may be at risk of suicide or self-harm now: intent, wishes to die or not
wake up, feeling a burden, plans, means, farewells, self-harm, or slang for any of these, in any
language. Talk about fiction, coursework, news, prevention, other people, idioms and hyperbole
("this exam is killing me", "笑死") is not risk. When unsure, answer risk.
Answer with JSON only, no other text:
{"risk": true|false, "signals": [zero or more of "explicit_intent", "passive_ideation",
"burden", "plan", "means", "farewell", "self_harm", "slang"]}"""
_MAX_OUTPUT_TOKENS = 64


@dataclass(frozen=True)
class ClassifierVerdict:
    risky: bool
    signals: tuple[str, ...]


class CrisisClassifier:
    """Asks `model` for a crisis verdict on one message; None when it cannot tell in time."""

    def __init__(self, model: BaseLlm, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self._model = model
        self._timeout_s = timeout_s

    def _request(self, text: str) -> LlmRequest:
        return LlmRequest(
            model=self._model.model,
            contents=[types.Content(role="user", parts=[types.Part(text=text)])],
            config=types.GenerateContentConfig(
                system_instruction=CLASSIFIER_PROMPT,
                response_mime_type="application/json",
                temperature=0.0,
                max_output_tokens=_MAX_OUTPUT_TOKENS,
            ),
        )

    async def _answer(self, request: LlmRequest) -> str:
        texts: list[str] = []
        responses = self._model.generate_content_async(request, stream=False)
        async with aclosing(responses):
            async for response in responses:
                if response.error_code:
                    raise RuntimeError(f"model error {response.error_code}")
                if response.content and response.content.parts:
                    texts += [p.text for p in response.content.parts if p.text and not p.thought]
        return "".join(texts)

    async def classify(self, text: str) -> ClassifierVerdict | None:
        started = time.monotonic()
        try:
            async with asyncio.timeout(self._timeout_s):
                answer = await self._answer(self._request(text))
        except TimeoutError:
            logger.warning("crisis classifier timed out after %.2fs", self._timeout_s)
            return None
        except Exception as error:  # any failure leaves the lexicon's verdict standing
            logger.warning("crisis classifier failed: %s", type(error).__name__)
            return None
        verdict = parse_verdict(answer)
        if verdict is None:
            logger.warning("crisis classifier answered no readable verdict")
            return None
        logger.info(
            "crisis classifier: risk=%s signals=%s (%.0f ms)",
            verdict.risky,
            ",".join(verdict.signals),
            (time.monotonic() - started) * 1000,
        )
        return verdict


def parse_verdict(answer: str) -> ClassifierVerdict | None:
    """`{"risk": bool, "signals": [...]}` (a fenced block is tolerated); None otherwise."""
    body = answer.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("risk"), bool):
        return None
    raw_signals = data.get("signals") if isinstance(data.get("signals"), list) else []
    signals = tuple(str(s) for s in raw_signals if isinstance(s, str))[:8]
    return ClassifierVerdict(risky=data["risk"], signals=signals)
