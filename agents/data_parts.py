"""The turn's app data parts: how an app streams its own `data-{name}` parts while a turn runs.

One object per turn, `TurnContext.data_parts`; the chat service is its only reader and streams
every entry as a `data-{name}` part (and lists its payload under `name` in a JSON response;
`protocol-progress` under `progress`). An app puts parts in two ways, by where they belong:

* `send(name, data)`: a tool, the tree builder or a routing layer has something to show (an
  invitation card, a protocol's progress): streamed right after the event during which it was
  sent (parts sent while the tree is built: before the run's first event).
* `watch(reader)`: a part that announces an event (e.g. `data-agent` when a specialist starts
  speaking): the reader sees every event of the run and its parts lead that event's own parts.
  A before-run hook registers it (the reader may keep state for the turn).

Not here, because they are not parts an app emits during the run: a before-run hook's decision
(`TurnPrelude.data`, one object per turn, streamed after `data-session`) and the calls a paused
run waits on (`AppSpec.human_loop`, read from the stored session after the commit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from google.adk.events import Event

# Per event of a run: `{name: payload}` data parts to stream before the event's own parts.
EventDataReader = Callable[[Event], Mapping[str, Any] | None]


class DataParts:
    def __init__(self) -> None:
        self._pending: list[tuple[str, Any]] = []
        self._readers: list[EventDataReader] = []

    def send(self, name: str, data: Any) -> None:
        """Stream `data-{name}` after the current event's parts."""
        self._pending.append((name, data))

    def watch(self, reader: EventDataReader) -> None:
        """Ask `reader` about every event of the run; its parts lead that event's parts."""
        self._readers.append(reader)

    def leading(self, event: Event) -> list[tuple[str, Any]]:
        """The parts the watching readers announce `event` with (the chat service calls this)."""
        found: list[tuple[str, Any]] = []
        for reader in self._readers:
            found.extend((reader(event) or {}).items())
        return found

    def drain(self) -> list[tuple[str, Any]]:
        """The parts sent since the last drain (the chat service calls this after each event)."""
        pending, self._pending = self._pending, []
        return pending
