"""build_model: which model the settings select, and how its client is configured."""

from __future__ import annotations

import pytest
from google import genai
from google.adk.models import Gemini
from google.adk.models.lite_llm import LiteLlm

from confidant.models import RetryingLlm, build_model, resolve_model_kind
from confidant.settings import ConfigurationError, Settings


@pytest.fixture(autouse=True)
def _no_cloud_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def http_options(model: RetryingLlm) -> genai.types.HttpOptions:
    assert isinstance(model.inner, Gemini)
    client = model.inner.client
    assert isinstance(client, genai.Client)
    return client._api_client._http_options


def test_auto_without_credentials_is_offline() -> None:
    from agents.offline.onemind_model import OfflineModel

    settings = Settings(offline_chunk_delay_ms=250)
    assert resolve_model_kind(settings) == "offline"
    model = build_model(settings)
    assert isinstance(model, RetryingLlm)
    assert isinstance(model.inner, OfflineModel)
    assert model.model == "offline-onemind"
    assert model.inner.chunk_delay_s == 0.25


def test_offline_is_honoured_even_with_a_key() -> None:
    model = build_model(Settings(model="offline", GOOGLE_API_KEY="k"))
    assert model.model == "offline-onemind"


def test_auto_with_api_key_is_gemini_with_one_configured_client() -> None:
    settings = Settings(
        GOOGLE_API_KEY="key-123",
        gemini_model="gemini-2.5-pro",
        gemini_base_url="http://127.0.0.1:9/",
        model_timeout_s=12.5,
        retry_delays=[0.1, 0.2],
        retry_max_delay=3.0,
    )
    assert resolve_model_kind(settings) == "gemini"
    model = build_model(settings)
    assert isinstance(model, RetryingLlm)
    assert isinstance(model.inner, Gemini)
    assert model.model == "gemini-2.5-pro"
    assert model.delays == [0.1, 0.2] and model.max_delay == 3.0
    client = model.inner.client
    assert client is not None
    assert client.vertexai is False
    assert client._api_client.api_key == "key-123"
    options = http_options(model)
    assert options.base_url == "http://127.0.0.1:9/"
    assert options.timeout == 12_500  # milliseconds
    # google-genai must not retry on its own: one attempt.
    assert options.retry_options is not None and options.retry_options.attempts == 1
    # ADK uses the pre-built client instead of building one per event loop.
    assert model.inner.api_client is client


def test_env_api_key_is_read_through_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "from-env")
    model = build_model(Settings())
    assert isinstance(model.inner, Gemini)
    assert model.inner.client is not None
    assert model.inner.client._api_client.api_key == "from-env"


def test_auto_with_vertex_uses_project_and_location(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    settings = Settings(GOOGLE_GENAI_USE_VERTEXAI=True)
    assert resolve_model_kind(settings) == "gemini"
    model = build_model(settings)
    assert isinstance(model.inner, Gemini)
    client = model.inner.client
    assert client is not None and client.vertexai is True
    assert client._api_client.project == "my-project"
    assert client._api_client.location == "europe-west4"


def test_explicit_gemini_without_credentials_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="GOOGLE_API_KEY"):
        build_model(Settings(model="gemini"))


def test_litellm_from_settings() -> None:
    settings = Settings(
        model="litellm",
        litellm_model="openai/my-model",
        litellm_api_base="http://127.0.0.1:9/v1",
        litellm_api_key="sk-test",
        model_timeout_s=7.0,
    )
    model = build_model(settings)
    assert isinstance(model, RetryingLlm)
    assert isinstance(model.inner, LiteLlm)
    assert model.model == "openai/my-model"
    args = model.inner._additional_args
    assert args["api_base"] == "http://127.0.0.1:9/v1"
    assert args["api_key"] == "sk-test"
    assert args["timeout"] == 7.0
    assert args["max_retries"] == 0  # the OpenAI SDK's own retries are off


def test_litellm_without_optional_endpoint_settings_omits_them() -> None:
    model = build_model(Settings(model="litellm", litellm_model="openai/my-model"))
    assert isinstance(model.inner, LiteLlm)
    assert "api_base" not in model.inner._additional_args
    assert "api_key" not in model.inner._additional_args


def test_litellm_without_model_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="CONFIDANT_LITELLM_MODEL"):
        build_model(Settings(model="litellm"))
