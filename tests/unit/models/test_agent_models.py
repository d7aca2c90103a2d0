"""CONFIDANT_AGENT_MODELS: models per agent role, the allow-list, one client per provider."""

from __future__ import annotations

import json

import pytest
from google.adk.models import Gemini
from google.adk.models.lite_llm import LiteLlm

from agents.offline import OfflineModel
from confidant.models.factory import ModelCatalog, UnknownModelChoiceError
from confidant.settings import ConfigurationError, Settings

AGENT_MODELS = {
    "agents": {
        "router": {"provider": "gemini", "model": "gemini-2.5-flash-lite"},
        "strategist": {"provider": "gemini", "model": "gemini-2.5-pro"},
        "writer": {
            "provider": "litellm",
            "model": "openai/gpt-4o-mini",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key_env": "WRITER_KEY",
        },
        "profile": {
            "provider": "gemini",
            "model": "gemini-2.5-flash",
            "base_url": "http://127.0.0.1:9/",
            "api_key_env": "PROFILE_KEY",
        },
    },
    "selectable": {"deep": {"provider": "gemini", "model": "gemini-2.5-pro"}},
}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFIDANT_AGENT_MODELS", json.dumps(AGENT_MODELS))
    monkeypatch.setenv("WRITER_KEY", "sk-writer")
    monkeypatch.setenv("PROFILE_KEY", "profile-key")
    for name in ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)


def _catalog() -> tuple[ModelCatalog, OfflineModel]:
    default = OfflineModel()
    return ModelCatalog(Settings(GOOGLE_API_KEY="default-key"), default), default


def test_roles_get_their_models_and_unset_roles_the_default() -> None:
    catalog, default = _catalog()
    router, strategist = catalog.for_agent("router"), catalog.for_agent("strategist")
    assert isinstance(router.inner, Gemini) and router.model == "gemini-2.5-flash-lite"
    assert strategist.model == "gemini-2.5-pro"
    assert catalog.for_agent("analyzer") is default
    writer = catalog.for_agent("writer")
    assert isinstance(writer.inner, LiteLlm) and writer.model == "openai/gpt-4o-mini"
    assert writer.inner._additional_args["api_key"] == "sk-writer"
    assert writer.inner._additional_args["api_base"] == "http://127.0.0.1:9/v1"


def test_one_client_per_provider_endpoint_and_one_model_per_setting() -> None:
    catalog, _ = _catalog()
    router, strategist = catalog.for_agent("router"), catalog.for_agent("strategist")
    assert router.inner.api_client is strategist.inner.api_client  # same endpoint and key
    profile = catalog.for_agent("profile")
    assert profile.inner.api_client is not router.inner.api_client  # its own base URL and key
    assert profile.inner.api_client._api_client.api_key == "profile-key"
    assert catalog.for_agent("strategist") is strategist
    assert catalog.for_agent("analyzer", "deep") is strategist  # the same model setting


def test_the_allow_list() -> None:
    catalog, _ = _catalog()
    assert catalog.selectable == ("deep",)
    with pytest.raises(UnknownModelChoiceError):
        catalog.for_agent("analyzer", "gpt-9")


def test_a_missing_key_variable_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WRITER_KEY")
    catalog, _ = _catalog()
    with pytest.raises(ConfigurationError, match="WRITER_KEY"):
        catalog.for_agent("writer")


def test_malformed_setting_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFIDANT_AGENT_MODELS", '{"agents": {"router": {"provider": "gpt"}}}')
    with pytest.raises(ValueError, match="provider"):
        Settings()
