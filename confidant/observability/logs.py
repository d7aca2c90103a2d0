"""Structured JSON log lines for Cloud Logging, correlated with the current trace.

Cloud Logging reads `severity`, `message`, `time` and the `logging.googleapis.com/trace` /
`spanId` / `trace_sampled` fields of a JSON line on stdout/stderr, and links each line to its
trace in Cloud Trace. Our own log calls never carry message text or secrets. Libraries' DEBUG
lines do (ADK prints whole model requests, the OpenAI SDK under LiteLLM its request options,
aiosqlite its rows, urllib3 URLs with keys), so `CONFIDANT_LOG_LEVEL=DEBUG` lowers only our own
loggers and a few whose DEBUG lines are known to hold no content; every other library stays at
INFO or above (tests/e2e/test_security_logs.py greps a whole conversation's log for words, keys
and tokens).
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
    "openai",
    "httpx",
)
# Loggers that follow CONFIDANT_LOG_LEVEL below INFO: ours, and libraries whose DEBUG lines hold
# no message text, key or token. Everything else is held at INFO or above.
_DEBUG_SAFE_LOGGERS = ("confidant", "agents", "functions", "__main__", "asyncio", "uvicorn")
# Libraries that attach their own stderr handlers when imported: their lines would bypass our
# format (plain text among Cloud Logging's JSON lines, printed twice) and our level caps.
_SELF_HANDLED_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
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
    level = logging.getLevelName(settings.log_level.upper())
    if not isinstance(level, int):
        raise ValueError(f"CONFIDANT_LOG_LEVEL: unknown level {settings.log_level!r}")
    root.setLevel(max(level, logging.INFO))  # libraries: never below INFO
    for name in _DEBUG_SAFE_LOGGERS:
        logging.getLogger(name).setLevel(level)
    for name in _CONTENT_LOGGERS:
        logger = logging.getLogger(name)
        if logger.getEffectiveLevel() < logging.INFO:
            logger.setLevel(logging.INFO)
    route_library_loggers()
    logging.captureWarnings(True)  # `warnings` go through the handler too, not raw to stderr
    # uvicorn's loggers carry their own handlers; route them through ours.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True


def route_library_loggers() -> None:
    """Send the records of libraries with handlers of their own through the root handler.

    Call again after importing such a library (e.g. litellm, imported when a model needs it).
    """
    for name in _SELF_HANDLED_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
