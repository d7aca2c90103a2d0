"""The platform endpoints' parameters and responses as pydantic models.

Routes declare them (confidant/http/api.py); the dispatcher validates parameters with them and
handlers build their JSON with them, and `/openapi.json` is generated from the same classes.
Bodies have their models beside the code that owns them (chat request, profile patch, agent
config, relationship records).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictInt

from confidant.agentconfig import AgentConfig, ConfigVersion
from confidant.chat.requests import SESSION_ID_PATTERN, SESSION_ID_REGEX, served_apps
from confidant.ports import Int64, MemoryRecord
from confidant.profiles.model import Profile


def _empty_as_none(value: Any) -> Any:
    return None if value == "" else value


# `?app=` (empty) means the same as no `app`: the deployment's default app. A name is a storage
# path segment (Firestore `users/{uid}/apps/{app}`): `/`, `.`, `..` would be a 500 there, not a 400.
APP_NAME_REGEX = r"^[A-Za-z0-9_-]{1,64}$"  # as the admin routes match it
AppName = Annotated[str, Field(pattern=APP_NAME_REGEX)]
OptionalAppName = Annotated[AppName | None, BeforeValidator(_empty_as_none)]
OptionalInt = Annotated[Int64 | None, BeforeValidator(_empty_as_none)]


def _not_reserved(value: str) -> str:
    if not SESSION_ID_PATTERN.match(value):  # `__…__`: ids Firestore reserves
        raise ValueError("`__…__` ids are reserved")
    return value


SessionId = Annotated[str, Field(pattern=SESSION_ID_REGEX), AfterValidator(_not_reserved)]
MAX_PAGE = 200
Limit = Annotated[int, Field(ge=1, le=MAX_PAGE, description="how many, at most")]


# -- errors and small answers -----------------------------------------------------------------


class ErrorDetail(BaseModel):
    code: str = Field(description="stable, e.g. bad_request, not_found, session_busy")
    message: str = Field(description="the reason, for people")
    retry_after_s: int | None = Field(
        default=None, description="on 429: seconds until a retry can succeed (as Retry-After)"
    )


class ErrorBody(BaseModel):
    """Every error before a stream starts (4xx/5xx)."""

    error: ErrorDetail


class Health(BaseModel):
    status: str


class Erased(BaseModel):
    deleted: bool
    records: int = Field(description="how many stored records were removed")


# -- apps ---------------------------------------------------------------------------------------


class AppSkill(BaseModel):
    id: str
    title: str
    description: str


class AppEndpoint(BaseModel):
    method: str
    path: str = Field(description="a regular expression matched against the whole path")
    name: str


class AppInfo(BaseModel):
    name: str
    title: str
    description: str
    skills: list[AppSkill]
    default_skill: str | None
    endpoints: list[AppEndpoint]


class AppList(BaseModel):
    apps: list[AppInfo]


# -- sessions -------------------------------------------------------------------------------------


class AppQuery(BaseModel):
    app: OptionalAppName = Field(
        default=None,
        description="the app (default: the deployment's)",
        json_schema_extra=served_apps,
    )


class SessionParams(AppQuery):
    session_id: SessionId


class SessionPageParams(SessionParams):
    page_size: int = Field(default=50, ge=1, le=MAX_PAGE)
    page_token: OptionalInt = Field(default=None, description="`next_page_token` of a page")


class SessionSummary(BaseModel):
    text: str | None
    covers_seq: int | None


class SessionInfo(BaseModel):
    id: str
    app: str
    state: dict[str, Any]
    summary: SessionSummary | str | None
    created_at: float
    updated_at: float
    event_count: int
    busy: bool = Field(description="a turn is being answered on it right now")
    progress: dict[str, Any] | None = Field(
        description="where the session stands in its app's protocol"
    )


class SessionList(BaseModel):
    sessions: list[SessionInfo]


class SessionPage(BaseModel):
    session: SessionInfo
    events: list[dict[str, Any]] = Field(description="ADK event JSON, each with its `seq`")
    next_page_token: str | None
    pauses: list[dict[str, Any]] = Field(
        default_factory=list,
        description="what the session's paused run waits for: the data parts its turn ended "
        "with (e.g. `data-human-input-needed`), so a reloaded page can ask again",
    )


# -- artifacts ------------------------------------------------------------------------------------

ARTIFACT_NAME_REGEX = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$"


class ArtifactParams(SessionParams):
    filename: str = Field(pattern=ARTIFACT_NAME_REGEX)
    version: OptionalInt = Field(default=None, ge=0, description="latest when absent")


class ArtifactInfo(BaseModel):
    filename: str
    versions: list[int]


class ArtifactList(BaseModel):
    session_id: str
    artifacts: list[ArtifactInfo]


# -- the caller's own data ------------------------------------------------------------------------


class MemoriesQuery(BaseModel):
    app: OptionalAppName = Field(
        default=None, description="one app's (default: every app's)", json_schema_extra=served_apps
    )
    limit: Limit = 50


class MemoryList(BaseModel):
    memories: list[MemoryRecord]


class EmotionsQuery(MemoriesQuery):
    session_id: Annotated[SessionId | None, BeforeValidator(_empty_as_none)] = None


class EmotionSnapshot(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    user_mood: Any
    other_mood: Any
    trend: Any
    tags: list[Any]
    session_id: str | None
    person_id: str | None
    app: str
    turn: int | None
    created_at: str


class EmotionList(BaseModel):
    emotions: list[EmotionSnapshot]


class ProfileReply(BaseModel):
    profile: Profile


# -- chat as JSON ---------------------------------------------------------------------------------


class ChatQuery(BaseModel):
    app: OptionalAppName = Field(
        default=None,
        description="the app, when the body names none",
        json_schema_extra=served_apps,
    )


# -- admin ----------------------------------------------------------------------------------------


class AdminAppParams(BaseModel):
    app: str = Field(json_schema_extra=served_apps)


class VersionsParams(AdminAppParams):
    limit: Limit = 50


class RollbackBody(BaseModel):
    version: Annotated[StrictInt, Field(ge=1, le=2**63 - 1, description="a stored version")]


class ConfigReply(BaseModel):
    app: str
    version: int = Field(description="0 before any config is stored")
    author: str | None
    created_at: str | None
    rolled_back_from: int | None
    config: AgentConfig


class VersionList(BaseModel):
    app: str
    versions: list[ConfigVersion]
