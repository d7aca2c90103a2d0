"""The stream parts we send, as pydantic models: the schema of `POST /v1/chat`'s SSE frames
(and `ChatReply`, the whole reply as one JSON object for `Accept: application/json`).

Each `data:` frame of the AI SDK UI message stream is one part, told apart by `type`; the union
of them (`stream_part_model`) is documented in `/openapi.json` as `StreamPart` with a
discriminator. Apps add `data-{name}` parts of their own through `AppSpec.data_parts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from confidant.models.retry import RetryNotice


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StartPart(_Part):
    type: Literal["start"]
    messageId: str


class TextStartPart(_Part):
    type: Literal["text-start"]
    id: str


class TextDeltaPart(_Part):
    type: Literal["text-delta"]
    id: str
    delta: str


class TextEndPart(_Part):
    type: Literal["text-end"]
    id: str


class ToolInputAvailablePart(_Part):
    type: Literal["tool-input-available"]
    toolCallId: str | None
    toolName: str
    input: dict[str, Any]


class ToolOutputAvailablePart(_Part):
    type: Literal["tool-output-available"]
    toolCallId: str | None
    output: Any


class ErrorPart(_Part):
    """A failure after the stream began: the message was not saved and may be sent again."""

    type: Literal["error"]
    errorText: str
    code: str | None = Field(
        default=None, description="our stable error code, e.g. commit_outcome_unknown"
    )


class FinishPart(_Part):
    type: Literal["finish"]


# -- the platform's data parts -------------------------------------------------------------------


class SessionData(BaseModel):
    sessionId: str
    app: str


class CrisisResource(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    phone: str | None = None
    url: str | None = None


class CrisisData(BaseModel):
    """Helplines for the user's locale, sent before the text of a reply to a crisis message."""

    model_config = ConfigDict(extra="allow")

    locale: str
    resources: list[CrisisResource]
    signals: list[str]
    requested_locale: str | None = None
    fallback: bool | None = None
    note: str | None = None


class LimitData(BaseModel):
    """Sent just before the `error` part of a reply refused mid-stream by a quota."""

    code: str
    message: str
    retryAfter: int


class ReplayData(BaseModel):
    """A resend of a message already stored: its stored reply follows, no model call."""

    messageId: str


class InterruptedData(BaseModel):
    """A newer message interrupted this reply: what it had streamed is kept as the reply."""

    reason: str
    kept: str


# `data-{name}` → its payload model; None: any JSON object. `protocol-progress` payloads come
# from each app's progress reader (AppSpec.progress), hence an open object.
PLATFORM_DATA_PARTS: Mapping[str, type[BaseModel] | None] = {
    "session": SessionData,
    "crisis": CrisisData,
    "retry": RetryNotice,
    "protocol-progress": None,
    "error": LimitData,
    "replay": ReplayData,
    "interrupted": InterruptedData,
}
# Parts without a payload shape of ours, in stream order.
FIXED_PARTS: tuple[type[BaseModel], ...] = (
    StartPart,
    TextStartPart,
    TextDeltaPart,
    TextEndPart,
    ToolInputAvailablePart,
    ToolOutputAvailablePart,
    ErrorPart,
    FinishPart,
)


def _camel(name: str) -> str:
    return "".join(word.capitalize() for word in name.replace("_", "-").split("-"))


def data_part_model(name: str, payload: type[BaseModel] | None) -> type[BaseModel]:
    """`{type: "data-{name}", data, transient?}` as a model named `Data{Name}Part`."""
    return create_model(
        f"Data{_camel(name)}Part",
        __base__=_Part,
        type=(Literal[f"data-{name}"], ...),  # type: ignore[valid-type]
        data=(payload if payload is not None else dict[str, Any], ...),
        transient=(bool | None, Field(default=None, description="not kept in the message")),
    )


@cache
def _stream_part_model(data_parts: tuple[tuple[str, type[BaseModel] | None], ...]) -> Any:
    members = [*FIXED_PARTS, *(data_part_model(name, model) for name, model in data_parts)]
    return Annotated[Union[tuple(members)], Field(discriminator="type")]  # noqa: UP007


def stream_part_model(app_data_parts: Mapping[str, type[BaseModel] | None]) -> Any:
    """The discriminated union of every part: the platform's and the apps' data parts."""
    merged = {**app_data_parts, **PLATFORM_DATA_PARTS}  # an app cannot redefine ours
    return _stream_part_model(tuple(sorted(merged.items())))


class ToolCall(BaseModel):
    name: str
    args: dict[str, Any]


class ChatReply(BaseModel):
    """The whole reply (`Accept: application/json`); each app data part by name besides."""

    model_config = ConfigDict(extra="allow")

    session_id: str
    app: str
    text: str
    tool_calls: list[ToolCall]
    progress: list[Any]
    retries: list[RetryNotice]
    pauses: list[dict[str, Any]]
    crisis: dict[str, Any] | None
