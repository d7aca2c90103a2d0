"""Settings, read once by the composition root (never at import)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# How a message on a session that is still answering is handled (chat body `multitask_strategy`).
BusyPolicy = Literal["reject", "wait", "interrupt", "enqueue"]


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


class TierLimits(BaseModel):
    """One tier's daily limits per user (None: unlimited)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turns_per_day: int | None = Field(default=None, ge=0)
    tokens_per_day: int | None = Field(default=None, ge=0)


def _default_tiers() -> dict[str, TierLimits]:
    return {
        "free": TierLimits(turns_per_day=500, tokens_per_day=2_000_000),
        "plus": TierLimits(turns_per_day=5_000, tokens_per_day=20_000_000),
        "unlimited": TierLimits(),
    }


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
    # A message on a session that is still answering (issue 14 item 5; docs: README "Double
    # texting"): reject (409), wait (retry), interrupt (stop the running reply), enqueue (in order).
    busy_policy: BusyPolicy = "reject"
    busy_wait_s: float = 30.0
    busy_poll_s: float = 0.25  # how often queued requests and running turns look at the queue
    lease_ttl_s: float = 30.0  # renewed every third of it while a turn runs
    # Fault handling (issue 14): a store that does not answer taking the lease is a clear 503.
    store_timeout_s: float = 10.0
    # A turn's commit unanswered after this ends the stream with `commit_outcome_unknown`.
    commit_timeout_s: float = 15.0
    window_events: int = 40
    window_tool_invocations: int | None = 2  # older tool calls/results leave the model's window
    event_cache_size: int = 20_000  # parsed events kept per process (0 = parse every turn)
    max_message_chars: int = 8000
    max_body_bytes: int = 256_000
    # Quotas and limits (issue 14): daily limits by the profile's `account.tier`, per-instance
    # request rate limits (tokens per minute, burst; 0 = off), caps per turn.
    tiers: dict[str, TierLimits] = Field(default_factory=_default_tiers)
    default_tier: str = "free"  # users without a tier, or with one not in `tiers`
    rate_limit_user_per_min: float = Field(default=300.0, ge=0)
    rate_limit_user_burst: int = Field(default=60, ge=1)
    rate_limit_ip_per_min: float = Field(default=1200.0, ge=0)
    rate_limit_ip_burst: int = Field(default=300, ge=1)
    # Which X-Forwarded-For entry is the client in the cloud: 1 = the right-most (Cloud Run's
    # front end appends it), 2 behind an external Application Load Balancer (it appends its own).
    forwarded_hops: int = Field(default=1, ge=1)
    max_llm_calls_per_turn: int = Field(default=50, ge=1)
    max_tool_calls_per_turn: int = Field(default=50, ge=1)
    # Resumable streams (issue 14): each turn's parts are persisted while it streams, so a
    # client can reconnect (GET /v1/chat/{id}/stream) on any instance. 0 retention: no log.
    # Resumable this long after the turn started, then expired.
    stream_retention_s: float = Field(default=600.0, ge=0)
    # At most one log write per this interval while a turn streams.
    stream_flush_s: float = Field(default=0.2, gt=0)
    stream_max_parts: int = Field(default=4000, ge=1)  # per turn; past it the log stops
    # Per turn, encoded: under Firestore's 1 MiB document limit, whatever one batch holds.
    stream_max_bytes: int = Field(default=512_000, ge=1, le=900_000)
    stream_poll_s: float = Field(default=0.25, gt=0)  # how often a resume looks for new parts
    default_locale: str = "en"

    # Crisis guard: the learned n-gram layer after the lexicon (agents/safety/ngram.py; the
    # default is chosen from the held-out measurements in docs/safety.md).
    crisis_model: bool = True
    # Crisis guard: a model classifier as a second layer after the lexicon (off: lexicon only).
    crisis_classifier: bool = False
    crisis_classifier_timeout_s: float = 1.5
    cors_origins: list[str] = Field(default_factory=list)  # e.g. ["https://app.example"] or ["*"]

    # Web page, traces and logs (issue 13).
    web_ui: bool | None = None  # the chat page at `/`; None = on in local mode, off in the cloud
    trace_exporter: Literal["none", "console", "otlp", "cloudtrace"] = "none"
    otlp_endpoint: str | None = None  # e.g. http://127.0.0.1:4318/v1/traces
    langfuse_host: str | None = None  # e.g. https://cloud.langfuse.com: spans also go there
    langfuse_public_key: str | None = None
    langfuse_secret_key: str | None = None
    trace_content: bool = False  # put prompts and replies in ADK's spans (they leave the process)
    log_format: Literal["text", "json"] = "text"  # json = Cloud Logging structured lines
    log_level: str = "INFO"
    # taskflow (issue 12): the task system it writes to, and its loop limits.
    tasks: Literal["local", "notion"] = "local"
    notion_token: str | None = None  # Secret Manager → env in the cloud
    notion_database_id: str | None = None
    notion_base_url: str = "https://api.notion.com"
    notion_version: str = "2022-06-28"
    notion_max_attempts: int = 4  # per request, 429s included (honouring Retry-After)
    taskflow_max_detail_rounds: int = 4
    taskflow_max_classification_corrections: int = 2
    # Artifacts (issue 12): files the agents save (taskflow's final task), per session.
    # auto = Cloud Storage when a bucket is set, else local files beside the embedded store
    # (none with Firestore and no bucket: an instance's disk is not storage).
    artifacts: Literal["auto", "local", "gcs", "none"] = "auto"
    artifacts_dir: str | None = None  # default: `artifacts/` next to the SQLite file
    artifacts_bucket: str | None = None
    # Post-turn jobs (issue 7): job service, outbox sweep.
    job_deadline_s: float = 50.0  # one job attempt's limit; below the ack deadline (infra: 300 s)
    job_publish_timeout_s: float = 10.0  # how long a turn waits for Pub/Sub to accept its jobs
    sweep_limit: int = 100  # outbox entries one sweep republishes at most (oldest first)
    sweep_grace_s: float = 120.0  # an entry still pending after this is republished
    sweep_max_republish: int = 5  # republished this often and still pending: abandoned
    sweep_interval_s: float = 60.0  # embedded default: the in-process sweep's period (0 = off)
    # Wisdom retrieval and embeddings (issue 11). Vertex AI embeddings use the Gemini
    # credentials above (GOOGLE_GENAI_USE_VERTEXAI + GOOGLE_CLOUD_PROJECT/LOCATION, or a key).
    embeddings: Literal["hashed", "vertex"] = "hashed"
    embedding_model: str = "gemini-embedding-001"
    embedding_dimensions: int = 768
    embedding_batch_size: int | None = None  # None: the model's documented per-request limit
    embedding_timeout_s: float = 10.0
    vector_search_endpoint_domain: str | None = None  # the index endpoint's public domain
    vector_search_index_endpoint: str | None = None  # projects/…/indexEndpoints/…
    vector_search_deployed_index_id: str | None = None
    vector_search_index: str | None = None  # projects/…/indexes/… (ingestion writes here)
    vector_search_api_url: str | None = None  # default: https://{region}-aiplatform.googleapis.com
    wisdom_per_source_limit: int = 1  # chunks of one passage among the hits
    wisdom_timeout_s: float = 4.0  # embedding + search; beyond it the coach goes on without
    # Guided protocols (issue 10): a protocol untouched this long asks the user to confirm.
    protocol_timeout_s: float = Field(default=3600.0, gt=0)
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
        if self.tasks == "notion" and not (self.notion_token and self.notion_database_id):
            raise ConfigurationError(
                "CONFIDANT_TASKS=notion needs CONFIDANT_NOTION_TOKEN and "
                "CONFIDANT_NOTION_DATABASE_ID"
            )
        if self.artifacts == "gcs" and not self.artifacts_bucket:
            raise ConfigurationError("CONFIDANT_ARTIFACTS=gcs needs CONFIDANT_ARTIFACTS_BUCKET")
        if self.wisdom == "vertex" and not (
            self.vector_search_endpoint_domain
            and self.vector_search_index_endpoint
            and self.vector_search_deployed_index_id
        ):
            raise ConfigurationError(
                "CONFIDANT_WISDOM=vertex needs CONFIDANT_VECTOR_SEARCH_ENDPOINT_DOMAIN, "
                "CONFIDANT_VECTOR_SEARCH_INDEX_ENDPOINT and "
                "CONFIDANT_VECTOR_SEARCH_DEPLOYED_INDEX_ID"
            )
        if self.wisdom == "vertex" and self.embeddings != "vertex":
            raise ConfigurationError(
                "CONFIDANT_WISDOM=vertex needs CONFIDANT_EMBEDDINGS=vertex: the index holds "
                "Vertex AI embeddings"
            )
        if self.default_tier not in self.tiers:
            raise ConfigurationError(
                f"CONFIDANT_DEFAULT_TIER={self.default_tier!r} is not one of CONFIDANT_TIERS: "
                + ", ".join(sorted(self.tiers))
            )
        if self.auth == "firebase" and not self.firebase_project_id:
            raise ConfigurationError("CONFIDANT_AUTH=firebase needs CONFIDANT_FIREBASE_PROJECT_ID")
        return self

    @property
    def web_enabled(self) -> bool:
        return self.web_ui if self.web_ui is not None else not self.is_cloud

    @property
    def mcp_stdio_allowed(self) -> bool:
        return self.mcp_allow_stdio and not self.is_cloud

    @property
    def is_cloud(self) -> bool:
        return self.store == "firestore" or self.jobs == "pubsub" or self.k_service is not None
