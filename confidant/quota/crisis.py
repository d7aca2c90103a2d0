"""The crisis check a refusal runs first: a crisis message is never refused by a quota or a limit.

It asks the process's one crisis detector (the composition root builds it from the settings and
hands the same one to the guard plugin, the quota gate, the rate limits and the relationship
router), so a message the guard would answer as a crisis is never refused instead. The detector
is offline and cheap (the lexicon, and the n-gram layer when `CONFIDANT_CRISIS_MODEL` is on):
cheap enough to run on every message that would otherwise be refused. The optional model
classifier is not asked (it is a model call, which a quota exists to bound); the guard plugin
still runs it on every admitted turn.
"""

from __future__ import annotations

from typing import Any

from agents.safety import CrisisDetector


def is_crisis(detector: CrisisDetector, text: str) -> bool:
    return bool(text.strip()) and detector.detect(text).risky


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
