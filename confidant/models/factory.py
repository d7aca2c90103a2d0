"""Builds the process-wide model from Settings (called once by the composition root)."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Literal

from google.adk.models import BaseLlm

from confidant.models.retry import RetryingLlm
from confidant.settings import ConfigurationError, ModelChoice, Settings

if TYPE_CHECKING:
    from google import genai

logger = logging.getLogger(__name__)

OFFLINE_MODEL_NAME = "offline-onemind"


ModelKind = Literal["offline", "gemini", "litellm"]


def resolve_model_kind(settings: Settings) -> ModelKind:
    """What `build_model` will build for these settings."""
    if settings.model == "auto":
        # No credentials means a developer machine: the scripted model, never a failing call.
        return "gemini" if _has_gemini_credentials(settings) else "offline"
    return settings.model


def build_model(settings: Settings) -> RetryingLlm:
    """The model every request shares (one HTTP client per process), wrapped in retries."""
    kind = resolve_model_kind(settings)
    inner: BaseLlm
    if kind == "offline":
        inner = _offline_model(settings)
    elif kind == "gemini":
        inner = _gemini_model(settings)
    elif kind == "litellm":
        inner = _litellm_model(settings)
    else:  # pragma: no cover - Settings validates the literal
        raise ConfigurationError(f"unknown CONFIDANT_MODEL={settings.model!r}")
    logger.info("model: %s (%s)", inner.model, kind)
    return RetryingLlm(
        inner=inner, delays=list(settings.retry_delays), max_delay=settings.retry_max_delay
    )


def _has_gemini_credentials(settings: Settings) -> bool:
    return bool(settings.google_api_key) or settings.use_vertex


def _offline_model(settings: Settings) -> BaseLlm:
    # Imported here so the model layer does not depend on the agents package at import time.
    from agents.offline.onemind_model import OfflineModel

    model: BaseLlm = OfflineModel(
        model=OFFLINE_MODEL_NAME, chunk_delay_s=settings.offline_chunk_delay_ms / 1000
    )
    return model


def build_genai_client(
    settings: Settings, *, timeout_s: float | None = None, attempts: int = 1
) -> genai.Client:
    """One google-genai client for the process: API key or Vertex, our timeout, no SDK retries
    unless asked (`attempts`; the embedding ingestion retries 429 and 5xx with backoff)."""
    from google import genai
    from google.genai import types

    http_options = types.HttpOptions(
        base_url=settings.gemini_base_url,
        # Milliseconds. With aiohttp (installed) this bounds the whole call, streaming included.
        timeout=int((timeout_s or settings.model_timeout_s) * 1000),
        # One attempt: RetryingLlm retries and reports each retry to the user. This also turns
        # off google-genai's implicit retry of aiohttp connection errors.
        retry_options=types.HttpRetryOptions(attempts=attempts),
    )
    if settings.use_vertex:
        project = os.environ.get("GOOGLE_CLOUD_PROJECT")
        location = os.environ.get("GOOGLE_CLOUD_LOCATION")
        if settings.google_api_key and not project:
            # Vertex express mode: an API key, no project.
            return genai.Client(
                vertexai=True, api_key=settings.google_api_key, http_options=http_options
            )
        return genai.Client(
            vertexai=True,
            project=project,
            location=location or "global",
            http_options=http_options,
        )
    if not settings.google_api_key:
        raise ConfigurationError(
            "CONFIDANT_MODEL=gemini needs GOOGLE_API_KEY, or GOOGLE_GENAI_USE_VERTEXAI=true with "
            "GOOGLE_CLOUD_PROJECT / GOOGLE_CLOUD_LOCATION"
        )
    # vertexai=False explicitly: the environment must not flip the backend behind our back.
    return genai.Client(vertexai=False, api_key=settings.google_api_key, http_options=http_options)


def _gemini_model(settings: Settings) -> BaseLlm:
    from google.adk.models import Gemini

    if not settings.gemini_model:
        raise ConfigurationError("CONFIDANT_GEMINI_MODEL is empty")
    # A pre-built client: Gemini would otherwise build one per event loop from the environment.
    return Gemini(model=settings.gemini_model, client=build_genai_client(settings))


def _litellm_model(settings: Settings) -> BaseLlm:
    if not settings.litellm_model:
        raise ConfigurationError(
            'CONFIDANT_MODEL=litellm needs CONFIDANT_LITELLM_MODEL (e.g. "openai/my-model")'
        )
    # litellm fetches a price list from GitHub at import unless told not to: slow, and it fails
    # without egress.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # Imported now rather than at the first call (ADK imports it lazily): it attaches a stderr
    # handler of its own, which must give way to ours, and its seconds-long import must not
    # eat the first call's timeout (the relationship router's 8 s).
    import litellm  # noqa: F401
    from google.adk.models.lite_llm import LiteLlm

    from confidant.observability.logs import route_library_loggers

    route_library_loggers()

    optional = {"api_base": settings.litellm_api_base, "api_key": settings.litellm_api_key}
    return LiteLlm(
        model=settings.litellm_model,
        timeout=settings.model_timeout_s,
        # The OpenAI SDK under litellm retries twice by default; RetryingLlm owns retries.
        max_retries=0,
        num_retries=0,
        **{key: value for key, value in optional.items() if value},
    )


# -- models per agent (relationship app, issue 9) -------------------------------------------------


class UnknownModelChoiceError(KeyError):
    """A request named a model outside the allow-list."""


class ModelCatalog:
    """Models by agent role and the request-selectable allow-list (`CONFIDANT_AGENT_MODELS`).

    Built once per process. Each distinct model is built once, and models of one provider share
    one client (google-genai clients are keyed by base URL and key; LiteLLM keeps its own pool).
    A role without a setting uses the process's default model.
    """

    def __init__(self, settings: Settings, default: BaseLlm) -> None:
        self._settings = settings
        self._default = default
        self._models: dict[ModelChoice, BaseLlm] = {}
        self._genai_clients: dict[tuple[str | None, str | None], genai.Client] = {}

    @property
    def selectable(self) -> tuple[str, ...]:
        return tuple(self._settings.agent_models.selectable)

    def for_agent(self, role: str, choice: str | None = None) -> BaseLlm:
        """The model of `role`; `choice` (already allowed) overrides it."""
        if choice:
            spec = self._settings.agent_models.selectable.get(choice)
            if spec is None:
                raise UnknownModelChoiceError(choice)
        else:
            spec = self._settings.agent_models.agents.get(role)
            if spec is None:
                return self._default
        model = self._models.get(spec)
        if model is None:
            model = self._models[spec] = self._build(spec)
        return model

    def _build(self, spec: ModelChoice) -> BaseLlm:
        settings = self._settings
        inner: BaseLlm
        if spec.provider == "offline":
            inner = _offline_model(settings)
        elif spec.provider == "gemini":
            from google.adk.models import Gemini

            inner = Gemini(
                model=spec.model or settings.gemini_model, client=self._genai_client(spec)
            )
        else:
            overrides = {
                "litellm_model": spec.model or settings.litellm_model,
                "litellm_api_base": spec.base_url or settings.litellm_api_base,
                "litellm_api_key": _key_from_env(spec) or settings.litellm_api_key,
            }
            inner = _litellm_model(settings.model_copy(update=overrides))
        logger.info("agent model: %s (%s)", inner.model, spec.provider)
        return RetryingLlm(
            inner=inner, delays=list(settings.retry_delays), max_delay=settings.retry_max_delay
        )

    def _genai_client(self, spec: ModelChoice) -> genai.Client:
        key = (spec.base_url, spec.api_key_env)
        client = self._genai_clients.get(key)
        if client is None:
            overrides = {
                "gemini_base_url": spec.base_url or self._settings.gemini_base_url,
                "google_api_key": _key_from_env(spec) or self._settings.google_api_key,
            }
            client = build_genai_client(self._settings.model_copy(update=overrides))
            self._genai_clients[key] = client
        return client


def _key_from_env(spec: ModelChoice) -> str | None:
    if not spec.api_key_env:
        return None
    value = os.environ.get(spec.api_key_env)
    if not value:
        raise ConfigurationError(f"{spec.api_key_env} (the API key of {spec.model!r}) is not set")
    return value
