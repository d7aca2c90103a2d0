"""A stand-in for Google's securetoken service: RSA keys, a JWKS endpoint, Firebase-shaped tokens.

Usage (any test module, or an end-to-end test that starts the server in a subprocess with
`CONFIDANT_JWKS_URL=issuer.jwks_url` and `CONFIDANT_FIREBASE_PROJECT_ID=issuer.project_id`):

    with TokenIssuer() as issuer:
        token = issuer.issue("user-1")
        headers = {"Authorization": f"Bearer {token}"}

The JWKS server is a real HTTP server on 127.0.0.1 (free port, daemon thread), so the verifier
under test does its real fetch; `issuer.jwks_requests` counts fetches for cache tests.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

DEFAULT_PROJECT = "confidant-test-auth"
JWKS_PATH = "/robot/v1/metadata/jwk/securetoken@system.gserviceaccount.com"


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private_key: rsa.RSAPrivateKey

    @classmethod
    def generate(cls) -> SigningKey:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return cls(kid=uuid.uuid4().hex, private_key=key)

    def public_jwk(self) -> dict[str, Any]:
        jwk: dict[str, Any] = json.loads(RSAAlgorithm.to_jwk(self.private_key.public_key()))
        jwk.update({"kid": self.kid, "alg": "RS256", "use": "sig"})
        return jwk


class TokenIssuer:
    """Issues Firebase ID tokens and serves the JWKS that verifies them.

    Args:
        project_id: The Firebase project the tokens are minted for (`aud`, `iss`).
        start: Start the JWKS server now (otherwise on `__enter__` / `start()`).
    """

    def __init__(self, project_id: str = DEFAULT_PROJECT, *, start: bool = False) -> None:
        self.project_id = project_id
        self.key = SigningKey.generate()
        # Same shape as a real key, never published: tokens signed with it have an unknown kid.
        self.unknown_key = SigningKey.generate()
        self._published: list[SigningKey] = [self.key]
        self._lock = threading.Lock()
        self.jwks_requests = 0
        self.jwks_status = 200  # set to 500 to simulate a failing (but reachable) endpoint
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        if start:
            self.start()

    # --- server -------------------------------------------------------------------------

    @property
    def jwks_url(self) -> str:
        if self._port is None:
            raise RuntimeError("TokenIssuer is not started")
        return f"http://127.0.0.1:{self._port}{JWKS_PATH}"

    def start(self) -> TokenIssuer:
        if self._server is not None:
            return self
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with issuer._lock:
                    issuer.jwks_requests += 1
                    status = issuer.jwks_status
                    body = json.dumps(issuer.jwks()).encode()
                if self.path.split("?")[0] != JWKS_PATH:
                    status, body = 404, b"{}"
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "public, max-age=3600")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        # Reuse the port on restart, so `stop()` then `start()` models an outage and recovery.
        server = ThreadingHTTPServer(("127.0.0.1", self._port or 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._port = int(server.server_address[1])
        self._thread = threading.Thread(target=server.serve_forever, name="jwks", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; `jwks_url` keeps pointing at the (now closed) port."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> TokenIssuer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- keys ---------------------------------------------------------------------------

    def jwks(self) -> dict[str, Any]:
        return {"keys": [key.public_jwk() for key in self._published]}

    def rotate(self) -> SigningKey:
        """Publish a new key and make it the one `issue()` signs with (old keys stay published)."""
        new_key = SigningKey.generate()
        with self._lock:
            self._published.append(new_key)
        self.key = new_key
        return new_key

    # --- tokens -------------------------------------------------------------------------

    def claims(self, uid: str, **overrides: Any) -> dict[str, Any]:
        """Firebase ID token claims for `uid`; an override of `None` removes the claim."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": f"https://securetoken.google.com/{self.project_id}",
            "aud": self.project_id,
            "auth_time": now - 60,
            "user_id": uid,
            "sub": uid,
            "iat": now,
            "exp": now + 3600,
            "email": f"{uid}@example.com",
            "email_verified": True,
            "firebase": {"identities": {}, "sign_in_provider": "password"},
        }
        for name, value in overrides.items():
            if value is None:
                claims.pop(name, None)
            else:
                claims[name] = value
        return claims

    def issue(
        self,
        uid: str,
        *,
        key: SigningKey | None = None,
        kid: str | None = None,
        project_id: str | None = None,
        headers: dict[str, Any] | None = None,
        **claim_overrides: Any,
    ) -> str:
        """A signed RS256 ID token.

        Args:
            uid: The user id (`sub` and `user_id`).
            key: Sign with this key instead of the current one (e.g. `issuer.unknown_key`).
            kid: Put this key id in the header instead of the signing key's.
            project_id: Mint for another project (its `aud` and `iss`).
            headers: Extra JWT header fields.
            **claim_overrides: Claim values; `None` removes the claim.
        """
        signer = key or self.key
        if project_id is not None:
            claim_overrides.setdefault("aud", project_id)
            claim_overrides.setdefault("iss", f"https://securetoken.google.com/{project_id}")
        return jwt.encode(
            self.claims(uid, **claim_overrides),
            signer.private_key,
            algorithm="RS256",
            headers={"kid": kid or signer.kid, **(headers or {})},
        )

    def issue_unsigned(self, uid: str, **claim_overrides: Any) -> str:
        """An `alg: none` token with a known kid (must be rejected)."""
        return jwt.encode(
            self.claims(uid, **claim_overrides),
            None,
            algorithm="none",
            headers={"kid": self.key.kid},
        )

    def issue_hs256(self, uid: str, secret: bytes | None = None, **claim_overrides: Any) -> str:
        """An HS256 token with a known kid; by default the HMAC secret is the public key PEM,
        the classic algorithm-confusion attack (PyJWT refuses to sign that, so sign by hand)."""
        if secret is None:
            secret = self.key.private_key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        header = {"alg": "HS256", "typ": "JWT", "kid": self.key.kid}
        signing_input = f"{_b64(header)}.{_b64(self.claims(uid, **claim_overrides))}"
        signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


def _b64(part: dict[str, Any]) -> str:
    raw = json.dumps(part, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
