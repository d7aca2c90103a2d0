"""PubSubJobBus and push envelopes against the real Pub/Sub emulator."""

from __future__ import annotations

import base64
import json
import queue
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from google.cloud import pubsub_v1

from confidant.jobs import (
    JobPublishError,
    PubSubJobBus,
    decode_push_envelope,
    parse_push_delivery,
)
from confidant.jobs.pubsub import shared_publisher
from confidant.ports import JobRecord
from tests.conftest import TEST_PROJECT
from tests.support.jobs import make_job

pytestmark = pytest.mark.emulator


@pytest.fixture
def bus(pubsub_emulator: str) -> PubSubJobBus:
    # A unique prefix per test: topics never collide across tests in the shared emulator.
    return PubSubJobBus(TEST_PROJECT, f"t{uuid.uuid4().hex[:10]}")


@pytest.fixture(scope="module")
def subscriber(pubsub_emulator: str) -> Iterator[pubsub_v1.SubscriberClient]:
    client = pubsub_v1.SubscriberClient()
    yield client
    client.close()


def pull_subscription(subscriber: pubsub_v1.SubscriberClient, topic: str, **extra: Any) -> str:
    path = subscriber.subscription_path(TEST_PROJECT, f"sub-{uuid.uuid4().hex[:12]}")
    subscriber.create_subscription(request={"name": path, "topic": topic, **extra})
    return path


def pull_all(
    subscriber: pubsub_v1.SubscriberClient, subscription: str, count: int
) -> list[pubsub_v1.types.ReceivedMessage]:
    received: list[pubsub_v1.types.ReceivedMessage] = []
    for _ in range(20):  # the emulator may return fewer messages than are available
        response = subscriber.pull(
            request={"subscription": subscription, "max_messages": 10}, timeout=10
        )
        received.extend(response.received_messages)
        if response.received_messages:
            subscriber.acknowledge(
                request={
                    "subscription": subscription,
                    "ack_ids": [m.ack_id for m in response.received_messages],
                }
            )
        if len(received) >= count:
            break
    return received


def expected_attributes(job: JobRecord) -> dict[str, str]:
    return {
        "kind": job.kind,
        "job_id": job.job_id,
        "user_id": job.user_id,
        "app": job.app,
        "session_id": job.session_id,
        "turn": str(job.turn),
    }


async def test_publish_then_pull(bus: PubSubJobBus, subscriber: pubsub_v1.SubscriberClient) -> None:
    topics = await bus.ensure_topics(["emotion", "summary"])
    assert topics == [
        f"projects/{TEST_PROJECT}/topics/{bus.topic_prefix}-emotion",
        f"projects/{TEST_PROJECT}/topics/{bus.topic_prefix}-summary",
    ]
    emotion_sub = pull_subscription(subscriber, topics[0])
    summary_sub = pull_subscription(subscriber, topics[1])
    emotion = make_job("emotion", turn=3)
    summary = make_job("summary", turn=4, payload={"window": [1, 2, 3]})

    await bus.publish([emotion, summary])

    [got_emotion] = pull_all(subscriber, emotion_sub, 1)
    [got_summary] = pull_all(subscriber, summary_sub, 1)
    for job, got in ((emotion, got_emotion), (summary, got_summary)):
        assert JobRecord.model_validate_json(got.message.data) == job
        assert json.loads(got.message.data)["payload"] == job.payload
        assert dict(got.message.attributes) == expected_attributes(job)


async def test_ensure_topics_is_idempotent(bus: PubSubJobBus) -> None:
    first = await bus.ensure_topics(["emotion"])
    assert await bus.ensure_topics(["emotion"]) == first


async def test_publish_to_a_missing_topic_raises(bus: PubSubJobBus) -> None:
    await bus.ensure_topics(["emotion"])
    ok, missing = make_job("emotion"), make_job("summary")  # no summary topic
    with pytest.raises(JobPublishError) as info:
        await bus.publish([ok, missing])
    assert info.value.job_ids == [missing.job_id]
    assert info.value.status == 503
    assert "summary" in info.value.message


async def test_invalid_kind_raises(bus: PubSubJobBus) -> None:
    with pytest.raises(JobPublishError, match="invalid job kind"):
        await bus.publish([make_job("Not A Kind")])


async def test_buses_share_one_publisher_per_process(bus: PubSubJobBus) -> None:
    other = PubSubJobBus(TEST_PROJECT, "other")
    await bus.ensure_topics(["emotion"])
    await other.ensure_topics(["emotion"])
    assert shared_publisher() is shared_publisher()
    assert shared_publisher().batch_settings.max_messages == 1


async def test_closed_bus_refuses_to_publish(bus: PubSubJobBus) -> None:
    await bus.close()
    with pytest.raises(RuntimeError, match="closed"):
        await bus.publish([make_job("emotion")])


async def test_pulled_message_in_push_shape_decodes(
    bus: PubSubJobBus, subscriber: pubsub_v1.SubscriberClient
) -> None:
    [topic] = await bus.ensure_topics(["emotion"])
    subscription = pull_subscription(subscriber, topic)
    job = make_job("emotion", turn=9)
    await bus.publish([job])
    [received] = pull_all(subscriber, subscription, 1)
    # The shape Pub/Sub push uses, built from what the emulator delivered.
    body = {
        "message": {
            "data": base64.b64encode(received.message.data).decode(),
            "attributes": dict(received.message.attributes),
            "messageId": received.message.message_id,
            "publishTime": received.message.publish_time.isoformat(),
        },
        "subscription": subscription,
    }
    assert decode_push_envelope(body) == job


class _PushReceiver:
    """A push endpoint on 127.0.0.1: records request bodies and acknowledges with 204."""

    def __init__(self) -> None:
        self.bodies: queue.Queue[dict[str, Any]] = queue.Queue()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                receiver.bodies.put(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jobs/emotion"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


async def test_emulator_push_delivery_decodes(
    bus: PubSubJobBus, subscriber: pubsub_v1.SubscriberClient
) -> None:
    receiver = _PushReceiver()
    try:
        [topic] = await bus.ensure_topics(["emotion"])
        subscription = pull_subscription(
            subscriber, topic, push_config={"push_endpoint": receiver.url}
        )
        job = make_job("emotion", turn=5)
        await bus.publish([job])
        body = receiver.bodies.get(timeout=30)
    finally:
        receiver.close()
    delivery = parse_push_delivery(body)
    assert delivery.job == job
    assert delivery.subscription == subscription
    assert delivery.attributes == expected_attributes(job)
    assert delivery.message_id
