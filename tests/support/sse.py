"""Reading the AI SDK UI message stream as a client does."""

from __future__ import annotations

import json
from typing import Any


def parse_frames(body: str) -> tuple[list[dict[str, Any]], bool]:
    """The parts of an SSE body, and whether it ended with `data: [DONE]`."""
    parts: list[dict[str, Any]] = []
    done = False
    for frame in body.split("\n\n"):
        frame = frame.strip()
        if not frame:
            continue
        assert frame.startswith("data: "), f"not an SSE data frame: {frame!r}"
        payload = frame[len("data: ") :]
        if payload == "[DONE]":
            done = True
            continue
        assert not done, "a part arrived after [DONE]"
        parts.append(json.loads(payload))
    return parts, done


def streamed_text(parts: list[dict[str, Any]]) -> str:
    return "".join(p["delta"] for p in parts if p["type"] == "text-delta")


def of_type(parts: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [p for p in parts if p["type"] == kind]
