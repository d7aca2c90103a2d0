"""Pub/Sub push deliveries → JobRecord (shared by every job handler).

A push request body looks like:

    {"message": {"data": "<base64 JobRecord JSON>", "attributes": {...},
                 "messageId": "...", "publishTime": "..."},
     "subscription": "projects/<p>/subscriptions/<s>", "deliveryAttempt": 1}

`deliveryAttempt` is present only on subscriptions with a dead-letter policy.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from confidant.jobs.errors import MalformedEnvelopeError
from confidant.jobs.pubsub import job_attributes
from confidant.ports import JobRecord


@dataclass(frozen=True)
class PushDelivery:
    """One push delivery: the job plus what Pub/Sub says about the delivery."""

    job: JobRecord
    message_id: str
    subscription: str
    attributes: dict[str, str]
    delivery_attempt: int | None = None
    publish_time: str | None = None


def decode_push_envelope(body: Any) -> JobRecord:
    """The JobRecord carried by a Pub/Sub push request body.

    Raises:
        MalformedEnvelopeError: The body is not a push envelope carrying a valid JobRecord.
    """
    return parse_push_delivery(body).job


def parse_push_delivery(body: Any) -> PushDelivery:
    """Like `decode_push_envelope`, keeping the delivery metadata (message id, attempt)."""
    if not isinstance(body, Mapping):
        raise MalformedEnvelopeError("push body must be a JSON object")
    message = body.get("message")
    if not isinstance(message, Mapping):
        raise MalformedEnvelopeError("push body has no 'message' object")
    data = message.get("data")
    if not isinstance(data, str) or not data:
        raise MalformedEnvelopeError("push message has no base64 'data'")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise MalformedEnvelopeError("push message 'data' is not valid base64") from exc
    try:
        job = JobRecord.model_validate_json(raw)
    except ValidationError as exc:
        reason = "not JSON" if _not_json(raw) else f"not a JobRecord: {exc.errors()[0]['msg']}"
        raise MalformedEnvelopeError(f"push message 'data' is {reason}") from exc

    attributes = message.get("attributes") or {}
    if not isinstance(attributes, Mapping) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in attributes.items()
    ):
        raise MalformedEnvelopeError("push message 'attributes' must map strings to strings")
    # Attributes are routing hints; the data is the record. Disagreement means a bug or tampering.
    expected = job_attributes(job)
    for name, value in attributes.items():
        if name in expected and value != expected[name]:
            raise MalformedEnvelopeError(
                f"attribute {name!r}={value!r} disagrees with the job data ({expected[name]!r})"
            )

    message_id = message.get("messageId", message.get("message_id", ""))
    attempt = body.get("deliveryAttempt")
    if attempt is not None and (isinstance(attempt, bool) or not isinstance(attempt, int)):
        raise MalformedEnvelopeError("'deliveryAttempt' must be an integer")
    publish_time = message.get("publishTime", message.get("publish_time"))
    return PushDelivery(
        job=job,
        message_id=str(message_id),
        subscription=str(body.get("subscription", "")),
        attributes=dict(attributes),
        delivery_attempt=attempt,
        publish_time=str(publish_time) if publish_time is not None else None,
    )


def encode_push_envelope(
    job: JobRecord, *, message_id: str = "0", subscription: str = ""
) -> dict[str, Any]:
    """The push body Pub/Sub would deliver for `job` (local dispatch and tests)."""
    return {
        "message": {
            "data": base64.b64encode(job.model_dump_json().encode()).decode(),
            "attributes": job_attributes(job),
            "messageId": message_id,
        },
        "subscription": subscription,
    }


def _not_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except ValueError:
        return True
    return False
