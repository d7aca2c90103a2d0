"""Firebase ID token verification against a real local JWKS endpoint (tests/support/tokens.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from confidant.errors import AuthenticationError
from confidant.identity import FirebaseTokenVerifier, IdentityBackendError
from tests.support.tokens import TokenIssuer


@pytest.fixture(scope="module")
def issuer() -> Iterator[TokenIssuer]:
    with TokenIssuer() as token_issuer:
        yield token_issuer


@pytest.fixture
def verifier(issuer: TokenIssuer) -> FirebaseTokenVerifier:
    # A fresh verifier per test: key caches never leak between tests.
    return FirebaseTokenVerifier(issuer.project_id, issuer.jwks_url)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def rejected(verifier: FirebaseTokenVerifier, headers: dict[str, str]) -> str:
    with pytest.raises(AuthenticationError) as info:
        await verifier.verify(headers)
    assert info.value.status == 401
    return info.value.message


async def test_valid_token(issuer: TokenIssuer, verifier: FirebaseTokenVerifier) -> None:
    identity = await verifier.verify(bearer(issuer.issue("user-1")))
    assert identity.user_id == "user-1"
    assert identity.claims["email"] == "user-1@example.com"
    assert identity.claims["aud"] == issuer.project_id


async def test_header_and_scheme_are_case_insensitive(
    issuer: TokenIssuer, verifier: FirebaseTokenVerifier
) -> None:
    identity = await verifier.verify({"authorization": f"bearer {issuer.issue('u2')}"})
    assert identity.user_id == "u2"


async def test_keys_are_cached(issuer: TokenIssuer, verifier: FirebaseTokenVerifier) -> None:
    before = issuer.jwks_requests
    for uid in ("a", "b", "c"):
        assert (await verifier.verify(bearer(issuer.issue(uid)))).user_id == uid
    assert issuer.jwks_requests - before == 1


async def test_expired(issuer: TokenIssuer, verifier: FirebaseTokenVerifier) -> None:
    now = int(time.time())
    token = issuer.issue("u", exp=now - 60, iat=now - 3700, auth_time=now - 3800)
    assert "expired" in await rejected(verifier, bearer(token))


async def test_expiry_within_leeway_is_accepted(
    issuer: TokenIssuer, verifier: FirebaseTokenVerifier
) -> None:
    token = issuer.issue("u", exp=int(time.time()) - 3)
    assert (await verifier.verify(bearer(token))).user_id == "u"


async def test_wrong_audience(issuer: TokenIssuer, verifier: FirebaseTokenVerifier) -> None:
    token = issuer.issue("u", aud="someone-else")
    assert "audience" in await rejected(verifier, bearer(token))


async def test_wrong_issuer(issuer: TokenIssuer, verifier: FirebaseTokenVerifier) -> None:
    token = issuer.issue("u", iss="https://accounts.google.com")
    assert "issuer" in await rejected(verifier, bearer(token))


async def test_token_of_another_project(
    issuer: TokenIssuer, verifier: FirebaseTokenVerifier
) -> None:
    await rejected(verifier, bearer(issuer.issue("u", project_id="other-project")))


async def test_future_iat(issuer: TokenIssuer, verifier: FirebaseTokenVerifier) -> None:
    token = issuer.issue("u", iat=int(time.time()) + 300)
    assert "future" in await rejected(verifier, bearer(token))


async def test_future_auth_time(issuer: TokenIssuer, verifier: FirebaseTokenVerifier) -> None:
    token = issuer.issue("u", auth_time=int(time.time()) + 300)
    assert "auth_time" in await rejected(verifier, bearer(token))


@pytest.mark.parametrize("claim", ["auth_time", "sub", "exp", "iat"])
async def test_missing_required_claim(
    issuer: TokenIssuer, verifier: FirebaseTokenVerifier, claim: str
) -> None:
    await rejected(verifier, bearer(issuer.issue("u", **{claim: None})))


@pytest.mark.parametrize("sub", ["", "x" * 129])
async def test_subject_bounds(
    issuer: TokenIssuer, verifier: FirebaseTokenVerifier, sub: str
) -> None:
    await rejected(verifier, bearer(issuer.issue("u", sub=sub)))


async def test_bad_signature(issuer: TokenIssuer, verifier: FirebaseTokenVerifier) -> None:
    # Signed by another key but claiming the published key's kid.
    token = issuer.issue("u", key=issuer.unknown_key, kid=issuer.key.kid)
    assert "signature" in await rejected(verifier, bearer(token))


async def test_tampered_payload(issuer: TokenIssuer, verifier: FirebaseTokenVerifier) -> None:
    header, _, signature = issuer.issue("victim").split(".")
    forged_payload = issuer.issue("attacker").split(".")[1]
    assert "signature" in await rejected(verifier, bearer(f"{header}.{forged_payload}.{signature}"))


async def test_unknown_kid_is_rejected_and_refetch_is_rate_limited(
    issuer: TokenIssuer, verifier: FirebaseTokenVerifier
) -> None:
    await verifier.verify(bearer(issuer.issue("u")))  # first fetch starts the cooldown
    before = issuer.jwks_requests
    for _ in range(5):
        token = issuer.issue("u", key=issuer.unknown_key)
        assert "unknown key" in await rejected(verifier, bearer(token))
    assert issuer.jwks_requests == before  # no refetch storm within the cooldown


async def test_unknown_kid_triggers_one_refetch_after_cooldown() -> None:
    with TokenIssuer() as issuer:
        verifier = FirebaseTokenVerifier(issuer.project_id, issuer.jwks_url, refresh_cooldown_s=0)
        await verifier.verify(bearer(issuer.issue("u")))
        issuer.rotate()  # a new key, published after our first fetch
        assert (await verifier.verify(bearer(issuer.issue("u2")))).user_id == "u2"
        assert issuer.jwks_requests == 2


async def test_alg_none(issuer: TokenIssuer, verifier: FirebaseTokenVerifier) -> None:
    assert "RS256" in await rejected(verifier, bearer(issuer.issue_unsigned("u") + "sig"))
    unsigned = issuer.issue_unsigned("u")  # "header.payload." has an empty signature
    await rejected(verifier, bearer(unsigned))


async def test_hs256_algorithm_confusion(
    issuer: TokenIssuer, verifier: FirebaseTokenVerifier
) -> None:
    assert "RS256" in await rejected(verifier, bearer(issuer.issue_hs256("u")))


async def test_missing_header(verifier: FirebaseTokenVerifier) -> None:
    assert "missing Authorization" in await rejected(verifier, {"X-User-Id": "alice"})


@pytest.mark.parametrize(
    "value",
    [
        "",
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "Token abc.def.ghi",
        "Bearer abc.def",
        "Bearer a.b.c d",
        "Bearer not.a.jwt",
        "Bearer " + "a" * 9000 + ".b.c",
    ],
)
async def test_malformed_header(verifier: FirebaseTokenVerifier, value: str) -> None:
    await rejected(verifier, {"Authorization": value})


async def test_jwks_down_is_a_backend_error() -> None:
    issuer = TokenIssuer()
    issuer.start()
    issuer.stop()  # the URL now points at a closed port
    verifier = FirebaseTokenVerifier(issuer.project_id, issuer.jwks_url)
    with pytest.raises(IdentityBackendError) as info:
        await verifier.verify(bearer(issuer.issue("u")))
    assert info.value.status == 503
    assert not isinstance(info.value, AuthenticationError)


async def test_jwks_error_status_is_a_backend_error() -> None:
    with TokenIssuer() as issuer:
        issuer.jwks_status = 500
        verifier = FirebaseTokenVerifier(issuer.project_id, issuer.jwks_url)
        with pytest.raises(IdentityBackendError):
            await verifier.verify(bearer(issuer.issue("u")))


async def test_cached_keys_survive_an_outage_and_recovery() -> None:
    issuer = TokenIssuer(start=True)
    try:
        verifier = FirebaseTokenVerifier(
            issuer.project_id, issuer.jwks_url, refresh_cooldown_s=0, fetch_retry_s=0
        )
        await verifier.verify(bearer(issuer.issue("u")))
        issuer.stop()
        assert (await verifier.verify(bearer(issuer.issue("u")))).user_id == "u"
        # A rotated key needs a fetch: while down that is our failure, not the caller's.
        issuer.rotate()
        with pytest.raises(IdentityBackendError):
            await verifier.verify(bearer(issuer.issue("u")))
        issuer.start()
        assert (await verifier.verify(bearer(issuer.issue("u")))).user_id == "u"
    finally:
        issuer.stop()


async def test_expired_key_cache_falls_back_to_last_good_keys_while_jwks_is_down() -> None:
    issuer = TokenIssuer(start=True)
    try:
        verifier = FirebaseTokenVerifier(issuer.project_id, issuer.jwks_url, jwks_lifespan_s=0.05)
        await verifier.verify(bearer(issuer.issue("u")))
        issuer.stop()
        await asyncio.sleep(0.1)  # the cached key set has expired; the refetch fails
        assert (await verifier.verify(bearer(issuer.issue("u")))).user_id == "u"
    finally:
        issuer.stop()


async def test_stale_keys_are_not_used_forever() -> None:
    issuer = TokenIssuer(start=True)
    try:
        verifier = FirebaseTokenVerifier(
            issuer.project_id, issuer.jwks_url, jwks_lifespan_s=0.05, stale_keys_max_s=0.05
        )
        await verifier.verify(bearer(issuer.issue("u")))
        issuer.stop()
        await asyncio.sleep(0.1)
        with pytest.raises(IdentityBackendError):
            await verifier.verify(bearer(issuer.issue("u")))
    finally:
        issuer.stop()


async def test_failed_fetch_is_not_retried_on_every_request() -> None:
    issuer = TokenIssuer(start=True)
    try:
        verifier = FirebaseTokenVerifier(issuer.project_id, issuer.jwks_url, refresh_cooldown_s=0)
        await verifier.verify(bearer(issuer.issue("u")))
        first_key = issuer.key
        issuer.jwks_status = 500
        before = issuer.jwks_requests
        issuer.rotate()  # tokens now carry a kid we must fetch, and the endpoint fails
        for _ in range(3):
            with pytest.raises(IdentityBackendError):
                await verifier.verify(bearer(issuer.issue("u")))
        assert issuer.jwks_requests - before == 1  # then it waits fetch_retry_s
        # Tokens signed with a cached key keep working meanwhile.
        identity = await verifier.verify(bearer(issuer.issue("u", key=first_key)))
        assert identity.user_id == "u"
        assert issuer.jwks_requests - before == 1
    finally:
        issuer.stop()
