"""scripts/smoke_test.py (what Cloud Build runs after a deploy) against the real chat server.

The server is functions-framework on the emulators with Firebase auth; sign-in goes to a local
server speaking Identity Toolkit's signInWithPassword wire format, which hands out ID tokens
signed by the test issuer the chat server trusts.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.e2e.conftest import REPO
from tests.support.fake_http import FakeHttpServer
from tests.support.tokens import TokenIssuer

EMAIL, PASSWORD = "smoke@example.com", "correct horse"


class FakeIdentityToolkit(FakeHttpServer[dict, None]):
    def __init__(self, issuer: TokenIssuer) -> None:
        super().__init__()
        self.issuer = issuer

    def build_app(self) -> Starlette:
        async def sign_in(request: Request) -> JSONResponse:
            body = await request.json()
            if request.query_params.get("key") != "web-key":
                return JSONResponse({"error": {"code": 400, "message": "API key not valid"}}, 400)
            if (body.get("email"), body.get("password")) != (EMAIL, PASSWORD):
                return JSONResponse({"error": {"code": 400, "message": "INVALID_PASSWORD"}}, 400)
            assert body.get("returnSecureToken") is True
            token = self.issuer.issue("smoke-user", email=EMAIL)
            return JSONResponse({"idToken": token, "localId": "smoke-user", "expiresIn": "3600"})

        return Starlette(
            routes=[Route("/v1/accounts:signInWithPassword", sign_in, methods=["POST"])]
        )


@pytest.fixture
def identity_toolkit(token_issuer: TokenIssuer) -> Iterator[FakeIdentityToolkit]:
    server = FakeIdentityToolkit(token_issuer).start()
    yield server
    server.stop()


def run_smoke(url: str, *args: str, password: str = PASSWORD) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "scripts/smoke_test.py", "--url", url, "--timeout", "60", *args],
        cwd=REPO,
        env={"SMOKE_PASSWORD": password, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def sign_in_args(toolkit: FakeIdentityToolkit) -> list[str]:
    return ["--api-key", "web-key", "--email", EMAIL, "--identity-toolkit-url", toolkit.base_url]


def test_smoke_test_passes_on_a_working_deployment(cloud_server, identity_toolkit) -> None:
    server = cloud_server()
    result = run_smoke(server.base_url, *sign_in_args(identity_toolkit))
    assert result.returncode == 0, result.stderr + server.log()
    assert "smoke test passed" in result.stdout and "[DONE]" in result.stdout


def test_smoke_test_fails_when_sign_in_fails(cloud_server, identity_toolkit) -> None:
    server = cloud_server()
    result = run_smoke(server.base_url, *sign_in_args(identity_toolkit), password="wrong")
    assert result.returncode == 1
    assert "sign-in failed (400)" in result.stderr and "INVALID_PASSWORD" in result.stderr


def test_smoke_test_fails_when_the_service_rejects_the_user(cloud_server, token_issuer) -> None:
    # A token of another Firebase project than the deployment's is refused.
    server = cloud_server()
    token = token_issuer.issue("smoke-user", project_id="another-project")
    result = run_smoke(server.base_url, "--id-token", token)
    assert result.returncode == 1
    assert "chat answered 401" in result.stderr
