"""Crisis safety shared by every app: detector, optional classifier, guard plugin, follow-up."""

from agents.safety.classifier import ClassifierVerdict, CrisisClassifier
from agents.safety.detector import CrisisDetector, Detection, Match
from agents.safety.followup import CRISIS_STATE_KEY, check_in_section, crisis_part
from agents.safety.lexicon import load_lexicons
from agents.safety.plugin import CRISIS_GUARD_PLUGIN_NAME, LOCALE_STATE_KEY, CrisisGuardPlugin
from agents.safety.resources import crisis_payload, crisis_reply, normalise_locale

__all__ = [
    "CRISIS_GUARD_PLUGIN_NAME",
    "CRISIS_STATE_KEY",
    "LOCALE_STATE_KEY",
    "ClassifierVerdict",
    "CrisisClassifier",
    "CrisisDetector",
    "CrisisGuardPlugin",
    "Detection",
    "Match",
    "check_in_section",
    "crisis_part",
    "crisis_payload",
    "crisis_reply",
    "load_lexicons",
    "normalise_locale",
]
