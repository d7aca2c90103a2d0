"""Resumable streams in-process: the embedded store's log, GET /v1/chat/{id}/stream, fallbacks."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from confidant.chat.requests import ChatRequest
from confidant.observability.logs import CloudLoggingFormatter
from confidant.observability.stream_errors import STREAM_ERROR_EVENT
from confidant.ports import StreamHead
from confidant.sessions.records import SessionKey, TurnWrite
from confidant.streaming.resume import CUT_SHORT, INTERRUPTED, INTERRUPTED_SAVED, StreamResumer
from confidant.streaming.stream_log import StreamLogPolicy, StreamRecorder
from tests.support.sse import of_type, parse_frames, streamed_text

USER = {"X-User-Id": "resumer"}


async def _chat(client, session_id: str, message: str = "I keep putting off my thesis"):  # type: ignore[no-untyped-def]
    response = await client.post(
        "/v1/chat", json={"session_id": session_id, "message": message}, headers=USER
    )
    assert response.status_code == 200
    return parse_frames(response.text)[0]


async def test_a_finished_turn_is_replayed_part_for_part_and_from_an_offset(make_client) -> None:
    client, _ = make_client()
    async with client:
        sent = await _chat(client, "s1")
        replayed = await client.get("/v1/chat/s1/stream", headers=USER)
        tail = await client.get("/v1/chat/s1/stream?from=3", headers=USER)

    assert replayed.status_code == 200
    assert replayed.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert replayed.headers["content-type"].startswith("text/event-stream")
    parts, done = parse_frames(replayed.text)
    assert done and parts == sent  # the same message: same id, same parts, `finish` last
    assert parts[-1]["type"] == "finish" and streamed_text(parts)
    assert parse_frames(tail.text)[0] == sent[3:]


async def test_only_the_owner_resumes_and_bad_offsets_are_refused(make_client) -> None:
    client, _ = make_client()
    async with client:
        await _chat(client, "mine")
        other = await client.get("/v1/chat/mine/stream", headers={"X-User-Id": "someone-else"})
        missing = await client.get("/v1/chat/never-was/stream", headers=USER)
        bad = await client.get("/v1/chat/mine/stream?from=-1", headers=USER)
        post = await client.post("/v1/chat/mine/stream", headers=USER)

    assert other.status_code == 404 and "resumer" not in other.text
    assert missing.status_code == 404
    assert bad.status_code == 400 and "from" in bad.json()["error"]["message"]
    assert post.status_code == 405


async def test_nothing_to_resume_after_the_retention_is_204(make_client) -> None:
    client, _ = make_client(stream_retention_s=0.3)
    async with client:
        await _chat(client, "old")
        await asyncio.sleep(0.5)
        response = await client.get("/v1/chat/old/stream", headers=USER)
    assert response.status_code == 204 and response.content == b""


async def test_a_zero_retention_records_nothing_and_resumes_nothing(make_client) -> None:
    client, runtime = make_client(stream_retention_s=0)
    async with client:
        await _chat(client, "off")
        response = await client.get("/v1/chat/off/stream", headers=USER)
    assert runtime.chat.streams is None
    assert response.status_code == 204


async def test_a_log_cut_at_its_bound_falls_back_to_the_committed_reply(make_client) -> None:
    client, runtime = make_client(stream_max_parts=3)
    async with client:
        sent = await _chat(client, "long")
        head = await _settled(runtime, SessionKey("resumer", "onemind", "long"))
        replayed = await client.get("/v1/chat/long/stream", headers=USER)
        partial = await client.get("/v1/chat/long/stream?from=1", headers=USER)

    assert head is not None and head.truncated and head.part_count == 3
    parts, done = parse_frames(replayed.text)
    assert done and parts[0]["type"] == "start" and parts[-1]["type"] == "finish"
    assert streamed_text(parts) == streamed_text(sent)  # rebuilt from the session's events
    assert of_type(parts, "data-session")[0]["data"]["sessionId"] == "long"
    # A client holding part of the original stream cannot be continued with rebuilt parts.
    assert partial.status_code == 204


async def test_a_running_turn_is_tailed_until_it_finishes(make_client) -> None:
    client, runtime = make_client(offline_chunk_delay_ms=40, stream_flush_s=0.05)
    key = SessionKey("resumer", "onemind", "live")
    request = ChatRequest(
        app="onemind", session_id="live", message="I keep putting off my thesis", locale="en"
    )
    async with client:
        prepared = await runtime.chat.prepare("resumer", request)
        stream = prepared.stream()
        seen = []
        async for part in stream:  # the client reads a little, then its connection drops
            seen.append(part)
            if part["type"] == "text-delta":
                break
        await stream.aclose()
        await asyncio.sleep(0.1)  # the first batch is written
        parts = await runtime.resumer.open(key, start=len(seen))
        assert parts is not None
        rest = [json.loads(encoded) async for encoded in parts]

    whole = seen + rest
    assert rest[-1]["type"] == "finish"
    assert [p["type"] for p in whole].count("start") == 1
    assert streamed_text(whole) == prepared.result.text
    assert len(of_type(rest, "text-delta")) > 1  # the rest arrived while it was produced


class _FailingLog:
    async def save(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        raise ConnectionError("store down")


async def test_a_failing_log_never_fails_the_turn(make_client) -> None:
    client, runtime = make_client()
    async with client:
        from confidant.streaming.stream_log import StreamLogWriter

        runtime.chat.streams = StreamLogWriter(_FailingLog(), StreamLogPolicy())  # type: ignore[arg-type]
        parts = await _chat(client, "resilient")
        replayed = await client.get("/v1/chat/resilient/stream", headers=USER)
    assert parts[-1]["type"] == "finish"
    # Nothing was logged: the committed reply is rebuilt from the session's events.
    assert streamed_text(parse_frames(replayed.text)[0]) == streamed_text(parts)


@pytest.mark.parametrize(
    ("saved", "text", "code"),
    [
        (False, INTERRUPTED, "reply_interrupted"),
        (True, INTERRUPTED_SAVED, "reply_interrupted_saved"),
    ],
    ids=["before-its-commit", "after-its-commit"],
)
async def test_a_turn_that_died_mid_stream_ends_with_an_error_the_alert_counts(
    make_client, caplog: pytest.LogCaptureFixture, saved: bool, text: str, code: str
) -> None:
    client, runtime = make_client()
    key = SessionKey("resumer", "onemind", "dead")
    async with client:
        await _chat(client, "dead")  # the session exists, its lease is free
        log = runtime.resumer._log  # type: ignore[union-attr]
        # A recording whose process was killed: its head stays active, nobody holds the lease.
        recorder = StreamRecorder(log, key, StreamLogPolicy(flush_s=0.01), now=_now())
        recorder.record({"type": "start", "messageId": "msg-dead"})
        await asyncio.sleep(0.1)
        recorder.task.cancel()
        if saved:  # the turn had committed before it died
            record = (await runtime.store.load(key)).record
            await runtime.store.commit(key, TurnWrite(record.revision, now=_now()))
        resumer = StreamResumer(log, runtime.store, StreamLogPolicy(poll_s=0.05), stall_s=0.1)
        parts = await resumer.open(key)
        assert parts is not None
        with caplog.at_level(logging.INFO, logger="confidant"):
            got = [json.loads(encoded) async for encoded in parts]
    assert got[0] == {"type": "start", "messageId": "msg-dead"}
    assert got[-1] == {"type": "error", "errorText": text, "code": code}
    # The resume's response is a 200 like the turn's: the alert on failed replies (infra
    # monitoring.tf, chat_stream_errors: ERROR lines) learns of the dead turn from this line.
    (line,) = _stream_error_lines(caplog)
    assert line.levelno == logging.ERROR
    entry = json.loads(CloudLoggingFormatter("p").format(line))
    assert entry["error_code"] == code and entry["error_status"] == 500


async def test_a_stream_replaced_by_a_newer_turn_ends_with_an_error_the_alert_ignores(
    make_client, caplog: pytest.LogCaptureFixture
) -> None:
    client, runtime = make_client()
    key = SessionKey("resumer", "onemind", "replaced")
    async with client:
        await _chat(client, "replaced")
        log = runtime.resumer._log  # type: ignore[union-attr]
        first = StreamRecorder(log, key, StreamLogPolicy(flush_s=0.01), now=_now())
        first.record({"type": "start", "messageId": "msg-first"})
        await asyncio.sleep(0.1)
        resumer = StreamResumer(log, runtime.store, StreamLogPolicy(poll_s=0.05), stall_s=5)
        parts = await resumer.open(key)  # follows the first turn's stream
        assert parts is not None
        newer = StreamRecorder(log, key, StreamLogPolicy(flush_s=0.01), now=_now())
        newer.record({"type": "start", "messageId": "msg-newer"})
        await asyncio.sleep(0.1)
        with caplog.at_level(logging.INFO, logger="confidant"):
            got = [json.loads(encoded) async for encoded in parts]
        for recorder in (first, newer):
            recorder.task.cancel()
    assert got == [
        {"type": "start", "messageId": "msg-first"},
        {"type": "error", "errorText": CUT_SHORT, "code": "stream_cut_short"},
    ]
    # The reply is saved in the conversation: noted, but not a failed reply.
    (line,) = _stream_error_lines(caplog)
    assert line.levelno == logging.INFO and line.error_code == "stream_cut_short"  # type: ignore[attr-defined]


def _stream_error_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "event", None) == STREAM_ERROR_EVENT]


async def _settled(runtime, key: SessionKey) -> StreamHead:  # type: ignore[no-untyped-def]
    """The stream's final head (written just after the reply's last part)."""
    for _ in range(100):
        head = await runtime.resumer._log.latest(key)
        if head is not None and head.status != "active":
            return head
        await asyncio.sleep(0.02)
    raise AssertionError(f"the stream of {key} never ended")


def _now() -> float:
    import time

    return time.time()
