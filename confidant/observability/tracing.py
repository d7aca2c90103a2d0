"""OpenTelemetry tracing: one span per turn with its phases; ADK adds its own spans beneath.

ADK 2.13 instruments itself (google/adk/telemetry): `invocation`, `invoke_agent <name>`,
`call_llm`, `generate_content <model>` with token counts, `execute_tool <name>`. Those spans use
the global tracer provider, so setting one up here is all it takes for them to nest under our
`confidant.turn` span. Exporters come from settings: the console or an OTLP/HTTP endpoint
locally, Cloud Trace in the cloud, and Langfuse's OTLP endpoint besides when configured.
"""

from __future__ import annotations

import base64
import logging
import os

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
)

from confidant.settings import Settings

logger = logging.getLogger(__name__)

SERVICE_NAME = "confidant"
TURN_SPAN = "confidant.turn"
# ADK records prompts and replies in span attributes unless told not to (read per run).
ADK_CONTENT_ENV = "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS"
LANGFUSE_OTLP_PATH = "/api/public/otel/v1/traces"

tracer = trace.get_tracer("confidant")


def ensure_sdk_provider() -> TracerProvider:
    """The global SDK tracer provider, set up once per process (OTel allows only one)."""
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return current
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
    trace.set_tracer_provider(provider)
    return trace.get_tracer_provider()  # type: ignore[return-value]


def span_processors(settings: Settings) -> list[SpanProcessor]:
    """The exporters the settings ask for, each behind its span processor."""
    processors: list[SpanProcessor] = []
    if settings.trace_exporter == "console":
        # Simple (synchronous) so a short local run prints every span before it exits.
        processors.append(SimpleSpanProcessor(ConsoleSpanExporter()))
    elif settings.trace_exporter == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        # No endpoint: the exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT itself.
        processors.append(BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.otlp_endpoint)))
    elif settings.trace_exporter == "cloudtrace":
        from opentelemetry.exporter.cloud_trace import CloudTraceSpanExporter

        processors.append(BatchSpanProcessor(CloudTraceSpanExporter(settings.project_id)))
    if settings.langfuse_host:
        processors.append(BatchSpanProcessor(_langfuse_exporter(settings)))
    return processors


def _langfuse_exporter(settings: Settings):  # type: ignore[no-untyped-def]
    """Langfuse takes OTLP/HTTP with basic auth of its public and secret keys."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    keys = f"{settings.langfuse_public_key or ''}:{settings.langfuse_secret_key or ''}"
    token = base64.b64encode(keys.encode()).decode()
    return OTLPSpanExporter(
        endpoint=settings.langfuse_host.rstrip("/") + LANGFUSE_OTLP_PATH,  # type: ignore[union-attr]
        headers={"Authorization": f"Basic {token}"},
    )


def configure_tracing(settings: Settings) -> None:
    """Install the configured exporters; with none configured, spans stay no-ops."""
    # Message text stays out of spans unless asked for (they leave the process).
    os.environ.setdefault(ADK_CONTENT_ENV, "true" if settings.trace_content else "false")
    processors = span_processors(settings)
    if not processors:
        return
    provider = ensure_sdk_provider()
    for processor in processors:
        provider.add_span_processor(processor)
    logger.info(
        "tracing to %s%s",
        settings.trace_exporter,
        " and Langfuse" if settings.langfuse_host else "",
    )


def flush_tracing(timeout_ms: int = 5000) -> None:
    """Export the spans still batched (a server calls this as it shuts down).

    uvicorn re-raises SIGTERM after its graceful shutdown, so the SDK's own atexit hook never
    runs: whoever serves must flush before that.
    """
    provider = trace.get_tracer_provider()
    if isinstance(provider, TracerProvider):
        provider.force_flush(timeout_ms)
