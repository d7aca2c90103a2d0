"""Taskflow's requests on Gemini's wire format: the team's declarations and structured outputs
reach a local server speaking the Gemini API, and its answers drive the run to a pause."""

from __future__ import annotations

import json

import httpx

from confidant.bootstrap import build_runtime
from confidant.settings import Settings
from tests.support.fake_gemini import FakeGemini, function_call, text
from tests.support.taskflow import CONFIRMATION_NEEDED, send
from tests.unit.conftest import asgi_app

TEAM = {
    "plan_workflow",
    "record_details",
    "detail_critic",
    "ask_for_details",
    "task_classifier",
    "confirm_classification",
    "task_expert",
    "request_final_confirmation",
    "write_task",
}


async def test_a_gemini_driven_run_pauses_for_the_classification(tmp_path):
    critique = {"status": "complete", "feedback": "All there.", "missing": []}
    classification = {
        "task_type": "Admin",
        "priority": "low",
        "area": "Operations",
        "reasons": "A routine chore.",
    }
    with FakeGemini() as gemini:
        gemini.enqueue(
            function_call("plan_workflow", request="add a task: renew the passport"),
            function_call(
                "record_details",
                title="Renew the passport",
                description="Book the appointment and bring the photos.",
                due_date="2026-12-15",
            ),
            function_call("detail_critic", request="check the details"),
            text(json.dumps(critique)),
            function_call("task_classifier", request="classify"),
            text(json.dumps(classification)),
            function_call("confirm_classification", summary="Admin, low, Operations"),
        )
        settings = Settings(
            sqlite_path=str(tmp_path / "c.db"),
            model="gemini",
            GOOGLE_API_KEY="fake-key",
            gemini_base_url=gemini.base_url,
            retry_delays=[0.01],
        )
        runtime = build_runtime(settings)
        transport = httpx.ASGITransport(app=asgi_app(runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            turn = await send(client, "gw", "g1", "add a task: renew the passport")
        await runtime.close()
        requests = gemini.requests

    assert turn.kinds()[-1] == "finish", turn.body
    pause = turn.one(CONFIRMATION_NEEDED)
    assert pause["classification"] == classification
    orchestrator = requests[0]
    assert set(orchestrator.function_names) == TEAM
    assert "taskflow-role: orchestrator" in orchestrator.system_instruction
    critic = requests[3]
    assert "taskflow-role: critic" in critic.system_instruction
    config = critic.body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    schema = json.dumps(config.get("responseJsonSchema") or config.get("responseSchema"))
    assert "incomplete" in schema and "feedback" in schema
    assert not critic.tools  # the specialists answer JSON, they call nothing
    assert len(requests) == 7
