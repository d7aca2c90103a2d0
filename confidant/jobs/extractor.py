"""One non-streaming model call whose answer is a JSON object validated by a pydantic model."""

from __future__ import annotations

import json
import re
from typing import TypeVar

from google.adk.models import BaseLlm, LlmRequest
from google.genai import types
from pydantic import BaseModel, ValidationError

from confidant.jobs.errors import TransientJobError
from confidant.jobs.prompts import system_instruction

Answer = TypeVar("Answer", bound=BaseModel)

_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")


class InvalidExtractionError(TransientJobError):
    """The model's answer was not the JSON asked for (a retry may well succeed)."""


class Extractor:
    """Asks the configured model (ADK's BaseLlm) for one JSON answer per call."""

    def __init__(self, model: BaseLlm) -> None:
        self._model = model

    @property
    def model(self) -> BaseLlm:
        """The model the extractors call (app job kinds with prompts of their own use it too)."""
        return self._model

    async def extract(
        self, task: str, instruction: str, prompt: str, answer: type[Answer]
    ) -> Answer:
        request = LlmRequest(
            model=self._model.model,
            contents=[types.Content(role="user", parts=[types.Part(text=prompt)])],
            config=types.GenerateContentConfig(
                system_instruction=system_instruction(task, instruction),
                response_mime_type="application/json",
                temperature=0.0,
            ),
        )
        text = ""
        async for response in self._model.generate_content_async(request, stream=False):
            if response.error_code:
                raise TransientJobError(f"the model failed: {response.error_code}")
            parts = response.content.parts if response.content and response.content.parts else []
            chunk = "".join(p.text or "" for p in parts if not p.thought)
            if chunk:
                text = chunk  # non-streaming: the last response carries the whole answer
        return parse_answer(text, answer)


def parse_answer(text: str, answer: type[Answer]) -> Answer:
    cleaned = _FENCE.sub("", text.strip())
    try:
        return answer.model_validate(json.loads(cleaned))
    except (ValueError, ValidationError) as exc:
        raise InvalidExtractionError(
            f"the model's {answer.__name__} answer is invalid: {str(exc)[:200]}"
        ) from exc
