"""Errors of the identity adapters that are ours, not the caller's."""

from __future__ import annotations

from confidant.errors import ConfidantError


class IdentityBackendError(ConfidantError):
    """We could not verify a credential (e.g. the JWKS endpoint is unreachable).

    Distinct from `AuthenticationError` (401): the caller may be fine, so it maps to 503 and
    clients should retry instead of signing the user out.
    """

    status = 503
    code = "identity_unavailable"
