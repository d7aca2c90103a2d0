"""Offline, deterministic models (no network) for local runs, demos and tests.

One model plays every app: an app's instruction names its script (`offline-script: <name>`,
agents/offline/scripts.py); importing an app's script module registers it.
"""

from agents.offline import taskflow_model  # noqa: F401  (registers the taskflow script)
from agents.offline.onemind_model import DEFAULT_MODEL_NAME, OfflineModel

__all__ = ["DEFAULT_MODEL_NAME", "OfflineModel"]
