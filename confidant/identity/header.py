"""Local-mode identity: the caller names itself in `X-User-Id` (never enabled in cloud)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from confidant.errors import AuthenticationError
from confidant.ports import Identity

USER_ID_HEADER = "X-User-Id"
_USER_ID = re.compile(r"^[A-Za-z0-9_.@:-]{1,128}$")
_RESERVED = re.compile(r"^\.{1,2}$|^__.*__$")  # path segments Firestore and file paths reserve


def get_header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive header lookup over any mapping (plain dicts are case-sensitive)."""
    value = headers.get(name)
    if value is not None:
        return value
    wanted = name.lower()
    for key, candidate in headers.items():
        if key.lower() == wanted:
            return candidate
    return None


class HeaderIdentityVerifier:
    """Trusts `X-User-Id`. Settings refuse this verifier whenever a cloud adapter is configured."""

    async def verify(self, headers: Mapping[str, str]) -> Identity:
        raw = get_header(headers, USER_ID_HEADER)
        if raw is None:
            raise AuthenticationError(f"missing {USER_ID_HEADER} header")
        user_id = raw.strip()
        if not _USER_ID.fullmatch(user_id) or _RESERVED.match(user_id):
            # The id becomes a storage path segment: refuse anything outside a safe alphabet.
            raise AuthenticationError(
                f"invalid {USER_ID_HEADER} header: expected 1-128 characters of "
                "letters, digits and _ . @ : -, not '.', '..' or '__…__'"
            )
        return Identity(user_id=user_id, claims={"source": "header"})
