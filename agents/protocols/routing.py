"""The routing layer of a protocol-driven app: it runs before the core agent, never inside it.

Per turn it applies the client's protocol action (the invitation's buttons, sent as a body
field), keeps an active protocol from timing out while it is in use, tells the client where the
protocol stands (`data-protocol-progress` at the start of the turn, so a resumed session shows
its progress at once), and renders the protocol part of the core agent's instruction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.data_parts import DataParts
from agents.protocols.engine import ProtocolRunner, Status

PROGRESS_PART = "protocol-progress"
START, LATER, CONTINUE, CANCEL = "start", "later", "continue", "cancel"
ACTIONS = (START, LATER, CONTINUE, CANCEL)


class ProtocolRouting:
    def __init__(self, runner: ProtocolRunner, data_parts: DataParts) -> None:
        self.runner = runner
        self.data_parts = data_parts
        self.action_note = ""

    def begin_turn(self, action: Mapping[str, Any] | None) -> None:
        runner = self.runner
        if action:
            self._apply(action)
        else:
            runner.touch()
        if runner.status() in (Status.ACTIVE, Status.AWAITING_CONFIRMATION):
            self.data_parts.send(PROGRESS_PART, runner.progress())

    def _apply(self, action: Mapping[str, Any]) -> None:
        kind = action.get("action")
        protocol_id = str(action.get("protocol_id") or "")
        runner = self.runner
        result: dict[str, Any] = {}
        if kind == START:
            result = runner.start(protocol_id)
            note = f"The user pressed Start on {protocol_id}: {result.get('result')}."
        elif kind == CONTINUE:
            result = runner.resume()
            note = f"The user chose to continue the protocol: {result.get('result')}."
        elif kind == CANCEL:
            result = runner.cancel("the user pressed cancel")
            if result.get("status") == "ok":
                self.data_parts.send(PROGRESS_PART, result.get("progress"))
            note = "The user cancelled the protocol."
        else:
            note = f"The user chose not to start {protocol_id} now; do not insist."
        problem = result.get("error")
        if isinstance(problem, dict):
            note += f" It did not work: {problem.get('message')}."
        # The message of this turn is the button's label, not an answer to the step.
        self.action_note = f"PROTOCOL_ACTION: {kind}\n{note} This message is not an answer."

    def prompt(self) -> str:
        text = self.runner.prompt()
        return f"{text}\n{self.action_note}" if self.action_note else text
