"""Pub/Sub push envelopes → JobRecord."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from confidant.jobs import (
    MalformedEnvelopeError,
    decode_push_envelope,
    encode_push_envelope,
    parse_push_delivery,
)
from tests.support.jobs import make_job


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_round_trip() -> None:
    job = make_job("summary", turn=12)
    body = encode_push_envelope(job, message_id="42", subscription="projects/p/subscriptions/s")
    assert decode_push_envelope(body) == job
    delivery = parse_push_delivery({**body, "deliveryAttempt": 3})
    assert delivery.job == job
    assert delivery.message_id == "42"
    assert delivery.subscription == "projects/p/subscriptions/s"
    assert delivery.delivery_attempt == 3
    assert delivery.attributes["turn"] == "12"


def test_accepts_a_real_push_shape_without_attributes() -> None:
    job = make_job("emotion")
    body = {
        "message": {
            "data": b64(job.model_dump_json().encode()),
            "messageId": "2070443601311540",
            "message_id": "2070443601311540",
            "publishTime": "2021-02-26T19:13:55.749Z",
            "publish_time": "2021-02-26T19:13:55.749Z",
        },
        "subscription": "projects/myproject/subscriptions/mysubscription",
    }
    delivery = parse_push_delivery(body)
    assert delivery.job == job
    assert delivery.publish_time == "2021-02-26T19:13:55.749Z"
    assert delivery.delivery_attempt is None


def _valid() -> dict[str, Any]:
    return encode_push_envelope(make_job("emotion"))


def _with_message(**changes: Any) -> dict[str, Any]:
    body = _valid()
    body["message"].update(changes)
    return body


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (None, "JSON object"),
        ([], "JSON object"),
        ({}, "'message'"),
        ({"message": "x"}, "'message'"),
        (_with_message(data=None), "'data'"),
        (_with_message(data=""), "'data'"),
        (_with_message(data=123), "'data'"),
        (_with_message(data="not base64!"), "base64"),
        (_with_message(data=b64(b"{not json")), "not JSON"),
        (_with_message(data=b64(b'{"kind": "emotion"}')), "not a JobRecord"),
        (_with_message(data=b64(b"[]")), "not a JobRecord"),
        (_with_message(attributes=["kind"]), "attributes"),
        (_with_message(attributes={"turn": 1}), "attributes"),
        (_with_message(attributes={"kind": "summary"}), "disagrees"),
        ({**_valid(), "deliveryAttempt": "2"}, "deliveryAttempt"),
    ],
)
def test_malformed_envelopes_are_rejected(body: Any, reason: str) -> None:
    with pytest.raises(MalformedEnvelopeError, match=reason) as info:
        decode_push_envelope(body)
    assert info.value.status == 400


def test_data_is_authoritative_over_unknown_attributes() -> None:
    job = make_job("emotion")
    body = encode_push_envelope(job)
    body["message"]["attributes"]["googclient_schemaencoding"] = "JSON"
    assert decode_push_envelope(body) == job
    assert json.loads(base64.b64decode(body["message"]["data"]))["job_id"] == job.job_id
