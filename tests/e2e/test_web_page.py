"""The web chat page in real headless chromium, against the real local server.

`confidant-local` serves the built page at `/`; Playwright drives Debian's chromium through it
as a person would: type, send, watch the reply stream, reload, answer a taskflow pause. Parts
the test cannot make the server emit on demand (crisis resources beside a retry notice, the
emotion endpoint) are checked against a small stream in the wire format served by Playwright's
routing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import REPO, Server, start_local_server, stop_server
from tests.support.browser import chromium
from tests.support.taskflow import DETAILS, REQUEST

# Screenshots refresh docs/web only when asked (`make screenshots`), so a test run leaves the
# work tree clean.
DOCS = (
    REPO / "docs" / "web"
    if os.environ.get("CONFIDANT_DOCS_SCREENSHOTS")
    else Path(tempfile.mkdtemp(prefix="confidant-shots-"))
)
# The English onemind walk of tests/unit/agents/test_onemind_flow.py: four stages and a crystal.
WALK = [
    (
        "I want to finish my thesis but I keep putting it off because it never feels good enough.",
        "awareness",
    ),
    ("Yes, part of me is terrified of being judged as not perfect.", "integration"),
    ("Both parts want my work to matter.", "micro-action"),
    ("I will write one messy paragraph after breakfast.", "solidification"),
    ("I learned that starting small feels safe.", "solidification"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:  # type: ignore[no-untyped-def]
    running = start_local_server(tmp_path_factory.mktemp("web") / "local.db")
    yield running
    stop_server(running)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as context:
        yield context


@pytest.fixture
def page(browser) -> Iterator[object]:  # type: ignore[no-untyped-def]
    page = browser.new_page()  # type: ignore[attr-defined]
    yield page
    page.close()


def send(page, text: str) -> None:  # type: ignore[no-untyped-def]
    replies = page.locator(".message.assistant").count()
    page.get_by_test_id("composer").fill(text)
    page.get_by_test_id("send").click()
    page.locator(".message.assistant").nth(replies).wait_for(timeout=20_000)
    page.get_by_role("button", name="Send").wait_for(timeout=20_000)  # "Answering…" is over


def send_and_see_the_reply_begin(page, text: str) -> None:  # type: ignore[no-untyped-def]
    page.get_by_test_id("composer").fill(text)
    page.get_by_test_id("send").click()
    page.wait_for_function(
        "document.querySelector('.message.assistant')?.innerText.trim().length > 0",
        timeout=20_000,
    )


def see_the_whole_stored_reply(page, server: Server, session_id: str, headers: dict) -> None:  # type: ignore[no-untyped-def]
    """Once the turn has ended on the server, the page shows its whole stored reply, once."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the turn goes on on the server
        session = httpx.get(
            f"{server.base_url}/v1/sessions/{session_id}",
            params={"app": "onemind"},
            headers=headers,
        ).json()
        if not session["session"]["busy"] and session["events"]:
            break
        time.sleep(0.3)
    reply = " ".join(
        part.get("text", "")
        for event in session["events"]
        if event["author"] != "user"
        for part in (event.get("content") or {}).get("parts", [])
    ).split()
    page.wait_for_function(
        "expected => [...document.querySelectorAll('.message.assistant')].some("
        "m => m.innerText.split(/\\s+/).join(' ').includes(expected))",
        arg=" ".join(reply[-6:]),
        timeout=20_000,
    )
    assert page.locator(".message.assistant").count() == 1
    assert " ".join(reply) in " ".join(page.locator(".message.assistant").inner_text().split())


def open_session(page, server: Server, session: str, user: str) -> None:  # type: ignore[no-untyped-def]
    page.add_init_script(f"localStorage.setItem('confidant.user', {json.dumps(user)})")
    page.goto(f"{server.base_url}/#app=onemind&session={session}")
    page.get_by_test_id("app-picker").wait_for()
    page.wait_for_function("document.querySelector('[data-testid=app-picker]').value")


