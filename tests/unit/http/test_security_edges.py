"""The edges of the security matrix through the HTTP layer: Firebase ID tokens that must be
refused (401 with a reason; keys minted here and served by a local JWKS endpoint that
`CONFIDANT_JWKS_URL` points at), header identity refused in any cloud setting, and CORS."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterator

import jwt
import pytest

from confidant.settings import Settings
from tests.support.tokens import TokenIssuer

ORIGIN = "https://app.example"


@pytest.fixture(scope="module")
def issuer() -> Iterator[TokenIssuer]:
    with TokenIssuer() as token_issuer:
        yield token_issuer


def _tampered(issuer: TokenIssuer) -> str:
    """A's genuine token with its payload changed after signing (sub → mallory)."""
    header, payload, signature = issuer.issue("alice").split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["sub"] = claims["user_id"] = "mallory"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{forged}.{signature}"


def _bad_tokens() -> dict[str, tuple[Callable[[TokenIssuer], str], str]]:
    """name → (token maker, a word of the reason the 401 must give)."""
    now = int(time.time())
    return {
        "expired": (lambda i: i.issue("alice", exp=now - 120, iat=now - 3720), "expired"),
        "iat in the future": (lambda i: i.issue("alice", iat=now + 600), "future"),
        "nbf in the future": (lambda i: i.issue("alice", nbf=now + 600), "not valid yet"),
        "auth_time in the future": (lambda i: i.issue("alice", auth_time=now + 600), "future"),
        "another audience": (lambda i: i.issue("alice", aud="another-project"), "audience"),
        "another issuer": (
            lambda i: i.issue("alice", iss="https://securetoken.google.com/another"),
            "issuer",
        ),
        "another project": (lambda i: i.issue("alice", project_id="another-project"), "project"),
        "unsigned (alg none)": (lambda i: i.issue_unsigned("alice"), "RS256"),
        "HS256 with the public key": (lambda i: i.issue_hs256("alice"), "RS256"),
        "tampered payload": (_tampered, "signature"),
        "unknown key": (lambda i: i.issue("alice", key=i.unknown_key), "unknown key"),
        "wrong kid": (lambda i: i.issue("alice", kid=i.unknown_key.kid), "unknown key"),
        "known kid, unknown key": (
            lambda i: i.issue("alice", key=i.unknown_key, kid=i.key.kid),
            "signature",
        ),
        "no kid": (
            lambda i: jwt.encode(i.claims("alice"), i.key.private_key, algorithm="RS256"),
            "kid",
        ),
        "empty sub": (lambda i: i.issue("alice", sub=""), "subject"),
        "no sub": (lambda i: i.issue("alice", sub=None), "sub"),
        # A uid is a storage path segment: `users/alice/persons/p1` is Alice's person.
        "sub with a slash": (lambda i: i.issue("alice", sub="alice/persons/p1"), "'/'"),
        "sub '..'": (lambda i: i.issue("alice", sub=".."), "'..'"),
        "sub reserved by Firestore": (lambda i: i.issue("alice", sub="__alice__"), "__"),
        "sub with a control character": (lambda i: i.issue("alice", sub="ali\nce"), "control"),
        "no exp": (lambda i: i.issue("alice", exp=None), "exp"),
        "not a JWT": (lambda i: "not-a-token", "malformed"),
    }


@pytest.mark.parametrize("name", list(_bad_tokens()))
async def test_bad_id_tokens_are_401_with_a_reason(make_client, issuer, name) -> None:
    client, runtime = make_client(
        auth="firebase", firebase_project_id=issuer.project_id, jwks_url=issuer.jwks_url
    )
    make, reason = _bad_tokens()[name]
    sound = {"Authorization": f"Bearer {issuer.issue('a')}"}
    good = await client.get("/v1/me/profile", headers=sound)
    assert good.status_code == 200  # the same client accepts a sound token
    for path, method in (("/v1/me/profile", "GET"), ("/v1/chat", "POST")):
        response = await client.request(
            method,
            path,
            headers={"Authorization": f"Bearer {make(issuer)}"},
            json={"message": "hi"} if method == "POST" else None,
        )
        assert response.status_code == 401, (name, response.text)
        error = response.json()["error"]
        assert error["code"] == "unauthenticated" and reason in error["message"], error
    assert await runtime.store.list_sessions(app="onemind", user_id="alice") == []


