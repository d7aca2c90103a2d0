"""Every turn is one trace: our phases and ADK's own agent, model and tool spans beneath them."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from confidant.observability import (
    TURN_SPAN,
    CloudLoggingFormatter,
    ensure_sdk_provider,
    span_processors,
)
from confidant.observability.tracing import ADK_CONTENT_ENV
from confidant.settings import Settings
from tests.support.fake_otlp import FakeOtlpCollector
from tests.support.sse import parse_frames

ALICE = {"X-User-Id": "alice"}


class _SwitchedExporter(InMemorySpanExporter):
    """Keeps spans only while a test of this module records (a provider cannot drop one)."""

    recording = False

    def export(self, spans):  # type: ignore[no-untyped-def]
        return super().export(spans) if self.recording else SpanExportResult.SUCCESS


_EXPORTER = _SwitchedExporter()


@pytest.fixture
def spans(monkeypatch) -> Iterator[InMemorySpanExporter]:  # type: ignore[no-untyped-def]
    provider = ensure_sdk_provider()
    if not getattr(provider, "_confidant_test_exporter", False):
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        provider._confidant_test_exporter = True  # type: ignore[attr-defined]
    monkeypatch.setenv(ADK_CONTENT_ENV, "false")
    _EXPORTER.clear()
    _EXPORTER.recording = True
    yield _EXPORTER
    _EXPORTER.recording = False
    _EXPORTER.clear()


def _tree(finished: tuple[ReadableSpan, ...]) -> dict[int, ReadableSpan]:
    return {span.context.span_id: span for span in finished}


def _ancestors(span: ReadableSpan, by_id: dict[int, ReadableSpan]) -> list[str]:
    names = []
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        names.append(span.name)
    return names


JOB_SPAN = "confidant.job"


async def test_every_post_turn_job_is_a_span_with_its_kind_and_outcome(make_client, spans) -> None:
    client, runtime = make_client()
    words = "I am a nurse and my sister never calls me back"
    response = await client.post(
        "/v1/chat", json={"message": words, "session_id": "j"}, headers=ALICE
    )
    assert response.status_code == 200
    await runtime.jobs.drain()
    jobs = [s for s in spans.get_finished_spans() if s.name == JOB_SPAN]
    assert sorted(s.attributes["confidant.job.kind"] for s in jobs) == [
        "emotion",
        "memory",
        "summary",
    ]
    assert {s.attributes["confidant.job.outcome"] for s in jobs} == {"done"}
    assert all(s.parent is None for s in jobs)  # each a trace of its own
    dumped = json.dumps([dict(s.attributes or {}) for s in jobs], default=str)
    assert "sister" not in dumped and "nurse" not in dumped


async def test_a_turn_is_one_trace_with_our_phases_and_adks_spans(make_client, spans) -> None:
    client, _ = make_client()
    words = "I want to finish my thesis but I keep putting it off"
    first = await client.post("/v1/chat", json={"message": words, "session_id": "t"}, headers=ALICE)
    assert first.status_code == 200
    spans.clear()
    second = await client.post(
        "/v1/chat",
        json={"message": "Yes, part of me is terrified of being judged.", "session_id": "t"},
        headers=ALICE,
    )
    parts, _ = parse_frames(second.text)
    assert parts[-1]["type"] == "finish"

    # Post-turn jobs run in traces of their own (test below): only the turn's trace here.
    job_traces = {s.context.trace_id for s in spans.get_finished_spans() if s.name == JOB_SPAN}
    finished = tuple(s for s in spans.get_finished_spans() if s.context.trace_id not in job_traces)
    by_id = _tree(finished)
    turns = [s for s in finished if s.name == TURN_SPAN]
    assert len(turns) == 1
    turn = turns[0]
    assert turn.parent is None or turn.parent.span_id not in by_id
    assert turn.attributes["confidant.app"] == "onemind"
    assert turn.attributes["confidant.session_id"] == "t"
    assert {s.context.trace_id for s in finished} == {turn.context.trace_id}

    names = {s.name for s in finished}
    for phase in ("confidant.lease", "confidant.context", "confidant.run", "confidant.commit"):
        assert phase in names
        (span,) = [s for s in finished if s.name == phase]
        assert _ancestors(span, by_id)[-1] == TURN_SPAN
    # ADK's own instrumentation: the agent, each model call and each tool, under our run span.
    adk = [s for s in finished if s.instrumentation_scope.name == "gcp.vertex.agent"]
    adk_names = {s.name for s in adk}
    assert "invoke_agent onemind_coach" in adk_names
    assert "execute_tool advance_stage" in adk_names
    assert any(n.startswith(("call_llm", "generate_content")) for n in adk_names)
    assert all("confidant.run" in _ancestors(s, by_id) for s in adk)
    # The commit comes after the run, within the turn.
    (run,) = [s for s in finished if s.name == "confidant.run"]
    (commit,) = [s for s in finished if s.name == "confidant.commit"]
    assert run.end_time <= commit.start_time <= commit.end_time <= turn.end_time
    # No message text in any attribute.
    dumped = json.dumps([dict(s.attributes or {}) for s in finished], default=str)
    assert "terrified" not in dumped and "thesis" not in dumped


async def test_a_busy_session_ends_its_turn_span_as_an_error(make_client, spans) -> None:
    client, _ = make_client(offline_chunk_delay_ms=200)
    body = {"message": "I keep avoiding the hard email", "session_id": "busy"}
    first = asyncio.create_task(client.post("/v1/chat", json=body, headers=ALICE))
    for _ in range(100):  # until the first turn holds the lease
        await asyncio.sleep(0.05)
        if any(s.name == "confidant.lease" for s in spans.get_finished_spans()):
            break
    second = await client.post("/v1/chat", json=body, headers=ALICE)
    assert second.status_code == 409
    await first
    turns = [s for s in spans.get_finished_spans() if s.name == TURN_SPAN]
    statuses = [(s.status.status_code, s.status.description or "") for s in turns]
    assert (StatusCode.ERROR, "session_busy") in statuses
    assert any(code != StatusCode.ERROR for code, _ in statuses)


def test_log_lines_are_cloud_logging_json_with_the_trace() -> None:
    provider = ensure_sdk_provider()
    formatter = CloudLoggingFormatter("proj-1")
    record = logging.makeLogRecord(
        {"name": "confidant.x", "levelname": "WARNING", "msg": "turn %s failed", "args": ("s1",)}
    )
    outside = json.loads(formatter.format(record))
    assert outside["severity"] == "WARNING" and outside["message"] == "turn s1 failed"
    assert "logging.googleapis.com/trace" not in outside
    with provider.get_tracer("test").start_as_current_span("work") as span:
        inside = json.loads(formatter.format(record))
    context = span.get_span_context()
    assert inside["logging.googleapis.com/trace"] == (
        f"projects/proj-1/traces/{context.trace_id:032x}"
    )
    assert inside["logging.googleapis.com/spanId"] == f"{context.span_id:016x}"


def test_otlp_and_langfuse_exporters_send_spans_over_the_wire() -> None:
    with FakeOtlpCollector() as collector:
        settings = Settings(
            trace_exporter="otlp",
            otlp_endpoint=f"{collector.base_url}/v1/traces",
            langfuse_host=collector.base_url,
            langfuse_public_key="pk-lf-1",
            langfuse_secret_key="sk-lf-2",
        )
        processors = span_processors(settings)
        assert len(processors) == 2
        from opentelemetry.sdk.trace import TracerProvider

        provider = TracerProvider()
        for processor in processors:
            provider.add_span_processor(processor)
        with provider.get_tracer("t").start_as_current_span(TURN_SPAN, attributes={"a": 1}):
            pass
        provider.force_flush()
        provider.shutdown()
        received = collector.requests
    by_path = {r.path: r for r in received}
    assert [s.name for s in by_path["/v1/traces"].spans] == [TURN_SPAN]
    langfuse = by_path["/api/public/otel/v1/traces"]
    assert [s.name for s in langfuse.spans] == [TURN_SPAN]
    assert langfuse.headers["authorization"] == "Basic cGstbGYtMTpzay1sZi0y"  # pk:sk
    assert "authorization" not in by_path["/v1/traces"].headers


def test_no_exporter_configured_means_no_processors() -> None:
    assert span_processors(Settings()) == []
    console = span_processors(Settings(trace_exporter="console"))
    assert type(console[0].span_exporter).__name__ == "ConsoleSpanExporter"  # type: ignore[attr-defined]
    assert trace.get_tracer_provider() is not None


async def test_a_callers_traceparent_becomes_the_turns_parent(make_client, spans) -> None:
    client, _ = make_client()
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    response = await client.post(
        "/v1/chat",
        json={"message": "hello", "session_id": "tp"},
        headers={**ALICE, "traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"},
    )
    assert response.status_code == 200
    (turn,) = [s for s in spans.get_finished_spans() if s.name == TURN_SPAN]
    assert f"{turn.context.trace_id:032x}" == trace_id
    assert f"{turn.parent.span_id:016x}" == "00f067aa0ba902b7"  # type: ignore[union-attr]
