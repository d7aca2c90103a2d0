"""No secret, token or message text in any log line of a whole conversation (issue 14, item 8).

The real local server runs in a subprocess with JSON logs at DEBUG and Firebase identity
(tokens minted here, keys served by a local JWKS endpoint), Gemini-shaped and OpenAI-shaped
models served by local fakes that require their (fake) API keys. One user talks to all four
apps, with a tool call, a model failure, a crisis message, refused tokens, bad requests and the
post-turn jobs; then every captured stdout/stderr line is searched for the user's words, both
API keys, every bearer token (whole and its payload and signature) and the Authorization
header's value.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import httpx

from confidant.jobs.prompts import EMOTION_TASK, EXTRACTOR_MARKER, MEMORY_TASK, USER_MESSAGE
from tests.e2e.conftest import base_env, start_server, stop_server
from tests.support.emulators import free_port
from tests.support.fake_gemini import FakeGemini, GeminiRequest, Reply, error, function_call
from tests.support.fake_openai import FakeOpenAI, OpenAIRequest
from tests.support.fake_openai import text as openai_text
from tests.support.sse import of_type, parse_frames
from tests.support.tokens import TokenIssuer

GEMINI_KEY = "AIza-security-matrix-gemini-key-7731"
OPENAI_KEY = "sk-security-matrix-openai-key-4410"
FAIL_CUE = "Thistledown"  # a message with this word makes the fake model fail (500)
CRISIS = "sometimes I want to end my life, Quillfeather"
MESSAGES = {
    "onemind": "My sister Quillfeather never calls me back and I feel invisible",
    "relationship": "Why is Quillfeather so distant since the Marrowgate wedding",
    "lifecoach": "I want to spend less time doomscrolling about Brindlecombe",
    "taskflow": "Add a task: repot Quillfeather's ferns before the Ashworth visit",
}
WORDS = [
    "Quillfeather",
    "Marrowgate",
    "Brindlecombe",
    "Ashworth",
    "doomscrolling",
    FAIL_CUE,
    "end my life",
]


def _extractor(request: GeminiRequest) -> Reply:
    """The post-turn extractors' JSON answers, made of the user's words (stored, never logged)."""
    said = request.last_text
    if USER_MESSAGE in said:
        said = said.split(USER_MESSAGE, 1)[1].strip().split("\n\n")[0]
    task = request.system_instruction.split("\n", 1)[0]
    if task.endswith(MEMORY_TASK):
        answer: dict[str, Any] = {"operations": [{"op": "add", "id": None, "text": said}]}
    elif task.endswith(EMOTION_TASK):
        answer = {"user_mood": "sad", "other_mood": None, "trend": "steady", "tags": ["sad"]}
    else:
        answer = {"summary": f"The user said: {said}"}
    return Reply(text=json.dumps(answer))


def _gemini(request: GeminiRequest) -> Any:
    if EXTRACTOR_MARKER in request.system_instruction:
        return _extractor(request)
    if FAIL_CUE in json.dumps(request.contents):
        return error(500, "fake gemini: internal error")
    # The OneMind coach calls a tool on the first message of its session.
    if (
        "advance_stage" in request.function_names
        and not request.function_responses
        and ("Quillfeather never calls" in request.last_text)
    ):
        return function_call("advance_stage", next_stage="stage_2_integration", summary="noted")
    return Reply(text=f"echo: {request.last_text}")


def _openai(request: OpenAIRequest) -> Any:
    return openai_text(f"echo: {request.last_text}")


def _chat(client: httpx.Client, token: str, app: str, session_id: str, message: str) -> list:
    response = client.post(
        "/v1/chat",
        json={"app": app, "session_id": session_id, "message": message},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200, response.text
    parts, done = parse_frames(response.text)
    assert done, parts
    return parts


def _conversation(base_url: str, issuer: TokenIssuer, tokens: list[str]) -> None:
    def token(uid: str = "talker", **claims: Any) -> str:
        tokens.append(issuer.issue(uid, **claims))
        return tokens[-1]

    with httpx.Client(base_url=base_url, timeout=60) as client:
        onemind = _chat(client, token(), "onemind", "s-onemind", MESSAGES["onemind"])
        assert of_type(onemind, "tool-input-available"), onemind  # a tool call happened
        for app in ("relationship", "lifecoach", "taskflow"):
            _chat(client, token(), app, f"s-{app}", MESSAGES[app])
        # Again: the first router call may time out while litellm is imported on a busy machine.
        _chat(client, token(), "relationship", "s-relationship", MESSAGES["relationship"])
        crisis = _chat(client, token(), "onemind", "s-crisis", CRISIS)
        assert of_type(crisis, "data-crisis"), crisis
        failed = _chat(client, token(), "onemind", "s-onemind", f"{FAIL_CUE} is all I think of")
        assert of_type(failed, "error"), failed

        bad = {
            "tampered": tokens[0].rsplit(".", 1)[0] + ".c2lnbmF0dXJl",
            "expired": issuer.issue(
                "talker", exp=int(time.time()) - 600, iat=int(time.time()) - 4200
            ),
            "unknown key": issuer.issue("talker", key=issuer.unknown_key),
        }
        tokens.extend(bad.values())
        for value in bad.values():
            response = client.post(
                "/v1/chat",
                json={"message": MESSAGES["onemind"]},
                headers={"Authorization": f"Bearer {value}"},
            )
            assert response.status_code == 401
        auth = {"Authorization": f"Bearer {token()}"}
        too_long = client.post("/v1/chat", json={"message": "Quillfeather " * 5000}, headers=auth)
        assert too_long.status_code in (400, 413)
        not_json = client.post("/v1/chat", content=b"{Quillfeather", headers=auth)
        assert not_json.status_code == 400
        forbidden = client.get("/v1/admin/apps/onemind/config", headers=auth)
        assert forbidden.status_code == 403

        # The post-turn jobs (extractors on the model, memories, summaries) run after each
        # reply in process: wait until they have stored the memories of the three committed
        # turns of the apps that run them (onemind twice, relationship once).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            memories = client.get("/v1/me/memories", headers=auth).json()["memories"]
            if len(memories) >= 3:
                break
            time.sleep(0.3)
        assert {m["app"] for m in memories} == {"onemind", "relationship"}, memories
        assert "Quillfeather" in json.dumps(memories)  # the words are stored, only not logged


def test_a_whole_conversation_logs_no_words_keys_or_tokens(tmp_path) -> None:
    tokens: list[str] = []
    router = {
        "agents": {
            "router": {
                "provider": "litellm",
                "model": "openai/fake-router",
                "api_key_env": "ROUTER_OPENAI_KEY",
            }
        }
    }
    with (
        TokenIssuer(project_id="confidant-logs") as issuer,
        FakeGemini(responder=_gemini) as gemini,
        FakeOpenAI(responder=_openai) as openai,
    ):
        router["agents"]["router"]["base_url"] = f"{openai.base_url}/v1"
        port = free_port()
        env = base_env(
            PORT=str(port),
            CONFIDANT_SQLITE_PATH=str(tmp_path / "logs.db"),
            CONFIDANT_AUTH="firebase",
            CONFIDANT_FIREBASE_PROJECT_ID=issuer.project_id,
            CONFIDANT_JWKS_URL=issuer.jwks_url,
            CONFIDANT_MODEL="gemini",
            CONFIDANT_GEMINI_BASE_URL=gemini.base_url,
            GOOGLE_API_KEY=GEMINI_KEY,
            ROUTER_OPENAI_KEY=OPENAI_KEY,
            CONFIDANT_AGENT_MODELS=json.dumps(router),
            CONFIDANT_RETRY_DELAYS="[0.05]",
            CONFIDANT_LOG_FORMAT="json",
            CONFIDANT_LOG_LEVEL="DEBUG",
        )
        server = start_server([sys.executable, "-m", "confidant.local_server"], env, port)
        try:
            _conversation(server.base_url, issuer, tokens)
        finally:
            stop_server(server)
        log = open(server.log_path, encoding="utf-8", errors="replace").read()
        gemini_keys = {r.api_key for r in gemini.requests}
        openai_keys = {r.api_key for r in openai.requests}

    print(f"server log: {server.log_path}")
    assert gemini_keys == {GEMINI_KEY} and openai_keys == {OPENAI_KEY}  # both keys were used
    entries = [json.loads(line) for line in log.splitlines() if line.strip()]
    assert any(e["severity"] == "DEBUG" for e in entries), "DEBUG lines were not captured"
    assert any("/v1/chat" in e["message"] for e in entries), "request lines were not captured"

    secrets = {"gemini key": GEMINI_KEY, "openai key": OPENAI_KEY, "Authorization": "Bearer "}
    secrets |= {f"message {app}": message for app, message in MESSAGES.items()}
    secrets |= {f"word {word}": word for word in WORDS}
    for index, value in enumerate(tokens):
        _, payload, signature = value.split(".")
        secrets |= {f"token {index}": value, f"token {index} payload": payload}
        if len(signature) > 16:
            secrets[f"token {index} signature"] = signature
    leaks = {
        name: [line[:300] for line in log.splitlines() if value in line][:3]
        for name, value in secrets.items()
        if value in log
    }
    assert not leaks, f"secrets in the logs: {json.dumps(leaks, indent=1)}"