@pytest.mark.parametrize(
    "cloud",
    [{"store": "firestore"}, {"jobs": "pubsub"}, {"K_SERVICE": "confidant-chat"}],
    ids=["firestore", "pubsub", "cloud-run"],
)
def test_header_identity_never_starts_in_the_cloud(cloud, monkeypatch) -> None:
    for name, value in cloud.items():
        if name.isupper():
            monkeypatch.setenv(name, value)
    explicit = {k: v for k, v in cloud.items() if not k.isupper()}
    # Raised in a validator, so pydantic wraps it; confidant-local and bootstrap catch both.
    with pytest.raises(ValueError, match="X-User-Id header identity is for local mode"):
        Settings(auth="header", **explicit)
    with pytest.raises(ValueError, match="X-User-Id"):
        Settings(**explicit)  # header identity is the default: the cloud must name firebase
    Settings(auth="firebase", firebase_project_id="p", **explicit)


async def test_cors_answers_only_configured_origins(make_client) -> None:
    client, _ = make_client(cors_origins=[ORIGIN])
    preflight = {
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
    }
    allowed = await client.options("/v1/chat", headers={"origin": ORIGIN, **preflight})
    assert allowed.status_code == 204
    assert allowed.headers["access-control-allow-origin"] == ORIGIN
    assert "authorization" in allowed.headers["access-control-allow-headers"]
    assert "POST" in allowed.headers["access-control-allow-methods"]
    assert allowed.headers["vary"] == "Origin"
    real = await client.get("/v1/me/profile", headers={"origin": ORIGIN, "X-User-Id": "a"})
    assert real.headers["access-control-allow-origin"] == ORIGIN
    refused = await client.get("/v1/me/profile", headers={"origin": ORIGIN})  # 401 is readable
    assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == ORIGIN

    for other in (
        "https://evil.example",
        "https://app.example.evil.example",
        "null",
        "http://app.example",
    ):
        pre = await client.options("/v1/chat", headers={"origin": other, **preflight})
        got = await client.get("/v1/me/profile", headers={"origin": other, "X-User-Id": "a"})
        for response in (pre, got):
            assert not [h for h in response.headers if h.startswith("access-control-")], other
            assert response.headers["vary"] == "Origin"  # caches keep origins apart
    for response in (allowed, real, refused):
        assert "access-control-allow-credentials" not in response.headers


async def test_cors_is_off_unless_configured_and_star_only_when_configured(make_client) -> None:
    closed, _ = make_client()
    response = await closed.options(
        "/v1/chat", headers={"origin": ORIGIN, "access-control-request-method": "POST"}
    )
    assert not [h for h in response.headers if h.startswith("access-control-")]

    star, _ = make_client(cors_origins=["*"])
    for origin in (ORIGIN, "https://anyone.example"):
        response = await star.get("/v1/apps", headers={"origin": origin})
        assert response.headers["access-control-allow-origin"] == "*"
        assert "access-control-allow-credentials" not in response.headers


async def test_the_cloud_entry_point_never_serves_with_header_identity(monkeypatch) -> None:
    from confidant import bootstrap

    monkeypatch.setattr(bootstrap, "_runtime", None)
    monkeypatch.setenv("K_SERVICE", "confidant-chat")
    for name in ("CONFIDANT_AUTH", "CONFIDANT_STORE", "CONFIDANT_JOBS"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="X-User-Id header identity is for local mode"):
        await bootstrap.get_runtime()  # what every request of functions/main.py awaits first
    assert bootstrap._runtime is None  # nothing half-built is kept for the next request


@pytest.mark.parametrize("app", ["a/b", "..", "x%2Fsessions%2Fy"])
async def test_an_app_name_that_is_not_one_path_segment_is_a_400(make_client, app) -> None:
    # The app names a storage path segment (Firestore users/{uid}/apps/{app}/...).
    client, _ = make_client()
    alice = {"X-User-Id": "alice"}
    for path in (
        f"/v1/sessions?app={app}",
        f"/v1/sessions/s1?app={app}",
        f"/v1/me/memories?app={app}",
    ):
        response = await client.get(path, headers=alice)
        assert response.status_code == 400, (path, response.text)
        assert "app" in response.json()["error"]["message"]
    assert (await client.get("/v1/sessions?app=", headers=alice)).status_code == 200
