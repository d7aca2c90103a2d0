"""The chat request body: our own shape, or the AI SDK `useChat` default body."""

from __future__ import annotations

import re
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from confidant.errors import BadRequestError, validation_reasons
from confidant.settings import BusyPolicy

SESSION_ID_REGEX = r"^[A-Za-z0-9_-]{1,128}$"  # the documented pattern (no look-around)
# Not `__…__` either: Firestore reserves such document ids (the request would fail, not 404).
SESSION_ID_PATTERN = re.compile(r"^(?!__.*__$)[A-Za-z0-9_-]{1,128}$")
MESSAGE_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


# Body fields of the chat request itself (ours and useChat's); any other field is an
# app-specific option, validated by the app's `options_model`.
CORE_FIELDS = frozenset(
    {
        "app",
        "session_id",
        "sessionId",
        "id",
        "message",
        "message_id",
        "messages",
        "locale",
        "trigger",
        "messageId",
        "metadata",
        "multitask_strategy",
    }
)
# Double texting (confidant/chat/busy.py), LangGraph Platform's names.
MULTITASK_STRATEGIES: tuple[str, ...] = get_args(BusyPolicy)


def _no_default(schema: dict[str, Any]) -> None:
    # Absent is fine, null is not: the document must not offer `null` as the default.
    schema.pop("default", None)


def served_apps(schema: dict[str, Any]) -> None:
    """`json_schema_extra` of an app name: the apps served, read when a document is generated
    (every app has registered by then; importing the registry here at import time would loop)."""
    import agents

    schema["enum"] = sorted(agents.app_names())
    schema.pop("default", None)


def _absent(description: str) -> Any:
    return Field(default=None, description=description, json_schema_extra=_no_default)


