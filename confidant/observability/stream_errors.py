"""The log line of a reply that ended with an `error` part inside a 200 stream.

Once a reply's stream has begun, the request log says 200 whatever happens next, so each reply
ended by an `error` part writes this line: a turn that failed (confidant/chat/service.py) and a
resumed stream whose turn died or can no longer be followed (confidant/streaming/resume.py).
The alert on failed replies (infra/modules/confidant/monitoring.tf, `chat_stream_errors`) counts
the ERROR ones by their `error_code`.
"""

from __future__ import annotations

import logging

# The `event` field the log-based metric filters on.
STREAM_ERROR_EVENT = "chat_stream_error"


def log_stream_error(logger: logging.Logger, code: str, status: int) -> None:
    """One line for a reply ended by an `error` part with `code`; `status` is what the failure
    would have answered before the stream began: ERROR for a 5xx (the server's failure, which
    the alert counts), INFO for what the user caused (a cap, the quota)."""
    logger.log(
        logging.ERROR if status >= 500 else logging.INFO,
        "reply ended with an error part (%s)",
        code,
        extra={"event": STREAM_ERROR_EVENT, "error_code": code, "error_status": status},
    )
