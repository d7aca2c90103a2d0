"""Agent trees, built per request from process-wide deps and the turn's context.

Importing this package registers every served app (each app package registers its `AppSpec`).
"""

from __future__ import annotations

from agents import lifecoach, onemind, relationship, taskflow  # noqa: F401  (registers apps)
from agents.registry import (
    AppSpec,
    Route,
    SkillInfo,
    UnknownAppError,
    app_names,
    app_spec,
    app_specs,
    build_app,
)

__all__ = [
    "AppSpec",
    "Route",
    "SkillInfo",
    "UnknownAppError",
    "app_names",
    "app_spec",
    "app_specs",
    "build_app",
]
