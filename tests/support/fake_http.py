"""A scriptable HTTP server in a background thread: the base of the fake model endpoints.

The server is a Starlette app run by uvicorn on 127.0.0.1 with a free port, in a daemon thread
with its own event loop, so it serves both in-process clients and subprocesses (an end-to-end
test can point a server it starts at `base_url`).

Answers are chosen per call: first from the queue filled by `enqueue`, then from `responder`
(a callable on the recorded request), else the subclass's "nothing scripted" answer.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, Self, TypeVar

import uvicorn
from starlette.applications import Starlette

RequestT = TypeVar("RequestT")
StepT = TypeVar("StepT")


class FakeHttpServer(Generic[RequestT, StepT]):
    """Background uvicorn server with a script queue, a responder hook and a request log."""

    def __init__(
        self,
        responder: Callable[[RequestT], StepT] | None = None,
        *,
        scripted_for: Callable[[RequestT], bool] | None = None,
    ) -> None:
        self.responder = responder
        # Which requests take the queued steps (default: all); the others go to the responder,
        # so background callers (post-turn jobs) cannot eat a conversation's script.
        self.scripted_for = scripted_for
        self._lock = threading.Lock()
        self._queue: deque[StepT] = deque()
        self._requests: list[RequestT] = []
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # --- to be provided by subclasses ---

    def build_app(self) -> Starlette:
        raise NotImplementedError

    # --- scripting ---

    def enqueue(self, *steps: StepT) -> Self:
        """Answers for the next calls, one step per call, in order."""
        with self._lock:
            self._queue.extend(steps)
        return self

    def reset(self) -> None:
        """Forgets queued steps, recorded requests and the responder."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()
        self.responder = None

    @property
    def requests(self) -> list[RequestT]:
        """The requests received so far (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def pending(self) -> int:
        """How many queued steps have not been used."""
        with self._lock:
            return len(self._queue)

    def _record_and_choose(self, request: RequestT) -> StepT | None:
        with self._lock:
            self._requests.append(request)
            scripted = self.scripted_for is None or self.scripted_for(request)
            if self._queue and scripted:
                return self._queue.popleft()
        responder = self.responder
        return responder(request) if responder is not None else None

    # --- lifecycle ---

    @property
    def base_url(self) -> str:
        if not self.port:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            self.build_app(), lifespan="off", log_level="warning", access_log=False
        )
        server = uvicorn.Server(config)
        self._server = server

        def run() -> None:
            asyncio.run(server.serve(sockets=[sock]))

        self._thread = threading.Thread(target=run, name=type(self).__name__, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{type(self).__name__} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            # Do not wait for slow scripted replies (delay_s) still in flight.
            self._server.force_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def split_text(text: str, chunks: int) -> list[str]:
    """`text` cut into at most `chunks` non-empty pieces that join back to it."""
    if not text:
        return [""]
    chunks = max(1, min(chunks, len(text)))
    size, extra = divmod(len(text), chunks)
    pieces: list[str] = []
    start = 0
    for index in range(chunks):
        end = start + size + (1 if index < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces
