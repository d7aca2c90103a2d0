"""Driving the taskflow app through the chat API as a client does (test code only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from tests.support.sse import of_type, parse_frames, streamed_text

APP = "taskflow"
REQUEST = "Please add a task: refactor the billing module, due friday #billing"
DETAILS = "2026-11-27 it's about splitting invoice generation out of the billing module"
INPUT_NEEDED = "data-human-input-needed"
CONFIRMATION_NEEDED = "data-human-confirmation-needed"


@dataclass
class Turn:
    status: int
    parts: list[dict[str, Any]]
    done: bool
    body: str

    @property
    def text(self) -> str:
        return streamed_text(self.parts)

    def one(self, kind: str) -> dict[str, Any]:
        found = of_type(self.parts, kind)
        assert len(found) == 1, f"expected one {kind}, got {found}; parts: {self.parts}"
        return found[0]["data"]

    def kinds(self) -> list[str]:
        return [p["type"] for p in self.parts]

    def tools(self) -> list[str]:
        return [p["toolName"] for p in of_type(self.parts, "tool-input-available")]

    def outputs(self) -> list[Any]:
        return [p["output"] for p in of_type(self.parts, "tool-output-available")]


def body(session_id: str, message: str, **human: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"app": APP, "session_id": session_id, "message": message}
    if human:
        payload["human_response"] = human
    return payload


def as_turn(response: httpx.Response) -> Turn:
    if response.status_code != 200:
        return Turn(response.status_code, [], False, response.text)
    parts, done = parse_frames(response.text)
    return Turn(response.status_code, parts, done, response.text)


async def send(
    client: httpx.AsyncClient, user: str, session_id: str, message: str, **human: Any
) -> Turn:
    response = await client.post(
        "/v1/chat", json=body(session_id, message, **human), headers={"X-User-Id": user}
    )
    return as_turn(response)
