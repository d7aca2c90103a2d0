"""One turn's meter: model tokens (from the model's reported `usage_metadata`) and tool calls.

It sees the turn's events as they stream; crossing the day's token quota or the per-turn cap on
tool calls ends the turn (an `error` part, nothing saved, as the model-call cap does). The tokens
the model reported are charged when the turn commits, and also when it fails: the model did the
work, so a failed turn costs its tokens (its admission stays counted too).
"""

from __future__ import annotations

from google.adk.events import Event

from confidant.errors import TooManyRequestsError, TurnLimitError
from confidant.quota.gate import Admission, QuotaGate


def event_tokens(event: Event) -> int:
    """Tokens one model response reported; streamed chunks (`partial`) repeat the final's."""
    usage = event.usage_metadata
    if event.partial or usage is None:
        return 0
    if usage.total_token_count is not None:
        return usage.total_token_count
    return (usage.prompt_token_count or 0) + (usage.candidates_token_count or 0)


class TurnMeter:
    def __init__(
        self,
        gate: QuotaGate | None,
        admission: Admission | None,
        *,
        max_tool_calls: int,
    ) -> None:
        self._gate = gate
        self._admission = admission
        self.max_tool_calls = max_tool_calls
        self.tokens = 0
        self.tool_calls = 0
        self._charged = False

    def observe(self, event: Event) -> None:
        """Count the event; raises when the turn crosses a cap (before its tool calls run)."""
        self.tokens += event_tokens(event)
        if not event.partial:
            self.tool_calls += len(event.get_function_calls())
        if self.tool_calls > self.max_tool_calls:
            raise TurnLimitError(
                f"the reply needed more than {self.max_tool_calls} tool calls, "
                "the limit for one reply"
            )
        admission = self._admission
        left = admission.tokens_left if admission is not None else None
        if left is not None and self.tokens > left and self._gate is not None:
            assert admission is not None
            raise self._gate.exceeded(
                admission.tier, admission.limits, admission.usage, by_tokens=True
            )

    async def charge(self) -> None:
        """Charge the reported tokens once (the commit and a failure path may both call it)."""
        if self._charged or self._gate is None or self._admission is None:
            return
        self._charged = True
        await self._gate.charge(self._admission, self.tokens)


def limit_data(error: TooManyRequestsError) -> dict[str, object]:
    """The `data-error` part before a mid-stream refusal's `error` part: the AI SDK's error
    part holds only text, so the code and the wait travel beside it."""
    return {"code": error.code, "message": error.message, "retryAfter": error.retry_after_s}
