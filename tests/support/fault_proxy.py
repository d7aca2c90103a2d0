"""A TCP proxy that fails on cue, between a server under test and an emulator (issue 14, item 3).

Stopping an emulator is coarse (seconds to stop and start, and a restart loses what was not
exported); this proxy fails the connection at an exact moment instead:

- `blackhole()`: bytes stop flowing both ways, connections stay open — the worst case, a store
  that neither answers nor refuses (a client waits on its own deadlines);
- `refuse()`: open connections are reset and new ones closed at once (a store that is down);
- `restore()`: the blackholed connections are reset (so clients reconnect) and traffic flows;
- `hold_when(marker)`: the first client→server chunk holding `marker` (e.g. a message's text,
  which only the turn's commit carries) is not forwarded, and the proxy blackholes from then
  on: the write never reaches the emulator;
- `drop_reply_when(marker)`: that chunk is forwarded (requests keep flowing) but no reply
  reaches the client any more: the write is applied and the client never learns it;
- `reset_when(marker)`: as `drop_reply_when`, then every connection is reset and traffic flows
  again: the write is applied, the client sees UNAVAILABLE and its library retries the write.

Both triggers take `on_trigger`, called in the proxy's thread at the moment of the fault (for
`drop_reply_when`, `settle_s` later, once the emulator has applied the write), e.g. to SIGKILL
the server process exactly at its commit. gRPC messages are not compressed by
default, so a text marker appears verbatim in the request bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.support.emulators import free_port


@dataclass
class _Trigger:
    marker: bytes
    forward: bool  # forward the matching chunk and drop the reply (True), or hold it (False)
    on_trigger: Callable[[], None] | None
    reset: bool = False  # forwarded: then reset every connection and let traffic flow again


@dataclass(eq=False)  # hashed by identity: kept in a set
class _Link:
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter
    tail: bytes = b""  # the last bytes sent, so a marker split across reads is still found

    def abort(self) -> None:
        for writer in (self.client, self.upstream):
            with contextlib.suppress(Exception):
                writer.transport.abort()


@dataclass
class FaultProxy:
    upstream: str  # host:port of the real service
    port: int = field(default_factory=free_port)
    triggered: threading.Event = field(default_factory=threading.Event)
    settle_s: float = 1.0  # after a forwarded trigger, before its `on_trigger` runs

    def __post_init__(self) -> None:
        self._mode = "pass"  # pass | blackhole | mute (no replies) | refuse
        self._trigger: _Trigger | None = None
        self._links: set[_Link] = set()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="fault-proxy")

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    # -- control (from the test's thread) ---------------------------------------------------

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._call(self._close_all)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def blackhole(self) -> None:
        self._call(lambda: setattr(self, "_mode", "blackhole"))

    def refuse(self) -> None:
        def apply() -> None:
            self._mode = "refuse"
            self._close_all()

        self._call(apply)

    def restore(self) -> None:
        def apply() -> None:
            self._trigger = None
            if self._mode != "pass":
                self._close_all()  # clients waiting on a silent connection reconnect now
            self._mode = "pass"

        self._call(apply)

    def hold_when(self, marker: str, on_trigger: Callable[[], None] | None = None) -> None:
        self._arm(_Trigger(marker.encode(), forward=False, on_trigger=on_trigger))

    def drop_reply_when(self, marker: str, on_trigger: Callable[[], None] | None = None) -> None:
        self._arm(_Trigger(marker.encode(), forward=True, on_trigger=on_trigger))

    def reset_when(self, marker: str) -> None:
        """Forward the marked chunk, drop the replies, then (`settle_s` later) reset every
        connection and let traffic flow: the write applied, the client saw its connection die
        (UNAVAILABLE), and its retry reaches the service."""
        self._arm(_Trigger(marker.encode(), forward=True, on_trigger=None, reset=True))

    def _arm(self, trigger: _Trigger) -> None:
        self.triggered.clear()
        self._call(lambda: setattr(self, "_trigger", trigger))

    def _call(self, action: Callable[[], None]) -> None:
        """Run `action` on the proxy's loop and wait for it (state changes are in order)."""
        done = threading.Event()

        def run() -> None:
            try:
                action()
            finally:
                done.set()

        self._loop.call_soon_threadsafe(run)
        done.wait(10)

    # -- the proxy (its own thread and loop) --------------------------------------------------

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._accept, "127.0.0.1", self.port)
        )
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            self._loop.close()

    def _reset(self) -> None:
        self._close_all()
        self._mode = "pass"

    def _close_all(self) -> None:
        for link in list(self._links):
            link.abort()
        self._links.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._mode == "refuse":
            writer.transport.abort()
            return
        host, port = self.upstream.rsplit(":", 1)
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.transport.abort()
            return
        link = _Link(writer, up_writer)
        self._links.add(link)
        try:
            await asyncio.gather(
                self._pump_requests(reader, link), self._pump_replies(up_reader, link)
            )
        except OSError:
            pass  # a side reset the connection (or the proxy did): the link is over
        finally:
            link.abort()
            self._links.discard(link)

    async def _pump_requests(self, reader: asyncio.StreamReader, link: _Link) -> None:
        while chunk := await reader.read(65536):
            seen, link.tail = link.tail + chunk, (link.tail + chunk)[-256:]
            if self._mode == "blackhole":
                continue  # swallowed
            trigger = self._trigger
            if trigger is not None and trigger.marker in seen:
                self._trigger = None
                self.triggered.set()
                if trigger.forward:
                    link.upstream.write(chunk)
                    self._mode = "mute"  # requests flow on, no reply comes back
                    if trigger.on_trigger is not None:
                        # Time for the emulator to apply the write (milliseconds) first.
                        self._loop.call_later(self.settle_s, trigger.on_trigger)
                    if trigger.reset:
                        self._loop.call_later(self.settle_s, self._reset)
                else:
                    self._mode = "blackhole"
                    if trigger.on_trigger is not None:
                        trigger.on_trigger()
                continue
            link.upstream.write(chunk)
        link.abort()

    async def _pump_replies(self, reader: asyncio.StreamReader, link: _Link) -> None:
        while chunk := await reader.read(65536):
            if self._mode == "pass":
                link.client.write(chunk)
        link.abort()
