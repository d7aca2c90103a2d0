"""`X-User-Id` identity (local mode)."""

from __future__ import annotations

import pytest

from confidant.errors import AuthenticationError
from confidant.identity import HeaderIdentityVerifier


@pytest.mark.parametrize(
    "headers",
    [{"X-User-Id": "alice"}, {"x-user-id": "alice"}, {"X-USER-ID": " alice "}],
)
async def test_accepts_user_id_case_insensitively(headers: dict[str, str]) -> None:
    identity = await HeaderIdentityVerifier().verify(headers)
    assert identity.user_id == "alice"


@pytest.mark.parametrize("user_id", ["a", "u_1.2@example.com:x-y", "x" * 128])
async def test_accepts_the_safe_alphabet(user_id: str) -> None:
    identity = await HeaderIdentityVerifier().verify({"X-User-Id": user_id})
    assert identity.user_id == user_id


async def test_missing_header_is_rejected() -> None:
    with pytest.raises(AuthenticationError, match="missing X-User-Id"):
        await HeaderIdentityVerifier().verify({"Authorization": "Bearer x"})


@pytest.mark.parametrize(
    "user_id",
    ["", "   ", "x" * 129, "../etc", "a/b", "a b", "ünïcode", "a\nb", "a;b", ".", "..", "__a__"],
)
async def test_invalid_user_id_is_rejected(user_id: str) -> None:
    with pytest.raises(AuthenticationError, match="invalid X-User-Id") as info:
        await HeaderIdentityVerifier().verify({"X-User-Id": user_id})
    assert info.value.status == 401
