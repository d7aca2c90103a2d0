"""Traces and logs: OpenTelemetry spans for every turn, structured logs for Cloud Logging."""

from confidant.observability.logs import CloudLoggingFormatter, configure_logging
from confidant.observability.tracing import (
    TURN_SPAN,
    configure_tracing,
    ensure_sdk_provider,
    flush_tracing,
    span_processors,
    tracer,
)

__all__ = [
    "TURN_SPAN",
    "CloudLoggingFormatter",
    "configure_logging",
    "configure_tracing",
    "ensure_sdk_provider",
    "flush_tracing",
    "span_processors",
    "tracer",
]
