"""A scripted BaseLlm for tests: each call pops the next step; it counts and records calls."""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Callable
from typing import Any

from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.models.base_llm import LlmCapabilities
from google.genai import types
from pydantic import Field, PrivateAttr

Step = str | types.Part | list[Any] | LlmResponse | Exception | Callable[[LlmRequest], Any]


def call(name: str, **args: Any) -> types.Part:
    return types.Part.from_function_call(name=name, args=args)


class ScriptedLlm(BaseLlm):
    model: str = "scripted"
    script: list[Any] = Field(default_factory=list)
    _requests: list[LlmRequest] = PrivateAttr(default_factory=list)

    @property
    def requests(self) -> list[LlmRequest]:
        return self._requests

    @property
    def capabilities(self) -> LlmCapabilities:  # type: ignore[override]
        return LlmCapabilities(output_schema_and_tools=True)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self._requests.append(llm_request)
        step: Any = self.script.pop(0) if self.script else "ok"
        if callable(step) and not isinstance(step, types.Part):
            step = step(llm_request)
            if inspect.isawaitable(step):
                step = await step
        if isinstance(step, Exception):
            raise step
        if isinstance(step, LlmResponse):
            yield step
            return
        parts = step if isinstance(step, list) else [step]
        parts = [types.Part(text=p) if isinstance(p, str) else p for p in parts]
        texts = [p.text for p in parts if p.text]
        if stream and texts and len(parts) == 1:
            text = texts[0]
            middle = max(1, len(text) // 2)
            for piece in (text[:middle], text[middle:]):
                if piece:
                    yield LlmResponse(
                        content=types.Content(role="model", parts=[types.Part(text=piece)]),
                        partial=True,
                    )
        yield LlmResponse(content=types.Content(role="model", parts=parts), turn_complete=True)
