"""The offline model, recording what each call was told (its system instruction and input size).

Records plain strings, never the request: requests hold tools, and tools hold services.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass

from google.adk.models import BaseLlm, LlmCapabilities, LlmRequest, LlmResponse
from pydantic import Field

from agents.offline import OfflineModel
from agents.offline.scripted import instruction_text


@dataclass(frozen=True)
class RecordedCall:
    instruction: str
    input_chars: int  # instruction + contents: what the call sends


class RecordingLlm(BaseLlm):
    model: str = "offline-recording"
    inner: BaseLlm = Field(default_factory=OfflineModel)
    calls: list[RecordedCall] = Field(default_factory=list)

    @property
    def capabilities(self) -> LlmCapabilities:
        return LlmCapabilities(output_schema_and_tools=True)

    @property
    def instructions(self) -> list[str]:
        return [call.instruction for call in self.calls]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        system = instruction_text(llm_request.config)
        chars = len(system) + sum(
            len(p.text or "") for c in llm_request.contents for p in c.parts or []
        )
        self.calls.append(RecordedCall(system, chars))
        async for response in self.inner.generate_content_async(llm_request, stream=stream):
            yield response
