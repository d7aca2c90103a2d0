"""The router: its decision, its fallbacks, its small input, and its trace span."""

from __future__ import annotations

import asyncio

import pytest
from google.adk.models import LlmRequest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agents.deps import TurnContext
from agents.offline import OfflineModel
from agents.offline.relationship_model import route_for, specialist_for
from agents.offline.scripted import instruction_text
from agents.relationship import prompts
from agents.relationship.router import decide_route, parse_route
from tests.support.scripted_model import ScriptedLlm

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def _spans() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)


def _turn(message: str, **loaded) -> TurnContext:  # type: ignore[no-untyped-def]
    return TurnContext(
        user_id="u",
        session_id="s",
        locale="en",
        app="relationship",
        message=message,
        loaded=loaded,
    )


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            '{"mode": "pipe_analyze_strategist", "reason": "both"}',
            {"mode": "pipe_analyze_strategist", "reason": "both"},
        ),
        ('```json\n{"mode": "pipe_strategist_writer"}\n```', {"mode": "pipe_strategist_writer"}),
        ('{"mode": "runner"}', {"mode": "runner"}),
        ('{"mode": "writer"}', {"mode": "runner", "reason": "unknown router mode"}),
        ('["runner"]', {"mode": "runner", "reason": "unknown router mode"}),
        ("I think runner", {"mode": "runner", "reason": "unparsable router answer"}),
        ("", {"mode": "runner", "reason": "unparsable router answer"}),
    ],
)
def test_parse_route(answer: str, expected: dict) -> None:
    assert parse_route(answer) == expected


async def test_the_router_call_is_small_and_its_decision_is_on_the_span() -> None:
    _EXPORTER.clear()
    model = ScriptedLlm(script=['{"mode": "pipe_strategist_writer", "reason": "plan + words"}'])
    summary = {"text": "They fought about money.", "covers_seq": 4}
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("turn") as turn_span:
        route = await decide_route(model, _turn("Plan and a text for Sam?", summary=summary))
    assert route == {"mode": "pipe_strategist_writer", "reason": "plan + words"}
    [request] = model.requests
    assert [c.parts[0].text for c in request.contents] == ["Plan and a text for Sam?"]
    system = instruction_text(request.config)
    assert prompts.ROUTER_INSTRUCTION in system and "They fought about money." in system
    assert not request.config.tools
    [span] = [s for s in _EXPORTER.get_finished_spans() if s.name == "relationship.router"]
    assert span.attributes["confidant.route.mode"] == "pipe_strategist_writer"
    assert span.parent.span_id == turn_span.get_span_context().span_id
    assert turn_span.attributes["confidant.route.mode"] == "pipe_strategist_writer"


async def test_a_failed_router_call_routes_to_runner() -> None:
    model = ScriptedLlm(script=[RuntimeError("boom")])
    assert await decide_route(model, _turn("hi")) == {"mode": "runner", "reason": "router failed"}


async def test_a_slow_router_call_routes_to_runner() -> None:
    async def slow(request: LlmRequest) -> str:
        await asyncio.sleep(5)
        return '{"mode": "pipe_analyze_strategist"}'

    model = ScriptedLlm(script=[slow])
    route = await decide_route(model, _turn("hi"), timeout_s=0.05)
    assert route == {"mode": "runner", "reason": "router timed out"}


@pytest.mark.parametrize(
    ("message", "mode"),
    [
        ("Why did she cancel, and what should I do next?", "pipe_analyze_strategist"),
        ("我该怎么办？他为什么不回消息", "pipe_analyze_strategist"),
        ("Give me a plan and what should I say to him", "pipe_strategist_writer"),
        ("帮我想个策略，再帮我写一条消息", "pipe_strategist_writer"),
        ("Why is he so distant?", "runner"),
        ("Please update my profile: what should I do is my motto", "runner"),
    ],
)
async def test_the_offline_router_follows_the_seeds_rules(message: str, mode: str) -> None:
    assert route_for(message)["mode"] == mode
    assert (await decide_route(OfflineModel(), _turn(message)))["mode"] == mode


def test_the_offline_orchestrator_picks_one_specialist_by_cue() -> None:
    assert specialist_for("What should I say to her?") == "writer"
    assert specialist_for("What is my next step?") == "strategist"
    assert specialist_for("What kind of person is he?") == "profile"
    assert specialist_for("He went silent") == "analyzer"