def test_a_whole_onemind_conversation_then_a_reload_restores_it(page, server) -> None:  # type: ignore[no-untyped-def]
    open_session(page, server, "walk", "web-walker")
    assert page.get_by_test_id("app-picker").input_value() == "onemind"
    assert page.get_by_test_id("emotion-chart").count() == 0  # no emotions endpoint: hidden

    for number, (message, stage) in enumerate(WALK, start=1):
        send(page, message)
        assert page.locator(".message.user").count() == number
        if number == 1:  # the first reply moves no stage yet
            assert page.get_by_test_id("progress").count() == 0
            page.screenshot(path=str(DOCS / "first-reply.png"))
        else:
            assert stage in page.get_by_test_id("progress").inner_text().lower()
    replies = page.locator(".message.assistant")
    assert "thesis" in replies.nth(0).inner_text()  # the reflection quotes the user's words
    assert "integration crystal" in replies.last.inner_text()
    calls = page.get_by_test_id("tool-call")
    names = [calls.nth(i).locator("summary").inner_text() for i in range(calls.count())]
    assert any("advance_stage" in n for n in names)
    assert any("save_crystal" in n for n in names)
    assert calls.first.get_attribute("open") is None  # folded until clicked
    calls.last.locator("summary").click()
    assert calls.last.get_attribute("open") is not None
    assert "(4/4)" in page.get_by_test_id("progress").inner_text()
    page.screenshot(path=str(DOCS / "onemind-walk.png"))

    page.reload()
    page.locator(".message.user").nth(4).wait_for(timeout=10_000)
    assert page.locator(".message.user").count() == len(WALK)
    assert "integration crystal" in page.locator(".message.assistant").last.inner_text()
    assert "solidification" in page.get_by_test_id("progress").inner_text().lower()
    assert page.get_by_test_id("tool-call").count() == len(names)
    assert page.get_by_test_id("sessions").locator("li.current").count() == 1


def test_a_crisis_message_gets_the_hotline(page, server) -> None:  # type: ignore[no-untyped-def]
    open_session(page, server, "crisis", "web-crisis")
    send(page, "I want to kill myself")
    reply = page.locator(".message.assistant").last.inner_text()
    assert "988" in reply
    # When the server adds the data-crisis part (issue 6), its resources become call buttons.
    if page.get_by_test_id("crisis").count():
        assert page.locator("a.call[href^='tel:']").count() >= 1
    page.screenshot(path=str(DOCS / "crisis.png"))


