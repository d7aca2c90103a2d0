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
from confidant.chat.requests import last_user_text
from confidant.errors import BadRequestError


def is_crisis(detector: CrisisDetector, text: str) -> bool:
    return bool(text.strip()) and detector.detect(text).risky


def body_message(body: Any) -> str:
    """The user's message in a chat body (ours or useChat's), or "" (never raises): exactly the
    text the chat would answer, so no other part of a body can buy a refused request's way in."""
    if not isinstance(body, dict):
        return ""
    if "message" in body:
        message = body["message"]
        return message if isinstance(message, str) else ""
    try:
        return last_user_text(body.get("messages"))
    except BadRequestError:
        return ""