class UIMessagePart(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str = _absent("the text of a `text` part")


class UIMessage(BaseModel):
    """A `useChat` message (AI SDK 5: `parts`; AI SDK 4: `content`)."""

    model_config = ConfigDict(extra="allow")

    role: str
    id: str = _absent("the client's message id")
    parts: list[UIMessagePart] = _absent("the message's parts; text parts are read")
    content: str = _absent("the AI SDK 4 shape")


class ChatBody(BaseModel):
    """`POST /v1/chat`: our own body or the `useChat` default body (`id`, `messages`).

    Any other field is an option of the app (e.g. `skill`, `person_id`), validated by the
    app's own options model before the session is touched.
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={"anyOf": [{"required": ["message"]}, {"required": ["messages"]}]},
    )

    app: str = Field(default=None, min_length=1, json_schema_extra=served_apps)
    session_id: str = Field(
        default=None,
        pattern=SESSION_ID_REGEX,
        json_schema_extra=_no_default,
        description="the session to continue or start (one is made up when absent)",
    )
    sessionId: str = _absent("the same as `session_id`")
    id: str = _absent("useChat's chat id: the session id when neither of the above is sent")
    message: str = _absent("the user's message")
    messages: list[UIMessage] = Field(
        default=None,
        min_length=1,
        json_schema_extra=_no_default,
        description="useChat's messages: the last user message is the one sent",
    )
    locale: str | None = Field(default=None, description="zh or en (zh-CN and the like too)")
    message_id: str = Field(
        default=None,
        pattern=MESSAGE_ID_PATTERN.pattern,
        json_schema_extra=_no_default,
        description="the client's id of this message: a resend of a stored one gets the stored "
        "reply (no second model call, no second copy); useChat's `messages[].id` by default",
    )
    multitask_strategy: BusyPolicy = Field(
        default=None,
        json_schema_extra=_no_default,
        description="double texting: what to do when the session is still answering "
        "(default: the app's, else CONFIDANT_BUSY_POLICY)",
    )
    trigger: str | None = None
    messageId: str | None = None
    metadata: Any = None


class ChatRequest(BaseModel):
    app: str
    session_id: str | None
    message: str
    locale: str  # "zh" or "en", resolved
    options: dict[str, Any] = {}  # app-specific fields (e.g. skill, person_id)
    # The client's id of this user message: the turn's idempotency key (chat/idempotency.py).
    message_id: str | None = None
    multitask_strategy: str | None = None  # None: the app's, else the deployment's


def normalise_locale(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    primary = value.strip().lower().replace("_", "-").split("-")[0]
    return primary if primary in ("zh", "en") else None


def last_user_text(messages: Any) -> str:
    """The text the chat answers in useChat's `messages`: the last user message's text parts
    (AI SDK 5), or its `content` (AI SDK 4); BadRequestError when there is none."""
    if not isinstance(messages, list) or not messages:
        raise BadRequestError("`messages` must be a non-empty list")
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            parts = message.get("parts")
            if isinstance(parts, list):
                texts = [
                    p.get("text", "")
                    for p in parts
                    if isinstance(p, dict) and p.get("type") == "text"
                ]
                return "".join(t for t in texts if isinstance(t, str))
            content = message.get("content")  # AI SDK 4 shape
            if isinstance(content, str):
                return content
            raise BadRequestError("the last user message has no text parts")
    raise BadRequestError("`messages` holds no user message")


def _message_id(body: dict[str, Any]) -> str | None:
    """`message_id`, or the AI SDK's id of the last user message when it submits one (a
    `regenerate-message` asks for a new reply to the same message: no key, a fresh turn)."""
    if "message_id" in body:
        value = body["message_id"]
    elif "message" not in body and body.get("trigger", "submit-message") == "submit-message":
        users = [m for m in body["messages"] if isinstance(m, dict) and m.get("role") == "user"]
        value = users[-1].get("id") if users else None
    else:
        return None
    if value is None:
        return None
    if not isinstance(value, str) or not MESSAGE_ID_PATTERN.match(value):
        raise BadRequestError("`message_id` must be 1-128 characters of A-Z a-z 0-9 _ - . :")
    return value


def parse_chat_request(
    body: Any, *, default_app: str, default_locale: str, max_message_chars: int, app: str | None
) -> ChatRequest:
    """Validate a request body; raises BadRequestError with the reason."""
    if not isinstance(body, dict):
        raise BadRequestError("the body must be a JSON object")
    try:
        ChatBody.model_validate(body)
    except ValidationError as exc:
        raise BadRequestError(f"invalid chat body: {validation_reasons(exc)}") from None
    if "message" in body:
        message = body["message"]
        if not isinstance(message, str):
            raise BadRequestError("`message` must be a string")
    elif "messages" in body:
        message = last_user_text(body["messages"])
    else:
        raise BadRequestError("the body needs `message` (or a useChat `messages` list)")
    message = message.strip()
    if not message:
        raise BadRequestError("the message is empty")
    if len(message) > max_message_chars:
        raise BadRequestError(
            f"the message has {len(message)} characters; at most {max_message_chars} are accepted"
        )

    session_id = body.get("session_id", body.get("sessionId", body.get("id")))
    if session_id is not None and (
        not isinstance(session_id, str) or not SESSION_ID_PATTERN.match(session_id)
    ):
        raise BadRequestError("`session_id` must be 1-128 characters of A-Z a-z 0-9 _ -")

    app_name = body.get("app", app or default_app)
    if not isinstance(app_name, str) or not app_name:
        raise BadRequestError("`app` must be a non-empty string")

    requested = body.get("locale")
    if requested is not None and normalise_locale(requested) is None:
        raise BadRequestError("`locale` must be zh or en (a region such as zh-CN is fine)")
    locale = normalise_locale(requested) or ("zh" if _CJK.search(message) else default_locale)
    strategy = body.get("multitask_strategy")
    if strategy is not None and strategy not in MULTITASK_STRATEGIES:
        raise BadRequestError(
            f"`multitask_strategy` must be one of {', '.join(MULTITASK_STRATEGIES)}"
        )
    options = {k: v for k, v in body.items() if k not in CORE_FIELDS}
    return ChatRequest(
        app=app_name,
        session_id=session_id,
        message=message,
        locale=locale,
        options=options,
        message_id=_message_id(body),
        multitask_strategy=strategy,
    )
