"""Job bus adapters (the `JobBus` port): in-process queue embedded, Pub/Sub in cloud."""

from __future__ import annotations

from confidant.jobs.envelope import (
    PushDelivery,
    decode_push_envelope,
    encode_push_envelope,
    parse_push_delivery,
)
from confidant.jobs.errors import JobPublishError, MalformedEnvelopeError
from confidant.jobs.inprocess import InProcessJobBus, JobHandler
from confidant.jobs.pubsub import PubSubJobBus, job_attributes, topic_id

__all__ = [
    "InProcessJobBus",
    "JobHandler",
    "JobPublishError",
    "MalformedEnvelopeError",
    "PubSubJobBus",
    "PushDelivery",
    "decode_push_envelope",
    "encode_push_envelope",
    "job_attributes",
    "parse_push_delivery",
    "topic_id",
]
