"""Offline, deterministic models (no network) for local runs, demos and tests."""

from agents.offline import lifecoach_model  # noqa: F401  (registers its planner)
from agents.offline.onemind_model import DEFAULT_MODEL_NAME, OfflineModel

__all__ = ["DEFAULT_MODEL_NAME", "OfflineModel"]
