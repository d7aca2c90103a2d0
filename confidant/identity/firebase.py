"""Firebase / Identity Platform ID tokens: `Authorization: Bearer <JWT>`, verified locally.

The token is an RS256 JWT signed by one of Google's rotating `securetoken` keys, published as a
JWKS document. Keys are cached by PyJWT's `PyJWKClient`; an unknown `kid` forces one refetch,
rate-limited by a cooldown so a flood of forged tokens cannot hammer the JWKS endpoint. The
fetch is blocking (urllib), so every key lookup runs in a worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Mapping
from typing import Any

import jwt
from jwt import PyJWK, PyJWKClient
from jwt.exceptions import PyJWKClientConnectionError, PyJWKClientError, PyJWKSetError

from confidant.errors import AuthenticationError
from confidant.identity.errors import IdentityBackendError
from confidant.identity.header import get_header
from confidant.ports import Identity

logger = logging.getLogger(__name__)

_ALGORITHM = "RS256"
_MAX_TOKEN_CHARS = 8192  # real ID tokens are ~1 KB; refuse to parse megabytes
_MAX_SUB_CHARS = 128
# The uid becomes a storage path segment (Firestore `users/{uid}/…`, artifact paths): a `/`
# would address another user's documents (`alice/persons/p1` is Alice's person), `.`/`..` and
# `__…__` are reserved by Firestore. Firebase mints uids of letters and digits; custom uids
# (Admin SDK) are only refused here when they could escape their segment.
_UNSAFE_SUB = re.compile(r"[/\\\x00-\x1f\x7f]|^\.{1,2}$|^__.*__$")


def firebase_issuer(project_id: str) -> str:
    """The `iss` claim of ID tokens minted for `project_id`."""
    return f"https://securetoken.google.com/{project_id}"


class FirebaseTokenVerifier:
    """Verifies Firebase / Identity Platform ID tokens against the keys at `jwks_url`.

    Args:
        project_id: The Firebase project; tokens must carry `aud == project_id` and
            `iss == https://securetoken.google.com/<project_id>`.
        jwks_url: The JWKS document with the signing keys (Google's securetoken JWKS in
            production; a local server in tests).
        leeway_s: Clock skew tolerated on `exp`, `iat` and `auth_time`.
        jwks_lifespan_s: How long a fetched key set is trusted before it is fetched again.
        refresh_cooldown_s: Minimum time between fetches forced by an unknown `kid`.
        fetch_timeout_s: Timeout of one JWKS fetch; a slow endpoint must not hang requests.
        stale_keys_max_s: When a refetch fails after the cache expired, keep using the last
            good keys for this long (stale-if-error) instead of failing every request.
        fetch_retry_s: After a failed fetch, wait this long before fetching again (requests
            meanwhile use the stale keys, or fail fast with `IdentityBackendError`).
    """

    def __init__(
        self,
        project_id: str,
        jwks_url: str,
        *,
        leeway_s: int = 10,
        jwks_lifespan_s: float = 3600.0,
        refresh_cooldown_s: float = 30.0,
        fetch_timeout_s: float = 5.0,
        stale_keys_max_s: float = 6 * 3600.0,
        fetch_retry_s: float = 10.0,
    ) -> None:
        if not project_id:
            raise ValueError("project_id is required")
        self.project_id = project_id
        self.issuer = firebase_issuer(project_id)
        self.leeway_s = leeway_s
        # Google rotates keys hours before use, so an hour-long cache is safe; the cooldown
        # bounds refetches triggered by tokens with a kid we have never seen.
        self._jwks = PyJWKClient(
            jwks_url,
            cache_jwk_set=True,
            lifespan=jwks_lifespan_s,
            cooldown_duration=refresh_cooldown_s,
            timeout=fetch_timeout_s,
        )
        self._stale_keys_max_s = stale_keys_max_s
        self._last_good: tuple[float, list[PyJWK]] | None = None  # (monotonic time, keys)
        self._fetch_retry_s = fetch_retry_s
        self._retry_fetch_at = 0.0

    async def verify(self, headers: Mapping[str, str]) -> Identity:
        token = _bearer_token(headers)
        kid = self._checked_header(token)
        key = await asyncio.to_thread(self._signing_key, kid)
        claims = self._decode(token, key)
        return Identity(user_id=claims["sub"], claims=claims)

    def _checked_header(self, token: str) -> str:
        """Reject tokens whose header is not RS256 with a `kid` before any network work."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError as exc:
            raise AuthenticationError(f"malformed ID token: {exc}") from exc
        alg = header.get("alg")
        if alg != _ALGORITHM:
            raise AuthenticationError(f"ID token algorithm must be {_ALGORITHM}, got {alg!r}")
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise AuthenticationError("ID token header has no key id (kid)")
        return kid

    def _signing_key(self, kid: str) -> PyJWK:
        """Runs in a worker thread: `PyJWKClient` fetches with blocking urllib under a lock."""
        stale = self._stale_keys()
        if stale is not None and time.monotonic() < self._retry_fetch_at:
            keys = stale  # a fetch failed moments ago: do not make every request wait on it
        else:
            try:
                keys = self._jwks.get_signing_keys()
                self._last_good = (time.monotonic(), keys)
            except PyJWKClientConnectionError as exc:
                self._retry_fetch_at = time.monotonic() + self._fetch_retry_s
                if stale is None:
                    logger.warning("JWKS fetch failed: %s", exc)
                    raise IdentityBackendError(
                        "identity keys are unavailable; retry later"
                    ) from exc
                logger.warning("JWKS fetch failed, using the last good keys: %s", exc)
                keys = stale
            except (PyJWKClientError, PyJWKSetError, ValueError) as exc:
                # A key set we cannot parse is a broken backend, not a bad caller.
                logger.error("JWKS document is unusable: %s", exc)
                raise IdentityBackendError("identity keys are unusable; retry later") from exc
        key = self._jwks.match_kid(keys, kid)
        if key is not None:
            return key
        if time.monotonic() < self._retry_fetch_at:
            raise IdentityBackendError("identity keys are unavailable; retry later")
        try:
            # Refetches once unless a fetch happened within the cooldown.
            return self._jwks.get_signing_key(kid)
        except PyJWKClientConnectionError as exc:
            self._retry_fetch_at = time.monotonic() + self._fetch_retry_s
            logger.warning("JWKS refetch failed: %s", exc)
            raise IdentityBackendError("identity keys are unavailable; retry later") from exc
        except (PyJWKClientError, PyJWKSetError, ValueError) as exc:
            raise AuthenticationError("ID token is signed by an unknown key") from exc

    def _stale_keys(self) -> list[PyJWK] | None:
        if self._last_good is None:
            return None
        fetched_at, keys = self._last_good
        return keys if time.monotonic() - fetched_at <= self._stale_keys_max_s else None

    def _decode(self, token: str, key: PyJWK) -> dict[str, Any]:
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[_ALGORITHM],  # never trust the token's own alg choice
                audience=self.project_id,
                issuer=self.issuer,
                leeway=self.leeway_s,
                options={"require": ["exp", "iat", "iss", "aud", "sub", "auth_time"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise AuthenticationError("ID token has expired") from exc
        except jwt.InvalidAudienceError as exc:
            raise AuthenticationError("ID token audience is not this project") from exc
        except jwt.InvalidIssuerError as exc:
            raise AuthenticationError("ID token issuer is not this project") from exc
        except jwt.ImmatureSignatureError as exc:
            raise AuthenticationError("ID token is not valid yet (iat/nbf in the future)") from exc
        except jwt.MissingRequiredClaimError as exc:
            raise AuthenticationError(f"ID token lacks the {exc.claim!r} claim") from exc
        except jwt.InvalidSignatureError as exc:
            raise AuthenticationError("ID token signature is invalid") from exc
        except jwt.PyJWTError as exc:  # includes key/alg mismatches (InvalidKeyError)
            raise AuthenticationError(f"invalid ID token: {exc}") from exc
        self._check_times(claims)
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub or len(sub) > _MAX_SUB_CHARS:
            raise AuthenticationError("ID token subject must be 1-128 characters")
        if _UNSAFE_SUB.search(sub):
            raise AuthenticationError(
                "ID token subject must not contain '/', '\\' or control characters, "
                "nor be '.', '..' or '__…__'"
            )
        return claims

    def _check_times(self, claims: Mapping[str, Any]) -> None:
        # PyJWT checks `iat` only loosely across versions; Firebase's rules are explicit.
        now = time.time()
        for name in ("iat", "auth_time"):
            value = claims.get(name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise AuthenticationError(f"ID token {name!r} claim must be a number")
            if value > now + self.leeway_s:
                raise AuthenticationError(f"ID token {name!r} is in the future")


def _bearer_token(headers: Mapping[str, str]) -> str:
    raw = get_header(headers, "Authorization")
    if raw is None:
        raise AuthenticationError("missing Authorization header")
    scheme, _, token = raw.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise AuthenticationError("Authorization header must be 'Bearer <ID token>'")
    if len(token) > _MAX_TOKEN_CHARS or token.count(".") != 2:
        raise AuthenticationError("malformed ID token")
    return token
