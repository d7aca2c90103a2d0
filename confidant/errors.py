"""Errors that reach the client, each with its HTTP status and a stable code."""

from __future__ import annotations

from pydantic import ValidationError


def validation_reasons(exc: ValidationError) -> str:
    """pydantic's errors as one line for a 400: `field.path: what is wrong; ...`."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}" for err in exc.errors()
    )


class ConfidantError(Exception):
    """Base of errors that map to a client-visible status and reason."""

    status: int = 500
    code: str = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_json(self) -> dict[str, object]:
        return {"error": {"code": self.code, "message": self.message}}

    @property
    def headers(self) -> dict[str, str]:
        """Response headers that go with the status (e.g. `Retry-After` on a 429)."""
        return {}


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


class CommitOutcomeUnknownError(ConfidantError):
    """The turn's commit did not answer within its deadline, or failed in a way that does not
    say whether it was applied: the message may or may not be stored. Resending it with the
    same message id is safe (a committed message is never stored twice, see chat/idempotency)."""

    status = 503
    code = "commit_outcome_unknown"


class TransientModelError(ConfidantError):
    """The model failed in a way worth retrying (429, 5xx, timeout)."""

    status = 503
    code = "model_unavailable"


class TooManyRequestsError(ConfidantError):
    """A quota or a rate limit refused the request; `retry_after_s` says when to try again."""

    status = 429
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = max(1, retry_after_s)

    def to_json(self) -> dict[str, object]:
        body = super().to_json()
        body["error"] |= {"retry_after_s": self.retry_after_s}  # type: ignore[operator]
        return body

    @property
    def headers(self) -> dict[str, str]:
        return {"retry-after": str(self.retry_after_s)}


class QuotaExceededError(TooManyRequestsError):
    """The user's daily turns or model tokens are used up until the quota resets."""

    code = "quota_exceeded"


class TurnLimitError(ConfidantError):
    """A turn needed more model calls or tool calls than allowed; nothing of it was saved."""

    status = 422
    code = "turn_limit"
