"""Errors that reach the client, each with its HTTP status and a stable code."""

from __future__ import annotations


class ConfidantError(Exception):
    """Base of errors that map to a client-visible status and reason."""

    status: int = 500
    code: str = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_json(self) -> dict[str, object]:
        return {"error": {"code": self.code, "message": self.message}}


class BadRequestError(ConfidantError):
    status = 400
    code = "bad_request"


class PayloadTooLargeError(ConfidantError):
    status = 413
    code = "payload_too_large"


class AuthenticationError(ConfidantError):
    status = 401
    code = "unauthenticated"


class ForbiddenError(ConfidantError):
    """A verified caller without the right (e.g. the admin claim)."""

    status = 403
    code = "forbidden"


class NotFoundError(ConfidantError):
    status = 404
    code = "not_found"


class SessionBusyError(ConfidantError):
    """Another turn holds the session's lease."""

    status = 409
    code = "session_busy"


class StaleTurnError(ConfidantError):
    """The session changed in storage since this turn loaded it; the turn was not committed."""

    status = 409
    code = "stale_session"


class StoreUnavailableError(ConfidantError):
    """The session store did not answer in time; nothing was stored, the request may be retried."""

    status = 503
    code = "store_unavailable"


class TransientModelError(ConfidantError):
    """The model failed in a way worth retrying (429, 5xx, timeout)."""

    status = 503
    code = "model_unavailable"
