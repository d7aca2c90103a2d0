"""Locust users for the soak (bench/soak/__main__.py starts locust with one of these classes).

Every task is one whole conversation, sent turn after turn as a client app would (a user waits
for a reply before the next message), with a short think time between turns:

- `ConfidantMixed`: the four apps on our `/v1/chat` — onemind short (2 turns) and long (the
  four-stage walk and then 11 more turns in the same session), relationship, lifecoach, taskflow
  (request → answer the critic's question → correct the classification → approve the summary,
  each pause resumed with its `human_response`), and a session list now and then;
- `ConfidantOnemind` and `AdkOnemind`: the same onemind conversations on our server and on ADK's
  api_server (`POST /apps/onemind/users/{u}/sessions`, then `POST /run_sse` per turn), for the
  like-for-like comparison.

A request fails when its status is not 200, when our stream lacks `data: [DONE]` or carries an
`error` part, when ADK's stream carries an `error` frame, or when an expected pause is missing.
Environment: SOAK_TOKENS (a JSON list of Firebase ID tokens, one per simulated user; ours),
SOAK_THINK_S (seconds between turns).
"""

from __future__ import annotations

import itertools
import json
import os
import uuid
from typing import Any

from locust import FastHttpUser, constant, task

TOKENS: list[str] = json.loads(os.environ.get("SOAK_TOKENS", "[]") or "[]")
THINK_S = float(os.environ.get("SOAK_THINK_S", "0.1"))
_next_user = itertools.count()

ONEMIND_WALK = (
    "I want to finish my thesis but I keep putting it off because it never feels good enough.",
    "Yes, part of me is terrified of being judged as not perfect.",
    "Both parts want my work to matter.",
    "I will write one messy paragraph after breakfast.",
    "I learned that starting small feels safe.",
)
ONEMIND_MORE = "Today I wrote the paragraph and it felt lighter than I expected."
LONG_EXTRA_TURNS = 11
RELATIONSHIP = "Why did Sam go quiet after our dinner, and what should I do?"
LIFECOACH = ("I want to set a north star for this year", "Mostly: ship one thing I am proud of.")
TASKFLOW_REQUEST = "Please add a task: refactor the billing module, due friday #billing"
TASKFLOW_DETAILS = "2026-11-27 it's about splitting invoice generation out of the billing module"


class TurnFailed(Exception):
    pass


def sse_parts(body: str) -> tuple[list[dict[str, Any]], bool]:
    """The JSON parts of an SSE body and whether it ended with `data: [DONE]`."""
    parts, done = [], False
    for frame in body.split("\n\n"):
        frame = frame.strip()
        if not frame.startswith("data: "):
            continue
        payload = frame[len("data: ") :]
        if payload == "[DONE]":
            done = True
        else:
            parts.append(json.loads(payload))
    return parts, done


class ConfidantUser(FastHttpUser):
    abstract = True
    wait_time = constant(THINK_S)

    def on_start(self) -> None:
        self.token = TOKENS[next(_next_user) % len(TOKENS)]

    def chat(self, name: str, session_id: str, message: str, **fields: Any) -> list[dict]:
        """One turn; the parts of its stream."""
        body = {"session_id": session_id, "message": message, **fields}
        # The stream, as useChat reads it (locust's client asks for JSON by default).
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "text/event-stream"}
        with self.client.post(
            "/v1/chat", json=body, headers=headers, name=name, catch_response=True
        ) as response:
            if response.status_code != 200:
                response.failure(f"{response.status_code}: {(response.text or '')[:200]}")
                raise TurnFailed(name)
            parts, done = sse_parts(response.text or "")
            errors = [p for p in parts if p.get("type") == "error"]
            if errors or not done:
                response.failure(f"error part {errors[:1]} or no [DONE]")
                raise TurnFailed(name)
        return parts

    @staticmethod
    def paused(parts: list[dict], kind: str) -> dict:
        found = [p["data"] for p in parts if p.get("type") == kind]
        if len(found) != 1:
            raise TurnFailed(f"expected one {kind}, got {len(found)}")
        return found[0]

    def think(self) -> None:
        self.wait()

    def onemind(self, turns: int, name: str) -> None:
        session = f"om-{uuid.uuid4().hex[:12]}"
        messages = [*ONEMIND_WALK, *[ONEMIND_MORE] * LONG_EXTRA_TURNS][:turns]
        for message in messages:
            self.chat(name, session, message, app="onemind")
            self.think()

    def converse(self, conversation) -> None:  # type: ignore[no-untyped-def]
        try:
            conversation()
        except TurnFailed:
            pass  # reported as a failed request; the next conversation starts afresh


