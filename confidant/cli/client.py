"""The CLI's HTTP client: the same endpoints and identity headers as any app."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from confidant.cli.exits import ExitCode


class CliError(Exception):
    """A failure the CLI reports in one line and exits on with a meaningful code."""

    def __init__(self, message: str, exit_code: ExitCode) -> None:
        super().__init__(message)
        self.exit_code = exit_code


_EXIT_BY_STATUS = {
    400: ExitCode.BAD_INPUT,
    401: ExitCode.UNAUTHENTICATED,
    403: ExitCode.UNAUTHENTICATED,
    404: ExitCode.NOT_FOUND,
    409: ExitCode.BUSY,
    413: ExitCode.BAD_INPUT,
}


def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    try:
        error = response.json()["error"]
        message, code = error["message"], error["code"]
    except (ValueError, KeyError, TypeError):
        message, code = response.text[:200] or response.reason_phrase, "http_error"
    if code == "session_busy":
        message = f"still answering the previous message: {message}"
    exit_code = _EXIT_BY_STATUS.get(response.status_code, ExitCode.SERVER_ERROR)
    raise CliError(f"{response.status_code} {message}", exit_code)


@dataclass
class ConfidantClient:
    base_url: str
    user: str | None = None
    token: str | None = None
    timeout_s: float = 120.0

    def __post_init__(self) -> None:
        headers = {}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        elif self.user:
            headers["X-User-Id"] = self.user
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=self.timeout_s)

    def close(self) -> None:
        self._http.close()

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise CliError(
                f"cannot reach {self.base_url} ({error}); is the server running (`make run`)?",
                ExitCode.UNREACHABLE,
            ) from None
        _raise_for(response)
        return response

    def apps(self) -> list[dict[str, Any]]:
        return self._request("GET", "/v1/apps").json()["apps"]

    def sessions(self, app: str) -> list[dict[str, Any]]:
        return self._request("GET", "/v1/sessions", params={"app": app}).json()["sessions"]

    def session(self, app: str, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The session and all its events (every page)."""
        events: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            params = {"app": app, "page_size": "200"} | ({"page_token": token} if token else {})
            page = self._request("GET", f"/v1/sessions/{session_id}", params=params).json()
            events += page["events"]
            token = page["next_page_token"]
            if not token:
                return page["session"], events

    def delete_session(self, app: str, session_id: str) -> None:
        self._request("DELETE", f"/v1/sessions/{session_id}", params={"app": app})

    def chat(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The reply's UI message stream parts, as they arrive."""
        try:
            with self._http.stream("POST", "/v1/chat", json=body) as response:
                if response.status_code >= 400:
                    response.read()
                    _raise_for(response)
                for line in response.iter_lines():
                    if not line.startswith("data: "):
                        continue
                    payload = line[len("data: ") :]
                    if payload == "[DONE]":
                        return
                    yield json.loads(payload)
        except httpx.TransportError as error:
            raise CliError(
                f"cannot reach {self.base_url} ({error}); is the server running (`make run`)?",
                ExitCode.UNREACHABLE,
            ) from None
