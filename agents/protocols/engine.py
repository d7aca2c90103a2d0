"""The protocol engine: the state machine of one skill's protocols, on the turn's profile draft.

State lives in the profile, so a protocol survives sessions and devices:

    skills.{skill}.protocol                  the active protocol (at most one per skill)
        {id, step, total_steps, started_at, updated_at, data: {step_n: {...}},
         summaries: {step_n: str}, completed, completed_at?}
    skills.{skill}.paused_protocols.{id}     protocols set aside when another one started
    skills.{skill}.reports.{id}              the Markdown report of the last completed run

Answers to the seed's open questions:
- Timeout: a protocol untouched for longer than `timeout_s` (default 1 hour) is
  `awaiting_confirmation`: the agent asks the user, and only `resume` (or cancel) moves it on.
- Several protocols: one active per skill. Starting another pauses the active one; starting a
  paused one resumes it at the step where it stopped (the result says `resumed: true`).
- Completion: the last step stores a Markdown report, downloadable through
  `GET /v1/me/reports/{skill}/{protocol_id}`, and the collected data stays in the profile.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from jsonschema import Draft202012Validator

from agents.protocols.model import ProtocolSpec
from agents.protocols.progress import progress_payload
from confidant.profiles.ops import MergeOp, SetOp
from confidant.profiles.rules import MAX_REPORT_CHARS, ProfileRuleError, check_value

ACTIVE = "protocol"
PAUSED = "paused_protocols"
REPORTS = "reports"
DEFAULT_TIMEOUT_S = 3600.0
MAX_SUMMARY_CHARS = 500
# A protocol in use is stamped at most this often (a fraction of the timeout), not every turn.
TOUCH_FRACTION = 0.25


class Status(StrEnum):
    NONE = "none"
    ACTIVE = "active"
    AWAITING_CONFIRMATION = "awaiting_confirmation"
    COMPLETED = "completed"


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat()


def _ts(value: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        return None


def error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"status": "error", "error": {"code": code, "message": message, **extra}}


@dataclass
class ProtocolRunner:
    """One skill's protocols for one turn. Writes are buffered on the draft (committed with the
    turn); every method returns a tool-style result dict."""

    draft: Any  # confidant.profiles.ProfileDraft
    skill_id: str
    protocols: Mapping[str, ProtocolSpec]
    timeout_s: float = DEFAULT_TIMEOUT_S
    clock: Callable[[], float] = time.time

    # -- reading ------------------------------------------------------------------------------

    def state(self) -> dict[str, Any] | None:
        value = self.draft.skill(self.skill_id).get(ACTIVE)
        return value if isinstance(value, dict) and value.get("id") in self.protocols else None

    def paused(self) -> dict[str, Any]:
        value = self.draft.skill(self.skill_id).get(PAUSED)
        return value if isinstance(value, dict) else {}

    def spec(self) -> ProtocolSpec | None:
        state = self.state()
        return self.protocols[state["id"]] if state else None

    def status(self) -> Status:
        state = self.state()
        if state is None:
            return Status.NONE
        if state.get("completed"):
            return Status.COMPLETED
        last = _ts(state.get("updated_at"))
        if last is not None and self.clock() - last > self.timeout_s:
            return Status.AWAITING_CONFIRMATION
        return Status.ACTIVE

    def progress(self, phase: str | None = None) -> dict[str, Any] | None:
        state, spec = self.state(), self.spec()
        if state is None or spec is None:
            return None
        status = self.status()
        if status is Status.COMPLETED:
            last = spec.step(spec.total_steps)
            return progress_payload(
                spec.id,
                step=spec.total_steps,
                total_steps=spec.total_steps,
                phase="completed",
                done=spec.total_steps,
                step_name=last.name,
            )
        step = spec.step(int(state["step"]))
        if phase is None:
            phase = status.value if status is Status.AWAITING_CONFIRMATION else step.phase
        return progress_payload(
            spec.id,
            step=int(state["step"]),
            total_steps=spec.total_steps,
            phase=phase,
            done=int(state["step"]) - 1,
            step_name=step.name,
        )

    # -- writing ------------------------------------------------------------------------------

    def _write(self, *ops: Any) -> None:
        self.draft.write_skill(self.skill_id, list(ops))

    def start(self, protocol_id: str) -> dict[str, Any]:
        spec = self.protocols.get(protocol_id)
        if spec is None:
            return error(
                "unknown_protocol",
                f"no protocol {protocol_id!r} in skill {self.skill_id}",
                available=sorted(self.protocols),
            )
        now = _iso(self.clock())
        current = self.state()
        ops: list[Any] = []
        if current is not None and current["id"] == protocol_id and not current.get("completed"):
            ops.append(SetOp((ACTIVE, "updated_at"), now))
            self._write(*ops)
            return self._ok("already_active", resumed=True)
        if current is not None and not current.get("completed"):
            ops.append(SetOp((PAUSED, current["id"]), current))  # set aside, not lost
        paused = self.paused().get(protocol_id)
        if isinstance(paused, dict):
            state = {**paused, "updated_at": now}
            ops.append(SetOp((PAUSED, protocol_id), None))
        else:
            state = {
                "id": spec.id,
                "step": 1,
                "total_steps": spec.total_steps,
                "started_at": now,
                "updated_at": now,
                "data": {},
                "summaries": {},
                "completed": False,
            }
        ops.append(SetOp((ACTIVE,), state))
        self._write(*ops)
        return self._ok(
            "started",
            resumed=isinstance(paused, dict),
            paused=current["id"] if current and not current.get("completed") else None,
        )

    def resume(self) -> dict[str, Any]:
        """The user confirmed they want to go on after a timeout."""
        if self.status() not in (Status.ACTIVE, Status.AWAITING_CONFIRMATION):
            return error("no_active_protocol", "there is no protocol in progress to resume")
        self._write(SetOp((ACTIVE, "updated_at"), _iso(self.clock())))
        return self._ok("resumed", resumed=True)

    def touch(self) -> bool:
        """Stamp an active protocol as in use (so a long conversation never times out)."""
        state = self.state()
        if self.status() is not Status.ACTIVE or state is None:
            return False
        last = _ts(state.get("updated_at")) or 0.0
        if self.clock() - last < self.timeout_s * TOUCH_FRACTION:
            return False
        self._write(SetOp((ACTIVE, "updated_at"), _iso(self.clock())))
        return True

    def advance(self, step_data: Any, step_summary: Any) -> dict[str, Any]:
        status = self.status()
        if status is Status.AWAITING_CONFIRMATION:
            return error(
                "confirmation_needed",
                "the user was away; ask whether to continue, then call resume_protocol",
            )
        state, spec = self.state(), self.spec()
        if status is not Status.ACTIVE or state is None or spec is None:
            return error("no_active_protocol", "no protocol is in progress; start one first")
        number = int(state["step"])
        step = spec.step(number)
        if not isinstance(step_data, dict):
            return error("invalid_step_data", "`step_data` must be an object", schema=step.schema_)
        problems = [
            {"path": "/".join(str(p) for p in e.absolute_path) or "(root)", "message": e.message}
            for e in Draft202012Validator(step.schema_).iter_errors(step_data)
        ]
        if problems:
            return error(
                "invalid_step_data",
                f"step {number} ({step.name}) needs data matching its schema",
                problems=problems,
                schema=step.schema_,
            )
        try:
            check_value(step_data, field="step_data")
        except ProfileRuleError as exc:
            return exc.to_result()
        summary = str(step_summary or "").strip()[:MAX_SUMMARY_CHARS]
        now = self.clock()
        key = f"step_{number}"
        ops: list[Any] = [
            SetOp((ACTIVE, "data", key), step_data),
            SetOp((ACTIVE, "summaries", key), summary),
            SetOp((ACTIVE, "updated_at"), _iso(now)),
        ]
        if step.save_to:
            ops.append(MergeOp((step.save_to,), step_data))  # the result outlives the protocol
        if number < spec.total_steps:
            ops.append(SetOp((ACTIVE, "step"), number + 1))
            self._write(*ops)
            return self._ok("advanced", finished_step=number)
        ops += [SetOp((ACTIVE, "completed"), True), SetOp((ACTIVE, "completed_at"), _iso(now))]
        self._write(*ops)
        final = self.state() or {}
        report = render_report(spec, final)[:MAX_REPORT_CHARS]
        self._write(
            SetOp(
                (REPORTS, spec.id),
                {
                    "title": spec.title,
                    "completed_at": _iso(now),
                    "markdown": report,
                },
            )
        )
        return self._ok("completed", summary=completion_summary(spec, final))

    def cancel(self, reason: Any) -> dict[str, Any]:
        state = self.state()
        if state is None or state.get("completed"):
            return error("no_active_protocol", "no protocol is in progress")
        progress = self.progress(phase="cancelled")
        self._write(SetOp((ACTIVE,), None))
        return {
            "status": "ok",
            "result": "cancelled",
            "protocol_id": state["id"],
            "reason": str(reason or "")[:MAX_SUMMARY_CHARS],
            "progress": progress,
        }

    def _ok(self, result: str, **extra: Any) -> dict[str, Any]:
        spec, state = self.spec(), self.state()
        out: dict[str, Any] = {"status": "ok", "result": result, "progress": self.progress()}
        if spec is not None and state is not None and not state.get("completed"):
            step = spec.step(int(state["step"]))
            out["current_step"] = {
                "number": int(state["step"]),
                "name": step.name,
                "goal": step.goal,
                "question": step.question,
                "schema": step.schema_,
            }
        return out | {k: v for k, v in extra.items() if v is not None}

    # -- the routing layer's prompt -----------------------------------------------------------

    def prompt(self) -> str:
        """The protocol part of the instruction (marker lines first, for parsers and tests)."""
        status = self.status()
        lines = [f"PROTOCOL_STATUS: {status.value}"]
        available = "; ".join(
            f"{p.id} ({p.title}, {p.estimated_time})" for p in self.protocols.values()
        )
        if available:
            lines.append(f"AVAILABLE_PROTOCOLS: {available}")
        paused = [pid for pid in self.paused() if pid in self.protocols]
        if paused:
            lines.append(f"PAUSED_PROTOCOLS: {', '.join(paused)}")
        state, spec = self.state(), self.spec()
        if status is Status.NONE or state is None or spec is None:
            if self.protocols:
                lines.append(
                    "No protocol is running. When a user would benefit from one, call "
                    "show_protocol_invitation; when they accept, call start_protocol."
                )
            return "\n".join(lines)
        if status is Status.COMPLETED:
            lines.append(f"PROTOCOL_ID: {spec.id}")
            lines.append(
                f"The user completed {spec.title}. Build on its results; offer another protocol "
                "only if it fits."
            )
            return "\n".join(lines)
        number = int(state["step"])
        step = spec.step(number)
        lines += [
            f"PROTOCOL_ID: {spec.id}",
            f"PROTOCOL_STEP: {number}/{spec.total_steps}",
            f"PROTOCOL_STEP_NAME: {step.name}",
            f"PROTOCOL_STEP_QUESTION: {step.question}",
            f"PROTOCOL_STEP_SCHEMA: {_compact(step.schema_)}",
        ]
        if status is Status.AWAITING_CONFIRMATION:
            lines.append(
                f"The user was away for a while during {spec.title} (step {number}: {step.name}). "
                "Before anything else, ask whether they want to continue. If they do, call "
                "resume_protocol; if not, call cancel_protocol. Do not advance the step now."
            )
            return "\n".join(lines)
        done = [
            f"- step {n} ({spec.step(n).name}): {state.get('summaries', {}).get(f'step_{n}', '')}"
            for n in range(1, number)
        ]
        lines += [
            f"You are guiding the user through {spec.title}, step {number} of "
            f"{spec.total_steps}: {step.name}.",
            f"Goal of this step: {step.goal}",
            step.prompt.strip(),
            "When the step's data is collected, call advance_protocol_step with step_data "
            "matching PROTOCOL_STEP_SCHEMA and a one-sentence step_summary. If the user wants "
            "to stop, call cancel_protocol.",
        ]
        if done:
            lines += ["Finished steps:", *done]
        return "\n".join(lines)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def completion_summary(spec: ProtocolSpec, state: Mapping[str, Any]) -> str:
    summaries = state.get("summaries") or {}
    parts = [summaries.get(f"step_{n}", "") for n in range(1, spec.total_steps + 1)]
    return " ".join(p for p in parts if p)[: MAX_SUMMARY_CHARS * 2]


def _markdown_value(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(f"  - {_markdown_value(v)}" for v in value).join(["\n", ""])
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_markdown_value(v)}" for k, v in value.items())
    return str(value)


def render_report(spec: ProtocolSpec, state: Mapping[str, Any]) -> str:
    """The Markdown report of a completed run: every step's summary and collected data."""
    data = state.get("data") or {}
    summaries = state.get("summaries") or {}
    lines = [
        f"# {spec.title}",
        "",
        f"Started {state.get('started_at', '')}, completed {state.get('completed_at', '')}.",
        "",
    ]
    for number, step in enumerate(spec.steps, start=1):
        key = f"step_{number}"
        lines += [f"## {number}. {step.name}", ""]
        if summaries.get(key):
            lines += [f"_{summaries[key]}_", ""]
        for field_name, value in (data.get(key) or {}).items():
            lines.append(f"- **{field_name}**: {_markdown_value(value)}")
        lines.append("")
    return "\n".join(lines)
