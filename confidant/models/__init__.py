"""The model layer: one shared model per process, wrapped in reported retries."""

from __future__ import annotations

from confidant.models.factory import build_genai_client, build_model, resolve_model_kind
from confidant.models.retry import (
    DEFAULT_RETRY_DELAYS,
    RetryCallback,
    RetryingLlm,
    RetryNotice,
    is_transient,
    retry_listener,
)

__all__ = [
    "DEFAULT_RETRY_DELAYS",
    "RetryCallback",
    "RetryNotice",
    "RetryingLlm",
    "build_genai_client",
    "build_model",
    "is_transient",
    "resolve_model_kind",
    "retry_listener",
]
