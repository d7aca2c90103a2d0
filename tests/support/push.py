"""Job topics on the Pub/Sub emulator, optionally with push subscriptions to a jobs server
(the shape Terraform deploys: one topic per kind, each pushing to `<jobs url>/jobs/<kind>`)."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from google.cloud import pubsub_v1


def functions_command(target: str, port: int) -> list[str]:
    """The functions-framework command serving `target` of functions/main.py on `port`."""
    return [
        sys.executable,
        "-m",
        "functions_framework",
        "--asgi",
        f"--target={target}",
        "--source=functions/main.py",
        "--host=127.0.0.1",
        f"--port={port}",
    ]


def create_job_topics(
    project: str, prefix: str, kinds: Iterable[str], push_to: str | None = None
) -> None:
    publisher = pubsub_v1.PublisherClient()
    subscriber = pubsub_v1.SubscriberClient()
    try:
        for kind in kinds:
            topic = publisher.topic_path(project, f"{prefix}-{kind}")
            publisher.create_topic(name=topic)
            if push_to is None:
                continue
            subscriber.create_subscription(
                request={
                    "name": subscriber.subscription_path(project, f"{prefix}-{kind}-push"),
                    "topic": topic,
                    "push_config": {"push_endpoint": f"{push_to}/jobs/{kind}"},
                    "ack_deadline_seconds": 60,
                }
            )
    finally:
        subscriber.close()
