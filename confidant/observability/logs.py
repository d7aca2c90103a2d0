"""Structured JSON log lines for Cloud Logging, correlated with the current trace.

Cloud Logging reads `severity`, `message`, `time` and the `logging.googleapis.com/trace` /
`spanId` / `trace_sampled` fields of a JSON line on stdout/stderr, and links each line to its
trace in Cloud Trace. Our own log calls never carry message text or secrets; the libraries whose
DEBUG lines do (ADK prints whole model requests, LiteLLM its calls, aiosqlite its rows) are
held at INFO here.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

from opentelemetry import trace

from confidant.settings import Settings

# Loggers whose DEBUG output includes prompts, replies or stored rows.
_CONTENT_LOGGERS = (
    "google_adk",
    "google_genai",
    "LiteLLM",
    "litellm",
    "httpcore",
    "aiosqlite",
    "urllib3",
)
_STANDARD_FIELDS = frozenset(vars(logging.makeLogRecord({}))) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's copy with terminal colours
}


class CloudLoggingFormatter(logging.Formatter):
    """One JSON object per line in Cloud Logging's structured-logging shape."""

    def __init__(self, project_id: str) -> None:
        super().__init__()
        self._project_id = project_id

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "severity": record.levelname,
            "message": record.getMessage(),
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "logger": record.name,
        }
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            trace_id = format(context.trace_id, "032x")
            entry["logging.googleapis.com/trace"] = f"projects/{self._project_id}/traces/{trace_id}"
            entry["logging.googleapis.com/spanId"] = format(context.span_id, "016x")
            entry["logging.googleapis.com/trace_sampled"] = context.trace_flags.sampled
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        for key, value in vars(record).items():  # `extra={...}` fields
            if key not in _STANDARD_FIELDS and not key.startswith("_"):
                entry[key] = value if isinstance(value, str | int | float | bool) else str(value)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(settings: Settings) -> None:
    """The root logger's handler and format, from settings (idempotent)."""
    handler = logging.StreamHandler(sys.stderr)
    if settings.log_format == "json":
        handler.setFormatter(CloudLoggingFormatter(settings.project_id))
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(settings.log_level.upper())
    for name in _CONTENT_LOGGERS:
        logger = logging.getLogger(name)
        if logger.getEffectiveLevel() < logging.INFO:
            logger.setLevel(logging.INFO)
    # uvicorn's loggers carry their own handlers; route them through ours.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True
