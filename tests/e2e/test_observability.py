"""A deployment's window: the real server's JSON logs and OTLP traces over a whole conversation.

The logs must be Cloud Logging JSON lines correlated with the exported traces, and neither the
logs nor the spans may hold the user's words or the API key.
"""

from __future__ import annotations

import json
import sys

import httpx

from tests.e2e.conftest import Server, base_env, start_server, stop_server
from tests.support.emulators import free_port
from tests.support.fake_gemini import FakeGemini, echo_responder, function_call, text
from tests.support.fake_otlp import FakeOtlpCollector
from tests.support.sse import parse_frames

API_KEY = "AIza-secret-test-key-0042"
WORDS = [
    "My sister Marisol never calls me back",
    "I feel invisible whenever Marisol cancels",
    "Maybe I will text Marisol one kind sentence",
]


def _conversation(server: Server) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        for message in WORDS:
            response = client.post(
                "/v1/chat",
                json={"message": message, "session_id": "observed"},
                headers={"X-User-Id": "observed-user"},
            )
            parts, done = parse_frames(response.text)
            assert done and parts[-1]["type"] == "finish", parts


def test_logs_and_traces_of_a_conversation_hold_no_words_and_no_key(tmp_path) -> None:
    # The post-turn jobs' extractors (after each reply) get the echo, never the coach's script.
    coach_only = lambda request: "CONFIDANT_EXTRACTOR" not in request.system_instruction  # noqa: E731
    with (
        FakeGemini(responder=echo_responder, scripted_for=coach_only) as gemini,
        FakeOtlpCollector() as collector,
    ):
        gemini.enqueue(
            text("That sounds lonely. What do you miss most?"),
            function_call("advance_stage", next_stage="stage_2_integration", summary="alone"),
            text("Both parts of you want closeness."),
        )
        port = free_port()
        env = base_env(
            PORT=str(port),
            CONFIDANT_SQLITE_PATH=str(tmp_path / "observed.db"),
            CONFIDANT_MODEL="gemini",
            CONFIDANT_GEMINI_BASE_URL=gemini.base_url,
            GOOGLE_API_KEY=API_KEY,
            CONFIDANT_LOG_FORMAT="json",
            CONFIDANT_LOG_LEVEL="DEBUG",
            CONFIDANT_TRACE_EXPORTER="otlp",
            CONFIDANT_OTLP_ENDPOINT=f"{collector.base_url}/v1/traces",
        )
        server = start_server([sys.executable, "-m", "confidant.local_server"], env, port)
        try:
            _conversation(server)
        finally:
            stop_server(server)  # SIGTERM: the batch span processor flushes on shutdown
        log = open(server.log_path, encoding="utf-8", errors="replace").read()
        exported = [span for request in collector.requests for span in request.spans]
        assert gemini.requests and all(r.api_key == API_KEY for r in gemini.requests)

    lines = [line for line in log.splitlines() if line.strip()]
    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    assert all({"severity", "message", "time", "logger"} <= entry.keys() for entry in entries)

    for secret in [API_KEY, "Marisol", *WORDS]:
        assert secret not in log, f"{secret!r} leaked into the logs"
        for span in exported:
            assert secret not in json.dumps(span.attributes, default=str), (span.name, secret)

    # Every turn is exported, and the log lines written during a turn point at its trace.
    turns = [span for span in exported if span.name == "confidant.turn"]
    assert len(turns) == len(WORDS)
    # Post-turn jobs run in traces of their own; their log lines point at those.
    jobs = [span for span in exported if span.name == "confidant.job"]
    assert jobs
    trace_ids = {span.trace_id for span in turns + jobs}
    correlated = {
        entry["logging.googleapis.com/trace"].rsplit("/", 1)[-1]
        for entry in entries
        if "logging.googleapis.com/trace" in entry
    }
    assert correlated and correlated <= trace_ids
    model_calls = [span for span in exported if span.name.startswith("generate_content")]
    assert model_calls and all(
        span.attributes.get("gen_ai.usage.input_tokens", 0) > 0 for span in model_calls
    )
    assert any(span.name == "execute_tool advance_stage" for span in exported)
