"""Identity adapters: who is calling, from request headers (the `IdentityVerifier` port)."""

from __future__ import annotations

from confidant.identity.errors import IdentityBackendError
from confidant.identity.firebase import FirebaseTokenVerifier, firebase_issuer
from confidant.identity.header import USER_ID_HEADER, HeaderIdentityVerifier, get_header

__all__ = [
    "USER_ID_HEADER",
    "FirebaseTokenVerifier",
    "HeaderIdentityVerifier",
    "IdentityBackendError",
    "firebase_issuer",
    "get_header",
]
