"""The crisis guard as an ADK plugin: it answers before any agent or model runs."""

from __future__ import annotations

import logging
from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.adk.plugins import BasePlugin
from google.genai import types

from agents.safety.classifier import CLASSIFIER_SIGNAL, CrisisClassifier
from agents.safety.detector import CrisisDetector
from agents.safety.followup import CRISIS_STATE_KEY, crisis_flag
from agents.safety.resources import base_language, crisis_reply, reply_locale

logger = logging.getLogger(__name__)

CRISIS_GUARD_PLUGIN_NAME = "crisis_guard"
# Session state key holding the conversation language ("zh" / "en"); shared with the apps.
LOCALE_STATE_KEY = "locale"


def _message_text(content: types.Content | None) -> str:
    if content is None or not content.parts:
        return ""
    return " ".join(part.text for part in content.parts if part.text and not part.thought)


class CrisisGuardPlugin(BasePlugin):
    """Ends the run with the fixed crisis reply when the user's message shows crisis risk.

    `before_run_callback` returning Content ends the invocation before any agent runs, so the
    main model is never called and no model output can water down the hotline reply. The
    lexicon decides first; the optional `classifier` (a separate small model call) is asked
    only when the lexicon is silent. The reply event carries the session's crisis flag in its
    state delta (added in `on_event_callback`), so the flag commits with the turn.
    """

    def __init__(
        self,
        detector: CrisisDetector | None = None,
        name: str = CRISIS_GUARD_PLUGIN_NAME,
        *,
        classifier: CrisisClassifier | None = None,
    ) -> None:
        super().__init__(name=name)
        self._detector = detector or CrisisDetector()
        self._classifier = classifier
        self._pending: dict[str, dict[str, Any]] = {}  # invocation id -> state delta

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        text = _message_text(invocation_context.user_content)
        if not text.strip():
            return None
        detection = self._detector.detect(text)
        signals, source = detection.signals, "lexicon"
        if not detection.risky:
            verdict = await self._classifier.classify(text) if self._classifier else None
            if verdict is None or not verdict.risky:
                return None
            signals, source = verdict.signals or (CLASSIFIER_SIGNAL,), "classifier"
        state = invocation_context.session.state
        preferred = state.get(LOCALE_STATE_KEY)
        locale = base_language(preferred) or reply_locale(None, text)
        self._pending[invocation_context.invocation_id] = {
            CRISIS_STATE_KEY: crisis_flag(
                signals=signals, locale=locale, source=source, previous=state.get(CRISIS_STATE_KEY)
            )
        }
        # Signal names only: the message is sensitive and never logged.
        logger.warning(
            "crisis guard fired: signals=%s source=%s session=%s locale=%s",
            ",".join(signals),
            source,
            invocation_context.session.id,
            locale,
        )
        return types.Content(role="model", parts=[types.Part(text=crisis_reply(locale))])

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        delta = self._pending.pop(invocation_context.invocation_id, None)
        if delta is not None:
            event.actions.state_delta.update(delta)
        return None
