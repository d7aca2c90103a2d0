"""Settings, read once by the composition root (never at import)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class ConfigurationError(ValueError):
    """The settings describe a deployment that must not start."""


# Models per agent (relationship app, issue 9) --------------------------------------------------


class ModelChoice(BaseModel):
    """One model: provider, model name, base URL, and the env var holding its API key (on Cloud
    Run a Secret Manager secret mounted as that variable). Unset fields use the process defaults
    (CONFIDANT_GEMINI_MODEL, CONFIDANT_GEMINI_BASE_URL, GOOGLE_API_KEY, CONFIDANT_LITELLM_*)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Literal["offline", "gemini", "litellm"]
    model: str = ""
    base_url: str | None = None
    api_key_env: str | None = None


class AgentModels(BaseModel):
    """`CONFIDANT_AGENT_MODELS`: models by agent role, and the names a request may pick."""

    model_config = ConfigDict(extra="forbid")

    # By role: router, orchestrator, profile, analyzer, strategist, writer, extractor.
    agents: dict[str, ModelChoice] = Field(default_factory=dict)
    # The allow-list of a chat body's `model` field: name -> model.
    selectable: dict[str, ModelChoice] = Field(default_factory=dict)


class Settings(BaseSettings):
    """Every knob of a Confidant process; env vars are prefixed `CONFIDANT_`."""

    model_config = SettingsConfigDict(
        env_prefix="CONFIDANT_", extra="ignore", populate_by_name=True
    )

    # Adapters.
    store: Literal["sqlite", "firestore"] = "sqlite"
    jobs: Literal["inprocess", "pubsub"] = "inprocess"
    auth: Literal["header", "firebase"] = "header"
    wisdom: Literal["local", "vertex"] = "local"
    model: Literal["auto", "offline", "gemini", "litellm"] = "auto"

    # Embedded store.
    sqlite_path: str = ".data/confidant.db"

    # Google Cloud.
    project_id: str = Field(default="confidant-local")
    firestore_database: str = "(default)"
    pubsub_topic_prefix: str = "confidant"

    # Identity (Firebase / Identity Platform ID tokens).
    firebase_project_id: str | None = None
    jwks_url: str = (
        "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
    )

    # Models.
    gemini_model: str = "gemini-2.5-flash"
    gemini_base_url: str | None = None
    google_api_key: str | None = Field(default=None, validation_alias="GOOGLE_API_KEY")
    use_vertex: bool = Field(default=False, validation_alias="GOOGLE_GENAI_USE_VERTEXAI")
    litellm_model: str | None = None
    litellm_api_base: str | None = None
    litellm_api_key: str | None = None
    offline_chunk_delay_ms: int = 0
    # Models per agent and the request-selectable allow-list (issue 9), one JSON setting.
    agent_models: AgentModels = Field(default_factory=AgentModels)

    # Retries of transient model errors (seconds).
    retry_delays: list[float] = Field(default_factory=lambda: [1.0, 2.0, 4.0, 8.0])
    retry_max_delay: float = 30.0
    model_timeout_s: float = 120.0

    # Turn lifecycle.
    default_app: str = "onemind"
    busy_policy: Literal["reject", "wait"] = "reject"
    busy_wait_s: float = 30.0
    lease_ttl_s: float = 30.0  # renewed every third of it while a turn runs
    window_events: int = 40
    window_tool_invocations: int | None = 2  # older tool calls/results leave the model's window
    event_cache_size: int = 20_000  # parsed events kept per process (0 = parse every turn)
    max_message_chars: int = 8000
    max_body_bytes: int = 256_000
    default_locale: str = "en"
    cors_origins: list[str] = Field(default_factory=list)  # e.g. ["https://app.example"] or ["*"]

    # Agent registry and MCP toolsets (issue 12, items 6-7).
    agent_config_ttl_s: float = 10.0  # how stale an instance's copy of an app's config may be
    admin_claim: str = "admin"  # the ID-token custom claim (true) that opens /v1/admin
    admin_users: list[str] = Field(default_factory=list)  # local (header) mode: admin user ids
    mcp_allow_stdio: bool = False  # configs may start local MCP server processes (never in cloud)
    mcp_breaker_failures: int = 3  # consecutive failures that open a server's circuit breaker
    mcp_breaker_cooldown_s: float = 30.0  # how long an open breaker skips its server
    mcp_max_toolsets: int = 256  # pooled per-user MCP connections per instance (LRU)
    mcp_tool_list_ttl_s: float = 60.0  # how long a server's tool list is reused

    # Set by Cloud Run / Cloud Functions: header identity never starts there.
    k_service: str | None = Field(default=None, validation_alias="K_SERVICE")

    @model_validator(mode="after")
    def _refuse_header_auth_in_cloud(self) -> Settings:
        if self.auth == "header" and self.is_cloud:
            raise ConfigurationError(
                "X-User-Id header identity is for local mode only; cloud adapters are configured "
                f"(store={self.store}, jobs={self.jobs}, K_SERVICE={self.k_service}). "
                "Set CONFIDANT_AUTH=firebase."
            )
        if self.auth == "firebase" and not self.firebase_project_id:
            raise ConfigurationError("CONFIDANT_AUTH=firebase needs CONFIDANT_FIREBASE_PROJECT_ID")
        return self

    @property
    def mcp_stdio_allowed(self) -> bool:
        return self.mcp_allow_stdio and not self.is_cloud

    @property
    def is_cloud(self) -> bool:
        return self.store == "firestore" or self.jobs == "pubsub" or self.k_service is not None
