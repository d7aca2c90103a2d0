"""UI message stream parts and stored events, as terminal text."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TextIO

BAR_WIDTH = 20


def bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    filled = round(width * done / total) if total else width
    return "█" * filled + "░" * (width - filled)


def stage_name(stage: str) -> str:
    """ "stage_2_integration" → "integration"."""
    head, _, rest = stage.partition("_")
    if head == "stage" and "_" in rest:
        stage = rest.split("_", 1)[1]
    return stage.replace("_", " ")


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def progress_line(data: dict[str, Any]) -> str:
    """One `data-protocol-progress` part (agents/protocols/progress.py's vocabulary) as text."""
    step, steps = int(data.get("step", 0)), int(data.get("total_steps", 0))
    label = str(data.get("step_name") or stage_name(str(data.get("phase", ""))))
    protocol = data.get("protocol_id", "progress")
    return f"[{protocol} {bar(step, steps, 8)} {step}/{steps} {label}]"


@dataclass
class HumanRequest:
    """A paused run's question (agents/taskflow/human_loop.py): `data-human-input-needed`
    `{callId, question, ...}` or `data-human-confirmation-needed` `{callId, summary, ...}`."""

    kind: str  # "input" or "confirmation"
    data: dict[str, Any]

    def prompt(self) -> str:
        text = self.data.get("question") or self.data.get("summary") or "your answer is needed"
        return f"{text} [y/n]" if self.kind == "confirmation" else str(text)

    def response(self, answer: str) -> dict[str, Any]:
        """The `human_response` body field for the person's answer: the paused call's id; the
        server reads the typed line itself (the details, or yes / no / a correction)."""
        call_id = self.data.get("callId")
        return {"call_id": call_id} if call_id else {}


@dataclass
class PartPrinter:
    """Prints one reply's parts as they stream; remembers what the next message needs."""

    out: TextIO
    err: TextIO
    at_line_start: bool = True
    error: str | None = None
    human: HumanRequest | None = None
    session_id: str | None = None
    text: list[str] = field(default_factory=list)

    def _line(self, text: str) -> None:
        if not self.at_line_start:
            self.out.write("\n")
        self.out.write(f"  {text}\n")
        self.at_line_start = True
        self.out.flush()

    def show(self, part: dict[str, Any]) -> None:
        kind = part.get("type", "")
        data = part.get("data")
        if kind == "text-delta":
            self.out.write(part["delta"])
            self.text.append(part["delta"])
            self.at_line_start = part["delta"].endswith("\n")
            self.out.flush()
        elif kind == "text-end":
            if not self.at_line_start:
                self.out.write("\n")
                self.at_line_start = True
        elif kind == "tool-input-available":
            self._line(f"⚙ {part['toolName']}({_compact(part.get('input', {}))})")
        elif kind == "data-session":
            self.session_id = data.get("sessionId")
        elif kind == "data-protocol-progress":
            self._line(progress_line(data))
        elif kind == "data-retry":
            self._line(
                f"[model busy: retry {data.get('attempt')}/{data.get('max_retries')} "
                f"in {data.get('delay_s')}s ({data.get('reason')})]"
            )
        elif kind == "data-crisis":
            for resource in data.get("resources", []):
                where = " ".join(x for x in (resource.get("phone"), resource.get("url")) if x)
                self._line(f"☎ {resource.get('name')}: {where}")
        elif kind in ("data-human-input-needed", "data-human-confirmation-needed"):
            self.human = HumanRequest(
                "input" if kind.endswith("input-needed") else "confirmation", dict(data or {})
            )
            self._line(f"? {self.human.prompt()}")
        elif kind == "error":
            self.error = part.get("errorText", "the reply failed")
            if not self.at_line_start:
                self.out.write("\n")
                self.at_line_start = True
            self.err.write(f"error: {self.error}\n")
            self.err.flush()


def transcript(events: list[dict[str, Any]]) -> list[str]:
    """A stored session's events as `you:` / `<agent>:` lines, tool calls indented."""
    lines: list[str] = []
    for event in events:
        author = event.get("author", "?")
        for part in (event.get("content") or {}).get("parts", []):
            if part.get("text") and not part.get("thought"):
                who = "you" if author == "user" else author
                lines.append(f"{who}: {part['text']}")
            elif part.get("functionCall"):
                call = part["functionCall"]
                lines.append(f"  ⚙ {call['name']}({_compact(call.get('args', {}))})")
    return lines
