"""What a crisis turn leaves in the session, and how the next turn's instruction uses it.

The guard writes `CRISIS_STATE_KEY` through the reply event's state delta, so it commits with
the turn. Any app renders `check_in_section(state)` into its instruction: while the flag is
set the model is told to check in first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from agents.safety.resources import crisis_payload

# Session state key: {"at": ISO time, "signals": [...], "locale": str, "source": str, "count": n}
CRISIS_STATE_KEY = "crisis"

CHECK_IN_HEADER = "# CHECK IN FIRST"
CHECK_IN_TEMPLATE = """\
{header}
The user was in crisis in this session at {at} (signals: {signals}) and was given the crisis
helplines. Check in first: before anything else, ask gently how they are now, in one or two
warm sentences, and do not push the protocol. If they say they are still in danger, encourage
them to call the helplines or emergency services now."""


def crisis_flag(
    *,
    signals: Sequence[str],
    locale: str,
    source: str,
    previous: object = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The state value a crisis turn stores (counting earlier crisis turns of the session)."""
    count = previous.get("count", 1) if isinstance(previous, Mapping) else 0
    return {
        "at": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
        "signals": list(signals),
        "locale": locale,
        "source": source,
        "count": int(count) + 1 if isinstance(count, int) else 1,
    }


def check_in_section(state: Mapping[str, Any]) -> str | None:
    """The instruction section for a session that had a crisis turn; None when it had none."""
    flag = state.get(CRISIS_STATE_KEY)
    if not isinstance(flag, Mapping) or not flag.get("at"):
        return None
    signals = ", ".join(str(s) for s in flag.get("signals") or []) or "unspecified"
    return CHECK_IN_TEMPLATE.format(header=CHECK_IN_HEADER, at=flag["at"], signals=signals)


def crisis_part(state_delta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The `data-crisis` part's data when an event's state delta records a crisis turn."""
    flag = state_delta.get(CRISIS_STATE_KEY)
    if not isinstance(flag, Mapping):
        return None
    return crisis_payload(flag.get("locale"), list(flag.get("signals") or []))
