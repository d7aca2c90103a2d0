"""The crisis check a refusal runs first: a crisis message is never refused by a quota or a limit.

Only the deterministic lexicon detector (offline, about a millisecond) runs here: it is cheap
enough to run on every message that would otherwise be refused. The optional model classifier
is not asked (it is a model call, which a quota exists to bound); the guard plugin still runs
both on every admitted turn.
"""

from __future__ import annotations

import functools
from typing import Any

from agents.safety import CrisisDetector


@functools.cache
def _detector() -> CrisisDetector:
    return CrisisDetector()  # loads the lexicons once per process


def is_crisis(text: str) -> bool:
    return bool(text.strip()) and _detector().detect(text).risky


def body_message(body: Any) -> str:
    """The user's message in a chat body (ours or useChat's), or "" (never raises)."""
    if not isinstance(body, dict):
        return ""
    message = body.get("message")
    if isinstance(message, str):
        return message
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    for item in reversed(messages):
        if isinstance(item, dict) and item.get("role") == "user":
            parts = item.get("parts")
            if isinstance(parts, list):
                return " ".join(
                    p["text"]
                    for p in parts
                    if isinstance(p, dict) and isinstance(p.get("text"), str)
                )
            content = item.get("content")
            return content if isinstance(content, str) else ""
    return ""
