"""The `confidant` command, run as a program against the real local server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from confidant.cli.exits import ExitCode
from tests.e2e.conftest import REPO, Server, base_env, start_local_server, stop_server
from tests.support.fake_http import FakeHttpServer
from tests.support.taskflow import DETAILS, REQUEST

CONFIDANT = str(REPO / ".venv/bin/confidant")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:  # type: ignore[no-untyped-def]
    running = start_local_server(tmp_path_factory.mktemp("cli") / "local.db")
    yield running
    stop_server(running)


def confidant(
    server: Server, *args: str, stdin: str = "", user: str = "cli-user"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CONFIDANT, *args, "--url", server.base_url, "--user", user],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=base_env(),
    )


def test_an_interactive_chat_through_stdin_then_the_sessions(server) -> None:  # type: ignore[no-untyped-def]
    typed = (
        "I want to finish my thesis but I keep putting it off because it never feels good enough.\n"
        "Yes, part of me is terrified of being judged as not perfect.\n"
    )
    chat = confidant(server, "chat", "--session", "terminal", stdin=typed)
    assert chat.returncode == ExitCode.OK, chat.stderr
    lines = chat.stdout.splitlines()
    assert lines[0].startswith("It sounds like one part of you is pulling toward")
    assert any(line.strip().startswith("⚙ advance_stage(") for line in lines)
    assert "  [onemind ████░░░░ 2/4 Integration]" in lines
    assert "Perhaps both parts of you" in lines[-1]

    listed = confidant(server, "sessions", "list", "--json")
    assert listed.returncode == ExitCode.OK
    (session,) = json.loads(listed.stdout)
    assert session["id"] == "terminal"
    assert session["progress"]["phase"] == "stage_2_integration"

    table = confidant(server, "sessions", "list")
    assert "terminal" in table.stdout and "Integration" in table.stdout

    shown = confidant(server, "sessions", "show", "terminal")
    assert shown.returncode == ExitCode.OK
    transcript = shown.stdout.splitlines()
    assert transcript[1] == "you: " + typed.splitlines()[0]
    assert transcript[2].startswith("onemind_coach: It sounds like")
    as_json = json.loads(confidant(server, "sessions", "show", "terminal", "--json").stdout)
    assert len(as_json["events"]) == session["event_count"]

    # Another user sees none of it.
    assert json.loads(confidant(server, "sessions", "list", "--json", user="other").stdout) == []

    deleted = confidant(server, "sessions", "delete", "terminal", "never-was", "--json")
    assert deleted.returncode == ExitCode.NOT_FOUND
    assert json.loads(deleted.stdout) == {"deleted": ["terminal"], "missing": ["never-was"]}
    gone = confidant(server, "sessions", "show", "terminal")
    assert gone.returncode == ExitCode.NOT_FOUND
    assert "not found" in gone.stderr


def test_one_message_as_json_lines(server) -> None:  # type: ignore[no-untyped-def]
    result = confidant(server, "chat", "-m", "I feel stuck at work", "--session", "j1", "--json")
    assert result.returncode == ExitCode.OK, result.stderr
    parts = [json.loads(line) for line in result.stdout.splitlines()]
    assert parts[0]["type"] == "start" and parts[-1]["type"] == "finish"
    assert {"type": "data-session", "data": {"sessionId": "j1", "app": "onemind"}} in parts
    assert "stuck at work" in "".join(p["delta"] for p in parts if p["type"] == "text-delta")


def test_exit_codes_mean_something(server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    unknown_app = confidant(server, "chat", "-m", "hi", "--app", "nope")
    assert unknown_app.returncode == ExitCode.BAD_INPUT
    assert "unknown app" in unknown_app.stderr

    nobody = subprocess.run(
        [CONFIDANT, "sessions", "list", "--url", "http://127.0.0.1:9"],
        capture_output=True,
        text=True,
        timeout=30,
        env=base_env(),
    )
    assert nobody.returncode == ExitCode.UNREACHABLE
    assert "make run" in nobody.stderr

    usage = subprocess.run([CONFIDANT, "sessions"], capture_output=True, text=True, timeout=30)
    assert usage.returncode == ExitCode.USAGE

    # Slow chunks keep the first turn answering for seconds, however loaded the machine is.
    slow = start_local_server(tmp_path / "local.db", CONFIDANT_OFFLINE_CHUNK_DELAY_MS="1500")
    started = threading.Event()

    def first_turn() -> None:
        body = {"session_id": "busy", "message": "I keep avoiding my inbox"}
        with httpx.stream(
            "POST",
            f"{slow.base_url}/v1/chat",
            json=body,
            headers={"X-User-Id": "cli-user"},
            timeout=30,
        ) as response:
            for line in response.iter_lines():
                if "text-delta" in line:
                    started.set()

    other = threading.Thread(target=first_turn)
    other.start()
    try:
        assert started.wait(20)
        busy = confidant(slow, "chat", "-m", "are you there?", "--session", "busy")
        assert busy.returncode == ExitCode.BUSY
        assert "still answering" in busy.stderr
    finally:
        other.join(30)
        stop_server(slow)


class FakeChatServer(FakeHttpServer[dict, list]):
    """Answers POST /v1/chat with scripted UI stream parts (parts today's server lacks)."""

    def build_app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            parts = self._record_and_choose(await request.json()) or []
            frames = "".join(f"data: {json.dumps(p)}\n\n" for p in parts) + "data: [DONE]\n\n"
            return Response(frames, media_type="text/event-stream")

        return Starlette(routes=[Route("/v1/chat", chat, methods=["POST"])])


def _reply(text: str, *extra: dict) -> list[dict]:
    return [
        {"type": "start"},
        *extra,
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": text},
        {"type": "text-end", "id": "t"},
        {"type": "finish"},
    ]


def test_crisis_resources_are_shown() -> None:
    crisis = {"locale": "en", "resources": [{"name": "Lifeline", "phone": "988"}], "signals": []}
    with FakeChatServer() as fake:
        fake.enqueue(_reply("Please call someone now.", {"type": "data-crisis", "data": crisis}))
        result = subprocess.run(
            [CONFIDANT, "chat", "--url", fake.base_url, "--session", "s"],
            input="it is all too much\n",
            capture_output=True,
            text=True,
            timeout=60,
            env=base_env(),
        )
    assert result.returncode == ExitCode.OK, result.stderr
    assert "  ☎ Lifeline: 988" in result.stdout.splitlines()


def test_a_taskflow_run_answered_at_the_prompt(server) -> None:  # type: ignore[no-untyped-def]
    # The real server's pauses (agents/taskflow/human_loop.py): each question is printed, and
    # each typed line answers it in the `human_response` the server accepts, to the saved task.
    typed = f"{REQUEST}\n{DETAILS}\nyes\nyes\n"
    chat = confidant(server, "chat", "--app", "taskflow", "--session", "run", stdin=typed)
    assert chat.returncode == ExitCode.OK, chat.stderr
    assert "error" not in chat.stderr
    asked = [line for line in chat.stdout.splitlines() if line.startswith("  ? ")]
    assert len(asked) == 3, chat.stdout  # the details, the classification, the final task
    assert "When is it due" in asked[0]
    assert "Technical debt" in asked[1] and asked[1].endswith("[y/n]")
    saved = httpx.get(
        f"{server.base_url}/v1/sessions/run/artifacts",
        params={"app": "taskflow"},
        headers={"X-User-Id": "cli-user"},
    )
    assert saved.status_code == 200 and saved.json()["artifacts"], saved.text


def test_an_interactive_chat_in_a_real_terminal(server) -> None:  # type: ignore[no-untyped-def]
    """tmux gives the CLI a terminal: the `you>` prompt, typed lines, the resume hint."""
    tmux = shutil.which("tmux")
    if tmux is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is not installed (`make test-tools` installs it)")
        pytest.skip("tmux is not installed")
    name = f"confidant-cli-{os.getpid()}"
    command = f"{CONFIDANT} chat --url {server.base_url} --user tty-user --session tty"

    def tmux_run(*args: str) -> str:
        return subprocess.run(
            [tmux, *args], check=True, capture_output=True, text=True, timeout=10
        ).stdout

    def screen_shows(text: str) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            screen = tmux_run("capture-pane", "-p", "-J", "-t", name)
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared:\n{screen}")

    tmux_run("new-session", "-d", "-s", name, "-x", "200", "-y", "50")
    try:
        tmux_run("set-option", "-t", name, "remain-on-exit", "on")
        tmux_run("send-keys", "-t", name, command, "Enter")
        screen_shows("you> ")
        tmux_run("send-keys", "-t", name, "I keep avoiding the hard email", "Enter")
        screen = screen_shows("What feels most stuck right now?")
        assert 'pulling toward "I keep avoiding the hard email"' in screen
        tmux_run("send-keys", "-t", name, "Enter")  # an empty line ends the chat
        screen_shows("resume with: confidant chat --app onemind --session tty")
    finally:
        subprocess.run([tmux, "kill-session", "-t", name], capture_output=True, timeout=10)


def test_bench_runs_the_source_checkouts_benchmark() -> None:
    result = subprocess.run(
        [CONFIDANT, "bench", "turn-overhead", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=base_env(),
    )
    assert result.returncode == ExitCode.OK, result.stderr
    assert "python -m bench.turn_overhead" in result.stdout and "--turns" in result.stdout
    unknown = subprocess.run(
        [CONFIDANT, "bench", "nope"], capture_output=True, text=True, timeout=30, env=base_env()
    )
    assert unknown.returncode == ExitCode.USAGE
