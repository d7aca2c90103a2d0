"""The crisis guard as an ADK plugin: it answers before any agent or model runs."""

from __future__ import annotations

import logging

from google.adk.agents.invocation_context import InvocationContext
from google.adk.plugins import BasePlugin
from google.genai import types

from agents.safety.detector import CrisisDetector

logger = logging.getLogger(__name__)

CRISIS_GUARD_PLUGIN_NAME = "crisis_guard"
# Session state key holding the conversation language ("zh" / "en"); shared with the apps.
LOCALE_STATE_KEY = "locale"


def _message_text(content: types.Content | None) -> str:
    if content is None or not content.parts:
        return ""
    return " ".join(part.text for part in content.parts if part.text and not part.thought)


class CrisisGuardPlugin(BasePlugin):
    """Ends the run with the fixed crisis reply when the user's message matches a crisis phrase.

    `before_run_callback` returning Content ends the invocation before any agent runs, so the
    model is never called and no model output can water down the hotline reply.
    """

    def __init__(
        self, detector: CrisisDetector | None = None, name: str = CRISIS_GUARD_PLUGIN_NAME
    ) -> None:
        super().__init__(name=name)
        self._detector = detector or CrisisDetector()

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        text = _message_text(invocation_context.user_content)
        matched = self._detector.detect(text)
        if matched is None:
            return None
        locale = self._detector.reply_locale(
            invocation_context.session.state.get(LOCALE_STATE_KEY), text
        )
        # Log the keyword, never the message: it is sensitive and may be long.
        logger.warning(
            "crisis guard matched %r (session %s, locale %s)",
            matched,
            invocation_context.session.id,
            locale,
        )
        return types.Content(role="model", parts=[types.Part(text=self._detector.reply(locale))])
