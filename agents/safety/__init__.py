"""Deterministic safety checks shared by every app."""

from agents.safety.detector import CrisisDetector, load_lexicon, tokenize
from agents.safety.plugin import CRISIS_GUARD_PLUGIN_NAME, LOCALE_STATE_KEY, CrisisGuardPlugin

__all__ = [
    "CRISIS_GUARD_PLUGIN_NAME",
    "LOCALE_STATE_KEY",
    "CrisisDetector",
    "CrisisGuardPlugin",
    "load_lexicon",
    "tokenize",
]