class ConfidantOnemind(ConfidantUser):
    @task(3)
    def onemind_short(self) -> None:
        self.converse(lambda: self.onemind(2, "chat onemind (short session)"))

    @task(1)
    def onemind_long(self) -> None:
        name = "chat onemind (long session)"
        self.converse(lambda: self.onemind(len(ONEMIND_WALK) + LONG_EXTRA_TURNS, name))


class ConfidantMixed(ConfidantOnemind):
    @task(2)
    def relationship(self) -> None:
        def conversation() -> None:
            session = f"rel-{uuid.uuid4().hex[:12]}"
            self.chat("chat relationship", session, RELATIONSHIP, app="relationship")

        self.converse(conversation)

    @task(2)
    def lifecoach(self) -> None:
        def conversation() -> None:
            session = f"lc-{uuid.uuid4().hex[:12]}"
            for message in LIFECOACH:
                self.chat("chat lifecoach", session, message, app="lifecoach", skill="lifecoach")
                self.think()

        self.converse(conversation)

    @task(1)
    def taskflow(self) -> None:
        def conversation() -> None:
            session = f"tf-{uuid.uuid4().hex[:12]}"

            def send(message: str, name: str, **human: Any) -> list[dict]:
                fields: dict[str, Any] = {"app": "taskflow"}
                if human:
                    fields["human_response"] = human
                parts = self.chat(f"chat taskflow ({name})", session, message, **fields)
                self.think()
                return parts

            asked = self.paused(send(TASKFLOW_REQUEST, "request"), "data-human-input-needed")
            send(TASKFLOW_DETAILS, "answer", call_id=asked["callId"])
            send("priority should be high", "correct", approved=False)
            final = self.paused(send("yes", "confirm"), "data-human-confirmation-needed")
            done = send("approve", "approve", approved=True, call_id=final["callId"])
            if not any(p.get("type") == "finish" for p in done):
                raise TurnFailed("taskflow did not finish")

        self.converse(conversation)

    @task(1)
    def list_sessions(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        self.client.get("/v1/sessions?app=onemind", headers=headers, name="list sessions")


class AdkOnemind(FastHttpUser):
    wait_time = constant(THINK_S)

    def on_start(self) -> None:
        self.user_id = f"adk-{next(_next_user)}-{uuid.uuid4().hex[:6]}"

    def onemind(self, turns: int, name: str) -> None:
        session = f"om-{uuid.uuid4().hex[:12]}"
        path = f"/apps/onemind/users/{self.user_id}/sessions"
        created = self.client.post(path, json={"sessionId": session}, name="create session")
        if created.status_code != 200:
            return
        messages = [*ONEMIND_WALK, *[ONEMIND_MORE] * LONG_EXTRA_TURNS][:turns]
        for message in messages:
            body = {
                "appName": "onemind",
                "userId": self.user_id,
                "sessionId": session,
                "newMessage": {"role": "user", "parts": [{"text": message}]},
                "streaming": False,
            }
            with self.client.post(
                "/run_sse", json=body, name=name, catch_response=True
            ) as response:
                if response.status_code != 200:
                    response.failure(f"{response.status_code}: {(response.text or '')[:200]}")
                    return
                parts, _ = sse_parts(response.text or "")
                if not parts or any("error" in p for p in parts):
                    response.failure(f"error frame or empty stream: {parts[:1]}")
                    return
            self.wait()

    @task(3)
    def onemind_short(self) -> None:
        self.onemind(2, "chat onemind (short session)")

    @task(1)
    def onemind_long(self) -> None:
        self.onemind(len(ONEMIND_WALK) + LONG_EXTRA_TURNS, "chat onemind (long session)")
