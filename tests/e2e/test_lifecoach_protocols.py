"""Both protocols end to end through the real server and the HTTP stream, with the offline
model: invitation, steps, interruption, the timeout confirmation, resume in a new session,
completion and the Markdown report."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore

from tests.conftest import TEST_PROJECT
from tests.e2e.conftest import leave_mid_reply, start_local_server, stop_server
from tests.support.sse import of_type, parse_frames, streamed_text

TIMEOUT_S = 5  # the server's protocol timeout in these tests


class Chat:
    def __init__(self, client: httpx.Client, headers: dict[str, str]) -> None:
        self.client, self.headers = client, headers

    def say(self, session_id: str, message: str, **extra: Any) -> list[dict[str, Any]]:
        body = {"app": "lifecoach", "session_id": session_id, "message": message, **extra}
        response = self.client.post("/v1/chat", json=body, headers=self.headers)
        assert response.status_code == 200, response.text
        parts, done = parse_frames(response.text)
        assert done and parts[-1]["type"] == "finish", parts
        return parts


def _progress(parts: list[dict[str, Any]]) -> list[tuple[int, str]]:
    progress = of_type(parts, "data-protocol-progress")
    return [(p["data"]["step"], p["data"]["phase"]) for p in progress]


def test_dankoe_on_firestore_with_a_timeout_confirmation_in_a_new_session(
    cloud_server, token_issuer
) -> None:
    server = cloud_server(CONFIDANT_PROTOCOL_TIMEOUT_S=str(TIMEOUT_S))
    uid = f"coach-{uuid.uuid4().hex[:8]}"
    headers = {"Authorization": f"Bearer {token_issuer.issue(uid)}"}
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        chat = Chat(client, headers)
        invite = chat.say("morning", "I need the dankoe reset, my life feels stuck")
        [card] = of_type(invite, "data-protocol-invitation")
        assert card["data"]["title"] == "One-day life reset"
        assert card["data"]["estimated_time"].startswith("about 45 minutes")
        started = chat.say("morning", "yes, let's start")
        assert _progress(started) == [(1, "morning")]
        assert "What is the dull, persistent dissatisfaction" in streamed_text(started)
        assert _progress(chat.say("morning", "my job feels pointless")) == [
            (1, "morning"),
            (2, "morning"),
        ]
        assert _progress(chat.say("morning", "the same grey office in five years"))[-1] == (
            3,
            "morning",
        )

        time.sleep(TIMEOUT_S + 1)  # the user went away; they come back in a new session
        back = chat.say("evening", "hi again")
        assert _progress(back) == [(3, "awaiting_confirmation")]
        assert "continue" in streamed_text(back)
        assert not of_type(back, "tool-input-available")  # nothing moves before they confirm
        confirmed = chat.say("evening", "yes, continue")
        assert [p["toolName"] for p in of_type(confirmed, "tool-input-available")] == [
            "resume_protocol"
        ]
        assert _progress(confirmed)[-1] == (3, "morning")
        for answer in (
            "a small studio of my own",
            "I avoided the call with my manager",
            "fear of being judged",
        ):
            chat.say("evening", answer)
        done = chat.say("evening", "ship the app by June")
        assert _progress(done)[-1] == (6, "completed")
        [completed] = of_type(done, "data-protocol-completed")
        assert "fear of being judged" in completed["data"]["summary"]

        report = client.get(completed["data"]["report_url"], headers=headers)
        assert report.status_code == 200 and "## 3. Vision" in report.text
        assert "a small studio of my own" in report.text
        profile = client.get("/v1/me/profile", headers=headers).json()["profile"]
        coach = profile["skills"]["lifecoach"]
        assert coach["north_star"] == {
            "anti_vision": "the same grey office in five years",
            "vision": "a small studio of my own",
        }
        assert coach["goals"]["one_year_goal"] == "ship the app by June"

    # The profile is the user document itself (one read per turn).
    stored = (
        firestore.Client(project=TEST_PROJECT, credentials=AnonymousCredentials())
        .collection("users")
        .document(uid)
        .get()
    )
    assert stored.to_dict()["skills"]["lifecoach"]["protocol"]["completed"] is True


def test_weekly_review_survives_a_client_that_leaves_and_resumes_elsewhere(tmp_path) -> None:
    server = start_local_server(tmp_path / "coach.db", CONFIDANT_OFFLINE_CHUNK_DELAY_MS="150")
    headers = {"X-User-Id": "reviewer"}
    try:
        with httpx.Client(base_url=server.base_url, timeout=60) as client:
            chat = Chat(client, headers)
            chat.say("fri", "time for my weekly review")
            started = chat.say(
                "fri", "Start", protocol_action={"protocol_id": "weekly_review", "action": "start"}
            )
            assert _progress(started) == [(1, "look_back")]
            # Interruption: the client hangs up while the reply to step 1 is streaming.
            body = {"app": "lifecoach", "session_id": "fri", "message": "I shipped the beta"}
            leave_mid_reply(client, body, headers, "/v1/sessions/fri?app=lifecoach")
            # The turn finished without the client: step 1 is saved; a new session resumes at 2.
            resumed = chat.say("sat", "ask for help sooner")
            assert _progress(resumed) == [(2, "look_back"), (3, "look_ahead")]

            # Another protocol pauses this one; starting it again resumes where it stopped.
            chat.say("sat", "Start", protocol_action={"protocol_id": "dankoe", "action": "start"})
            profile = client.get("/v1/me/profile", headers=headers).json()["profile"]
            coach = profile["skills"]["lifecoach"]
            assert coach["protocol"]["id"] == "dankoe"
            assert coach["paused_protocols"]["weekly_review"]["step"] == 3
            back = chat.say(
                "sat", "Start", protocol_action={"protocol_id": "weekly_review", "action": "start"}
            )
            assert _progress(back) == [(3, "look_ahead")]
            chat.say("sat", "health")
            done = chat.say("sat", "run on Monday at 8")
            assert _progress(done)[-1] == (4, "completed")
            report = client.get("/v1/me/reports/lifecoach/weekly_review", headers=headers)
            assert "I shipped the beta" in report.text and "run on Monday at 8" in report.text
    finally:
        stop_server(server)
