"""A client that goes away after its message was accepted but before the reply's first byte
(the server's first send fails) is treated like one that goes away mid-reply: the turn still
runs and is stored, and the session is free for the next message at once, not after the
lease expires."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from starlette.requests import ClientDisconnect

from confidant.sessions.records import SessionKey
from tests.support.sse import parse_frames, streamed_text
from tests.unit.conftest import asgi_app

ALICE = {"X-User-Id": "alice"}


def _scope(body: bytes) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/chat",
        "raw_path": b"/v1/chat",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"x-user-id", b"alice"),
        ],
        "client": ("127.0.0.1", 40000),
        "server": ("confidant.test", 80),
    }


async def test_a_client_gone_before_the_first_byte_still_gets_its_turn_stored(
    make_client,
) -> None:
    # A lease far longer than the test: only the turn's own end can free the session in time.
    client, runtime = make_client(lease_ttl_s=600.0)
    body = json.dumps({"message": "I keep putting off my thesis", "session_id": "gone"}).encode()
    incoming = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        raise OSError("the client went away")  # ASGI 2.4: a send to a gone client fails

    with contextlib.suppress(ClientDisconnect, OSError):
        await asgi_app(runtime)(_scope(body), receive, send)

    key = SessionKey("alice", "onemind", "gone")
    async with asyncio.timeout(20):  # the turn runs and commits without its client
        while (loaded := await runtime.store.load(key)) is None or loaded.record.next_seq < 2:
            await asyncio.sleep(0.05)
    follow_up = {"message": "Are you there?", "session_id": "gone", "multitask_strategy": "reject"}
    response = await client.post("/v1/chat", json=follow_up, headers=ALICE)
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done and parts[-1]["type"] == "finish" and streamed_text(parts)
