"""Smoke test of a deployed chat service: a signed-in test user, one streamed turn, `[DONE]`.

    python scripts/smoke_test.py --url https://confidant-chat-xyz.a.run.app \\
        --api-key "$FIREBASE_WEB_API_KEY" --email smoke@example.com   # password: $SMOKE_PASSWORD

Signs the test user in with email and password (Identity Toolkit's signInWithPassword, the REST
call behind Firebase Auth), sends one chat message on a fresh session with the ID token, reads
the AI SDK UI message stream to its end and checks: 200, the stream header, some text, a
`finish` part, no `error` part and the closing `data: [DONE]`. Then deletes the session.
Exit status 0 when all hold, 1 with the reason otherwise (cloudbuild.yaml rolls back on 1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from typing import Any

import httpx

IDENTITY_TOOLKIT = "https://identitytoolkit.googleapis.com"
MESSAGE = "Hello, this is a deployment check. How are you?"


class SmokeTestError(Exception):
    pass


def sign_in(base: str, api_key: str, email: str, password: str, *, timeout: float) -> str:
    """The test user's Firebase ID token."""
    response = httpx.post(
        f"{base}/v1/accounts:signInWithPassword",
        params={"key": api_key},
        json={"email": email, "password": password, "returnSecureToken": True},
        timeout=timeout,
    )
    if response.status_code != 200:
        raise SmokeTestError(f"sign-in failed ({response.status_code}): {response.text[:300]}")
    return response.json()["idToken"]


def parse_stream(body: str) -> tuple[list[dict[str, Any]], bool]:
    """The parts of an SSE body and whether `data: [DONE]` closed it."""
    parts: list[dict[str, Any]] = []
    done = False
    for frame in body.split("\n\n"):
        frame = frame.strip()
        if not frame:
            continue
        if not frame.startswith("data: "):
            raise SmokeTestError(f"not an SSE data frame: {frame[:200]!r}")
        payload = frame.removeprefix("data: ")
        if payload == "[DONE]":
            done = True
        elif done:
            raise SmokeTestError("a part arrived after [DONE]")
        else:
            parts.append(json.loads(payload))
    return parts, done


def one_turn(url: str, token: str, *, app: str, message: str, timeout: float) -> str:
    """Stream one turn on a fresh session; returns the reply text."""
    session_id = f"smoke-{uuid.uuid4().hex[:12]}"
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, timeout=timeout, headers=headers) as client:
        try:
            with client.stream(
                "POST", "/v1/chat", json={"message": message, "session_id": session_id, "app": app}
            ) as response:
                body = response.read().decode()
                if response.status_code != 200:
                    raise SmokeTestError(f"chat answered {response.status_code}: {body[:300]}")
                if response.headers.get("x-vercel-ai-ui-message-stream") != "v1":
                    raise SmokeTestError("no x-vercel-ai-ui-message-stream: v1 header")
            parts, done = parse_stream(body)
            errors = [p for p in parts if p.get("type") == "error"]
            if errors:
                raise SmokeTestError(f"the stream carried an error part: {errors[0]}")
            text = "".join(p.get("delta", "") for p in parts if p.get("type") == "text-delta")
            if not text.strip():
                raise SmokeTestError("the reply has no text")
            if not any(p.get("type") == "finish" for p in parts):
                raise SmokeTestError("no finish part")
            if not done:
                raise SmokeTestError("the stream did not end with data: [DONE]")
            return text
        finally:
            # Leave nothing behind (best effort: a failed turn may not have created it).
            try:
                client.delete(f"/v1/sessions/{session_id}", params={"app": app})
            except httpx.HTTPError:
                pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="chat service URL")
    parser.add_argument("--id-token", help="use this Firebase ID token instead of signing in")
    parser.add_argument("--api-key", help="Firebase web API key (sign-in)")
    parser.add_argument("--email", help="test user's email (sign-in)")
    parser.add_argument(
        "--password-env", default="SMOKE_PASSWORD", help="env var holding the password"
    )
    parser.add_argument("--identity-toolkit-url", default=IDENTITY_TOOLKIT)
    parser.add_argument("--app", default="onemind")
    parser.add_argument("--message", default=MESSAGE)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    try:
        token = args.id_token
        if token is None:
            password = os.environ.get(args.password_env)
            if not (args.api_key and args.email and password):
                raise SmokeTestError(
                    f"need --id-token, or --api-key, --email and ${args.password_env}"
                )
            token = sign_in(
                args.identity_toolkit_url.rstrip("/"),
                args.api_key,
                args.email,
                password,
                timeout=args.timeout,
            )
        text = one_turn(
            args.url.rstrip("/"), token, app=args.app, message=args.message, timeout=args.timeout
        )
    except (SmokeTestError, httpx.HTTPError, json.JSONDecodeError) as error:
        print(f"SMOKE TEST FAILED: {error}", file=sys.stderr)
        return 1
    print(f"smoke test passed: {len(text)} characters streamed, then [DONE]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
