"""The chat request body: our own shape, or the AI SDK `useChat` default body."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from confidant.errors import BadRequestError

SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
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
        "messages",
        "locale",
        "trigger",
        "messageId",
        "metadata",
    }
)


class ChatRequest(BaseModel):
    app: str
    session_id: str | None
    message: str
    locale: str  # "zh" or "en", resolved
    options: dict[str, Any] = {}  # app-specific fields (e.g. skill, person_id)


def normalise_locale(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    primary = value.strip().lower().replace("_", "-").split("-")[0]
    return primary if primary in ("zh", "en") else None


def _last_user_text(messages: Any) -> str:
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


def parse_chat_request(
    body: Any, *, default_app: str, default_locale: str, max_message_chars: int, app: str | None
) -> ChatRequest:
    """Validate a request body; raises BadRequestError with the reason."""
    if not isinstance(body, dict):
        raise BadRequestError("the body must be a JSON object")
    if "message" in body:
        message = body["message"]
        if not isinstance(message, str):
            raise BadRequestError("`message` must be a string")
    elif "messages" in body:
        message = _last_user_text(body["messages"])
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
    options = {k: v for k, v in body.items() if k not in CORE_FIELDS}
    return ChatRequest(
        app=app_name, session_id=session_id, message=message, locale=locale, options=options
    )
