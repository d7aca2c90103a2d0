"""Errors of the job bus adapters."""

from __future__ import annotations

from confidant.errors import BadRequestError, ConfidantError


class JobPublishError(ConfidantError):
    """Jobs could not be handed to the bus; the turn is committed, the outbox keeps them."""

    status = 503
    code = "job_publish_failed"

    def __init__(self, message: str, *, job_ids: list[str] | None = None) -> None:
        super().__init__(message)
        self.job_ids = job_ids or []


class MalformedEnvelopeError(BadRequestError):
    """A push delivery that is not a Pub/Sub envelope carrying a JobRecord."""

    code = "malformed_envelope"


class TransientJobError(Exception):
    """A job failed in a way worth retrying (Pub/Sub redelivers it; the in-process bus retries)."""


class PoisonJobError(Exception):
    """A job that can never succeed (malformed payload, unknown kind): acknowledged, recorded."""


class StaleJobError(Exception):
    """A job superseded by a later one (an older turn's summary): acknowledged, no effect."""
