"""A client that goes away while its turn is still loading context leaves no lease behind: the
next message on that session is answered at once, not refused until the lease expires."""

from __future__ import annotations

import asyncio
from typing import Any

from confidant.chat.context import SUMMARY, ContextRequest, ContextSource
from confidant.chat.requests import parse_chat_request
from confidant.sessions.records import SessionKey
from tests.support.sse import streamed_text

USER = "leaver"


class _SlowOnce:
    """The real source, but its first load hangs (a slow store) until cancelled."""

    def __init__(self, source: ContextSource) -> None:
        self._source = source
        self.hanging = asyncio.Event()

    async def load(self, request: ContextRequest) -> Any:
        if not self.hanging.is_set():
            self.hanging.set()
            await asyncio.sleep(3600)
        return await self._source.load(request)


def _request(message: str):  # type: ignore[no-untyped-def]
    return parse_chat_request(
        {"session_id": "gone", "message": message, "multitask_strategy": "reject"},
        default_app="onemind",
        default_locale="en",
        max_message_chars=8000,
        app=None,
    )


async def test_a_turn_cancelled_while_loading_context_releases_the_session(make_client) -> None:
    # A lease far longer than the test: only a release can free the session in time.
    _, runtime = make_client(lease_ttl_s=600.0)
    slow = _SlowOnce(runtime.chat.context_sources[SUMMARY])
    runtime.chat.context_sources = {**runtime.chat.context_sources, SUMMARY: slow}
    key = SessionKey(USER, "onemind", "gone")

    first = asyncio.create_task(runtime.chat.prepare(USER, _request("I feel stuck")))
    async with asyncio.timeout(10):  # the lease is taken while the context still loads
        await slow.hanging.wait()
        while (loaded := await runtime.store.load(key)) is None or (
            loaded.record.lease_holder is None
        ):
            await asyncio.sleep(0.01)
    first.cancel()  # the client disconnected mid-load
    await asyncio.gather(first, return_exceptions=True)

    prepared = await runtime.chat.prepare(USER, _request("Are you there?"))  # no 409
    parts = [part async for part in prepared.stream()]
    assert parts[-1]["type"] == "finish" and streamed_text(parts)
