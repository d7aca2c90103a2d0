"""build_app: a fresh tree per call, the shared model instance, the guard plugin."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent

from agents import UnknownAppError, app_names, build_app
from agents.deps import AgentDeps, TurnContext
from agents.offline import OfflineModel
from agents.safety import CrisisDetector, CrisisGuardPlugin
from confidant.wisdom import LocalWisdomIndex

DEPS = AgentDeps(crisis_detector=CrisisDetector(), model=OfflineModel(), wisdom=LocalWisdomIndex())
TURN = TurnContext(user_id="u", session_id="s", locale="en")


def test_onemind_app_shape() -> None:
    assert "onemind" in app_names()
    app = build_app("onemind", DEPS, TURN)
    assert app.name == "onemind"
    root = app.root_agent
    assert isinstance(root, LlmAgent)
    assert root.name == "onemind_coach"
    assert root.model is DEPS.model
    assert [type(plugin) for plugin in app.plugins] == [CrisisGuardPlugin]
    assert {tool.name for tool in root.tools} == {  # type: ignore[union-attr]
        "advance_stage",
        "retrieve_wisdom",
        "save_crystal",
    }


def test_each_call_builds_a_fresh_tree() -> None:
    first = build_app("onemind", DEPS, TURN)
    second = build_app("onemind", DEPS, TURN)
    assert first.root_agent is not second.root_agent
    assert first.plugins[0] is not second.plugins[0]
    assert not {id(t) for t in first.root_agent.tools} & {id(t) for t in second.root_agent.tools}  # type: ignore[union-attr]
    assert first.root_agent.model is second.root_agent.model  # type: ignore[union-attr]


def test_unknown_app() -> None:
    with pytest.raises(UnknownAppError) as raised:
        build_app("nope", DEPS, TURN)
    assert isinstance(raised.value, KeyError)
