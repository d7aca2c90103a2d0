"""The app registry: every served app is guarded, listed, and plugged in without name branches."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from google.adk.agents import LlmAgent
from pydantic import BaseModel

import agents
from agents import registry
from agents.deps import AgentDeps, TurnContext
from agents.offline import OfflineModel
from agents.registry import AppSpec, register
from agents.safety import CrisisDetector, CrisisGuardPlugin
from confidant.wisdom import LocalWisdomIndex
from tests.support.scripted_model import ScriptedLlm
from tests.support.sse import of_type, parse_frames, streamed_text

ALICE = {"X-User-Id": "alice"}
CRISIS_EN = "I want to kill myself"
CRISIS_ZH = "我不想活了"


class _EchoOptions(BaseModel):
    shade: str = "plain"


def _echo_root(deps: AgentDeps, turn: TurnContext) -> LlmAgent:
    return LlmAgent(
        name="echo",
        model=deps.model,
        instruction=f"shade={turn.options.get('shade')} loaded={sorted(turn.loaded)}",
    )


@pytest.fixture(scope="module")
def late_app() -> Iterator[AppSpec]:
    """An app registered after the built-in ones, as a future app would be."""
    spec = register(
        AppSpec(
            name="zz_late_test_app",
            title="Late test app",
            description="registered by the test, after the built-in apps",
            build_root=_echo_root,
            options_model=_EchoOptions,
        )
    )
    yield spec
    registry._APPS.pop(spec.name)


def test_every_app_gets_the_crisis_guard_from_the_registry(late_app: AppSpec) -> None:
    deps = AgentDeps(
        crisis_detector=CrisisDetector(), model=OfflineModel(), wisdom=LocalWisdomIndex()
    )
    for spec in agents.app_specs():
        app = agents.build_app(spec.name, deps, TurnContext("u", "s", locale="en"))
        assert isinstance(app.plugins[0], CrisisGuardPlugin), spec.name


@pytest.mark.parametrize("message", [CRISIS_EN, CRISIS_ZH])
async def test_every_served_app_answers_a_crisis_with_the_fixed_reply_and_no_model_call(
    make_client, late_app: AppSpec, message: str
) -> None:
    model = ScriptedLlm()
    client, _ = make_client(model=model)
    assert late_app.name in agents.app_names()
    for spec in agents.app_specs():
        response = await client.post(
            "/v1/chat",
            json={"app": spec.name, "session_id": f"crisis-{spec.name}", "message": message},
            headers=ALICE,
        )
        assert response.status_code == 200, (spec.name, response.text)
        parts, done = parse_frames(response.text)
        assert done and parts[-1]["type"] == "finish", spec.name
        text = streamed_text(parts)
        assert ("988" in text) or ("400-161-9995" in text), (spec.name, text)
    assert model.requests == []  # no app called the model on a crisis turn


async def test_apps_are_listed_with_titles_and_skills(make_client, late_app: AppSpec) -> None:
    client, _ = make_client()
    response = await client.get("/v1/apps")
    assert response.status_code == 200
    listed = {app["name"]: app for app in response.json()["apps"]}
    assert listed["onemind"]["title"] == "OneMind coach"
    assert listed[late_app.name]["title"] == "Late test app"
    assert set(listed) == set(agents.app_names())
    assert all(isinstance(app["skills"], list) for app in listed.values())


async def test_app_options_are_validated_before_the_lease(make_client, late_app: AppSpec) -> None:
    model = ScriptedLlm(script=["hi"])
    client, _ = make_client(model=model)
    bad = await client.post(
        "/v1/chat",
        json={"app": late_app.name, "session_id": "o1", "message": "hello", "shade": 3},
        headers=ALICE,
    )
    assert bad.status_code == 400
    assert "shade" in bad.json()["error"]["message"]
    good = await client.post(
        "/v1/chat",
        json={"app": late_app.name, "session_id": "o1", "message": "hello", "shade": "blue"},
        headers=ALICE,
    )
    assert good.status_code == 200
    assert of_type(parse_frames(good.text)[0], "finish")
    assert "shade=blue" in str(model.requests[0].config.system_instruction)


def test_an_app_cannot_be_registered_twice() -> None:
    spec = agents.app_spec("onemind")
    clone = AppSpec(name=spec.name, title="x", description="x", build_root=spec.build_root)
    with pytest.raises(ValueError, match="registered twice"):
        register(clone)