def test_a_second_message_while_answering_shows_still_answering(page, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Slow chunks keep the first turn answering for seconds, however loaded the machine is.
    slow = start_local_server(tmp_path / "local.db", CONFIDANT_OFFLINE_CHUNK_DELAY_MS="1500")
    started = threading.Event()

    def first_turn() -> None:
        body = {"app": "onemind", "session_id": "busy", "message": "I keep avoiding my inbox"}
        headers = {"X-User-Id": "web-busy"}
        with httpx.stream(
            "POST", f"{slow.base_url}/v1/chat", json=body, headers=headers, timeout=30
        ) as response:
            for line in response.iter_lines():
                if "text-delta" in line:
                    started.set()

    other_tab = threading.Thread(target=first_turn)
    try:
        open_session(page, slow, "busy", "web-busy")
        other_tab.start()
        assert started.wait(20)
        page.get_by_test_id("composer").fill("Are you there?")
        page.get_by_test_id("send").click()
        notice = page.get_by_test_id("error")
        notice.wait_for(timeout=10_000)
        assert "Still answering" in notice.inner_text()
        # Nothing was saved: the message is back in the composer, not in the conversation.
        assert page.get_by_test_id("composer").input_value() == "Are you there?"
        assert page.locator(".message.user").count() == 0
        page.screenshot(path=str(DOCS / "still-answering.png"))
    finally:
        if other_tab.is_alive():
            other_tab.join(30)
        stop_server(slow)


def test_a_reload_mid_reply_follows_the_reply_to_its_end(page, tmp_path) -> None:  # type: ignore[no-untyped-def]
    slow = start_local_server(tmp_path / "local.db", CONFIDANT_OFFLINE_CHUNK_DELAY_MS="400")
    headers = {"X-User-Id": "web-reload"}
    try:
        open_session(page, slow, "reload", "web-reload")
        send_and_see_the_reply_begin(page, "I keep avoiding my inbox")
        page.reload()  # mid-reply: the page loses its stream; the turn goes on on the server
        page.get_by_test_id("app-picker").wait_for()
        # The reloaded page resumed the reply (GET /v1/chat/{id}/stream) and shows all of it.
        see_the_whole_stored_reply(page, slow, "reload", headers)
    finally:
        stop_server(slow)


class CuttingProxy:
    """Forwards every connection to `upstream` byte for byte, except that it drops the first
    chat reply's connection right after its first text: the network failing mid-reply."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.cut = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            chat = threading.Event()  # this connection carries a POST /v1/chat
            threading.Thread(target=self._pipe, args=(client, upstream, chat, False)).start()
            threading.Thread(target=self._pipe, args=(upstream, client, chat, True)).start()

    def _pipe(
        self, src: socket.socket, dst: socket.socket, chat: threading.Event, reply: bool
    ) -> None:
        try:
            while data := src.recv(65536):
                if not reply and data.startswith(b"POST /v1/chat "):
                    chat.set()
                if reply and chat.is_set() and not self.cut.is_set() and b"text-delta" in data:
                    self.cut.set()
                    dst.sendall(data[: data.index(b"text-delta")])
                    break
                dst.sendall(data)
        except OSError:
            pass
        for end in (src, dst):  # a cut closes both ways: the page sees its body end broken
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()


def test_a_connection_lost_mid_reply_follows_the_reply_to_its_end(page, tmp_path) -> None:  # type: ignore[no-untyped-def]
    slow = start_local_server(tmp_path / "local.db", CONFIDANT_OFFLINE_CHUNK_DELAY_MS="300")
    proxy = CuttingProxy(int(slow.base_url.rsplit(":", 1)[1]))
    headers = {"X-User-Id": "web-dropped"}
    try:
        open_session(
            page, dataclasses.replace(slow, base_url=proxy.base_url), "dropped", "web-dropped"
        )
        page.get_by_test_id("composer").fill("I keep avoiding my inbox")
        page.get_by_test_id("send").click()
        assert proxy.cut.wait(20)
        # The page followed the reply (GET /v1/chat/{id}/stream) and shows all of it, once,
        # under the message, and does not offer the message again.
        see_the_whole_stored_reply(page, slow, "dropped", headers)
        assert page.locator(".message.user").inner_text() == "I keep avoiding my inbox"
        assert page.get_by_test_id("composer").input_value() == ""
        assert page.get_by_test_id("error").count() == 0
    finally:
        proxy.close()
        stop_server(slow)


def test_a_reply_interrupted_by_a_newer_message_says_so(page, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Another tab sends with multitask_strategy=interrupt while this page's reply streams: the
    # reply stops (`data-interrupted`) and the page says why, live and after a reload.
    slow = start_local_server(tmp_path / "local.db", CONFIDANT_OFFLINE_CHUNK_DELAY_MS="400")
    answered: list[httpx.Response] = []

    def other_tab() -> None:
        body = {
            "app": "onemind",
            "session_id": "cut",
            "message": "Actually, never mind",
            "multitask_strategy": "interrupt",
        }
        answered.append(
            httpx.post(
                f"{slow.base_url}/v1/chat", json=body, headers={"X-User-Id": "web-cut"}, timeout=60
            )
        )

    interrupting = threading.Thread(target=other_tab)
    try:
        open_session(page, slow, "cut", "web-cut")
        send_and_see_the_reply_begin(page, "I keep avoiding my inbox")
        interrupting.start()
        note = page.get_by_test_id("interrupted")
        note.wait_for(timeout=20_000)
        assert "newer message" in note.inner_text()
        interrupting.join(60)
        assert answered and answered[0].status_code == 200, answered
        page.reload()
        page.locator(".message.user").nth(1).wait_for(timeout=20_000)
        assert page.get_by_test_id("interrupted").count() == 1  # the stored reply, marked
    finally:
        if interrupting.is_alive():
            interrupting.join(60)
        stop_server(slow)


def test_a_message_resent_after_an_unconfirmed_commit_is_stored_once(page, server) -> None:  # type: ignore[no-untyped-def]
    # The first send reaches the real server and is stored, but the page is told the commit's
    # outcome is unknown (the store's answer lost); the person sends it again from the composer.
    bodies: list[dict] = []

    def answer(route) -> None:  # type: ignore[no-untyped-def]
        bodies.append(json.loads(route.request.post_data))
        if len(bodies) > 1:
            route.continue_()
            return
        stored = route.fetch()
        assert stored.status == 200 and '"finish"' in stored.text()
        lost = {"type": "error", "errorText": "your message may not have been saved"}
        route.fulfill(
            status=200,
            headers={"content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1"},
            body=sse(
                {"type": "start", "messageId": "msg-1"}, lost | {"code": "commit_outcome_unknown"}
            ),
        )

    page.route("**/v1/chat", answer)
    open_session(page, server, "unconfirmed", "web-unconfirmed")
    page.get_by_test_id("composer").fill("I keep avoiding my inbox")
    page.get_by_test_id("send").click()
    page.get_by_test_id("error").wait_for(timeout=20_000)
    assert page.get_by_test_id("composer").input_value() == "I keep avoiding my inbox"
    page.get_by_test_id("send").click()
    page.locator(".message.assistant").first.wait_for(timeout=20_000)
    page.get_by_role("button", name="Send").wait_for(timeout=20_000)

    first, resent = bodies
    assert resent["message_id"] == first["message_id"]  # the same message, so the same key
    session = httpx.get(
        f"{server.base_url}/v1/sessions/unconfirmed",
        params={"app": "onemind"},
        headers={"X-User-Id": "web-unconfirmed"},
    ).json()
    users = [e for e in session["events"] if e["author"] == "user"]
    assert len(users) == 1  # stored once, and the page shows the stored reply
    assert page.locator(".message.user").count() == 1
    stored_reply = " ".join(
        part.get("text", "")
        for event in session["events"]
        if event["author"] != "user"
        for part in (event.get("content") or {}).get("parts", [])
    )
    shown = page.locator(".message.assistant").inner_text()
    assert " ".join(stored_reply.split()) in " ".join(shown.split())


def test_a_resumed_reply_that_fails_keeps_the_conversation(page, server) -> None:  # type: ignore[no-untyped-def]
    # Reloaded while a reply was being answered, whose turn then died: the resumed stream ends
    # with an `error` part. What is stored stays shown; no stored message goes back into the
    # composer to be sent again.
    headers = {"X-User-Id": "web-resume-fail"}
    body = {"app": "onemind", "session_id": "resumefail", "message": "I keep avoiding my inbox"}
    stored = httpx.post(f"{server.base_url}/v1/chat", json=body, headers=headers, timeout=30)
    assert stored.status_code == 200 and '"finish"' in stored.text

    def still_busy(route) -> None:  # type: ignore[no-untyped-def]
        response = route.fetch()
        session = response.json()
        session["session"]["busy"] = True
        route.fulfill(response=response, json=session)

    died = {"type": "error", "errorText": "The reply was interrupted before it finished."}
    page.route("**/v1/sessions/resumefail?*", still_busy)
    page.route(
        "**/v1/chat/resumefail/stream*",
        lambda route: route.fulfill(
            status=200,
            headers={"content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1"},
            body=sse({"type": "start", "messageId": "msg-2"}, died),
        ),
    )
    open_session(page, server, "resumefail", "web-resume-fail")
    page.get_by_test_id("error").wait_for(timeout=20_000)
    assert "interrupted" in page.get_by_test_id("error").inner_text()
    assert page.locator(".message.user").count() == 1
    assert "inbox" in page.locator(".message.user").inner_text()
    assert page.locator(".message.assistant").first.inner_text().strip()
    assert page.get_by_test_id("composer").input_value() == ""


def test_a_conversation_that_fails_to_load_says_so(page, server) -> None:  # type: ignore[no-untyped-def]
    # Only a 404 is a new conversation; a failed read must not pass for an empty one.
    unavailable = {"error": {"code": "unavailable", "message": "the store is unavailable"}}
    page.route(
        "**/v1/sessions/loadfail?*",
        lambda route: route.fulfill(status=503, json=unavailable),
    )
    open_session(page, server, "loadfail", "web-loadfail")
    notice = page.get_by_test_id("error")
    notice.wait_for(timeout=20_000)
    assert "the store is unavailable" in notice.inner_text()
    page.goto(f"{server.base_url}/#app=onemind&session=brand-new")  # a 404: nothing to say
    page.reload()  # the page reads the address once, at load
    page.wait_for_function("document.querySelector('[data-testid=app-picker]').value")
    page.wait_for_load_state("networkidle")
    assert page.get_by_test_id("error").count() == 0


# --- parts the page must render when the server sends them (wire format, served by routing) ---


def sse(*parts: dict) -> str:
    frames = [f"data: {json.dumps(p)}\n\n" for p in parts]
    return "".join(frames) + "data: [DONE]\n\n"


def reply(text: str, *extra: dict) -> list[dict]:
    return [
        {"type": "start", "messageId": "msg-1"},
        *extra,
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": text},
        {"type": "text-end", "id": "t1"},
        {"type": "finish"},
    ]


def routed_chat(page, bodies: list[dict], streams: list[list[dict]]) -> None:  # type: ignore[no-untyped-def]
    """Answer POST /v1/chat with the given streams in turn, keeping each request body."""

    def answer(route) -> None:  # type: ignore[no-untyped-def]
        bodies.append(json.loads(route.request.post_data))
        route.fulfill(
            status=200,
            headers={"content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1"},
            body=sse(*streams[len(bodies) - 1]),
        )

    page.route("**/v1/chat", answer)


def test_crisis_resources_and_emotions_render(page, server) -> None:  # type: ignore[no-untyped-def]
    crisis = {
        "locale": "en",
        "resources": [
            {
                "name": "988 Suicide & Crisis Lifeline",
                "phone": "988",
                "url": "https://988lifeline.org",
            },
            {"name": "Samaritans", "phone": "+44 116 123"},
        ],
        "signals": ["self_harm"],
    }
    bodies: list[dict] = []
    routed_chat(
        page, bodies, [reply("Please reach out now.", {"type": "data-crisis", "data": crisis})]
    )
    emotions = {
        "emotions": [
            {"user_mood": {"label": "anxious", "score": 0.2}, "tags": ["work"], "session_id": "s"},
            {"user_mood": {"label": "calmer", "score": 0.6}, "tags": [], "session_id": "s"},
        ]
    }
    page.route(
        "**/v1/me/emotions?*",
        lambda route: route.fulfill(status=200, json=emotions),
    )
    open_session(page, server, "routed", "web-routed")
    page.get_by_test_id("composer").fill("everything is too much")
    page.get_by_test_id("send").click()
    page.get_by_test_id("crisis").wait_for(timeout=10_000)

    calls = page.locator("a.call[href^='tel:']")
    assert [calls.nth(i).get_attribute("href") for i in range(calls.count())] == [
        "tel:988",
        "tel:+44116123",
    ]
    assert "988 Suicide & Crisis Lifeline" in calls.first.inner_text()
    chart = page.get_by_test_id("emotion-chart")
    chart.wait_for(timeout=10_000)
    assert chart.locator("circle").count() == 2
    assert "calmer" in chart.inner_text()
    (body,) = bodies
    assert re.fullmatch(r"[A-Za-z0-9_.:-]{1,128}", body.pop("message_id"))  # useChat's id
    assert body == {"app": "onemind", "session_id": "routed", "message": "everything is too much"}
    page.screenshot(path=str(DOCS / "crisis-resources.png"))


def test_a_retry_notice_shows_until_the_retried_model_answers(page, server) -> None:  # type: ignore[no-untyped-def]
    retry = {"attempt": 1, "max_retries": 4, "delay_s": 1.0, "reason": "429 RESOURCE_EXHAUSTED"}
    retried = {"type": "data-retry", "data": retry, "transient": True}
    routed_chat(
        page,
        [],
        [
            reply("The retry went through.", retried),
            [
                {"type": "start", "messageId": "msg-2"},
                retried,
                {"type": "error", "errorText": "The model is unavailable."},
            ],
        ],
    )
    open_session(page, server, "retried", "web-retried")
    send(page, "hello")
    page.get_by_text("The retry went through.").wait_for(timeout=10_000)
    assert page.get_by_test_id("retry").count() == 0

    page.get_by_test_id("composer").fill("hello again")
    page.get_by_test_id("send").click()
    page.get_by_test_id("error").wait_for(timeout=10_000)
    assert "429 RESOURCE_EXHAUSTED" in page.get_by_test_id("retry").inner_text()


def test_a_taskflow_pause_is_answered_in_place(page, server) -> None:  # type: ignore[no-untyped-def]
    # The real server's pauses (agents/taskflow/human_loop.py): the page shows what each asks
    # and sends the answer as the `human_response` the server accepts.
    page.add_init_script("localStorage.setItem('confidant.user', 'web-review')")
    page.goto(f"{server.base_url}/#app=taskflow&session=review")
    page.wait_for_function("document.querySelector('[data-testid=app-picker]').value")
    page.get_by_test_id("composer").fill(REQUEST)
    page.get_by_test_id("send").click()
    prompt = page.get_by_test_id("human-prompt")
    prompt.wait_for(timeout=20_000)
    assert "When is it due" in prompt.inner_text()  # the server's question
    page.reload()  # during the pause: the page asks again, from the stored session
    page.wait_for_function("document.querySelector('[data-testid=app-picker]').value")
    prompt.wait_for(timeout=20_000)
    assert "When is it due" in prompt.inner_text()
    prompt.locator("input").fill(DETAILS)
    prompt.get_by_role("button", name="Answer").click()

    confirm = prompt.get_by_role("button", name="Confirm")
    confirm.wait_for(timeout=20_000)
    assert page.get_by_test_id("error").count() == 0
    assert "Technical debt" in prompt.inner_text()  # the proposal's summary, to approve
    page.screenshot(path=str(DOCS / "human-review.png"))
    for step in ("classification", "final task"):
        with page.expect_response("**/v1/chat"):  # its headers: the page is answering
            prompt.get_by_role("button", name="Confirm").click()
        page.get_by_role("button", name="Send").wait_for(timeout=20_000)  # the reply is over
        assert page.get_by_test_id("error").count() == 0, step
    assert page.get_by_test_id("human-prompt").count() == 0  # nothing more to answer

    session = httpx.get(
        f"{server.base_url}/v1/sessions/review/artifacts",
        params={"app": "taskflow"},
        headers={"X-User-Id": "web-review"},
    )
    assert session.status_code == 200 and session.json()["artifacts"], session.text
