"""The security matrix in-process on the embedded store: every endpoint called by another user
with the owner's ids (404, never data), admin endpoints without the claim (403), no identity
(401), with header identity (local mode) and with Firebase ID tokens (cloud identity). The case
table and what each expectation means: tests/support/security_matrix.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.security_matrix import (
    NO_RATE_LIMITS,
    OWNER,
    STRANGER,
    Endpoint,
    declared_endpoints,
    readme_endpoints,
    run_matrix,
    uncovered,
)
from tests.support.tokens import TokenIssuer


@pytest.fixture(scope="module")
def issuer() -> Iterator[TokenIssuer]:
    with TokenIssuer() as token_issuer:
        yield token_issuer


def _identities(mode: str, issuer: TokenIssuer):  # type: ignore[no-untyped-def]
    """(settings overrides, headers for a user id, headers of an admin)."""
    if mode == "header":
        return (
            {"admin_users": ["root"]},
            lambda uid: {"X-User-Id": uid},
            {"X-User-Id": "root"},
        )
    return (
        {"auth": "firebase", "firebase_project_id": issuer.project_id, "jwks_url": issuer.jwks_url},
        lambda uid: {"Authorization": f"Bearer {issuer.issue(uid)}"},
        {"Authorization": f"Bearer {issuer.issue('root', admin=True)}"},
    )


@pytest.mark.parametrize("mode", ["header", "firebase"])
async def test_every_endpoint_refuses_another_users_ids(make_client, issuer, mode) -> None:
    overrides, headers_of, admin = _identities(mode, issuer)
    client, runtime = make_client(**overrides, **NO_RATE_LIMITS)
    await run_matrix(client, runtime.jobs.drain, headers_of(OWNER), headers_of(STRANGER), admin)


async def test_cloud_identity_ignores_the_local_user_header(make_client, issuer) -> None:
    overrides, headers_of, _ = _identities("firebase", issuer)
    client, _ = make_client(**overrides)
    only_header = await client.get("/v1/me/profile", headers={"X-User-Id": OWNER})
    assert only_header.status_code == 401
    both = await client.patch(
        "/v1/me/profile",
        json={"account": {"display_name": "set by mallory"}},
        headers={**headers_of(STRANGER), "X-User-Id": OWNER},
    )
    assert both.status_code == 200
    owners = await client.get("/v1/me/profile", headers=headers_of(OWNER))
    assert "set by mallory" not in owners.text


async def test_every_declared_endpoint_has_a_case(make_client) -> None:
    client, _ = make_client()
    ids = {name: f"x-{name}" for name in ("person", "proposal", "memory", "artifact", "call")}
    ids |= {app: f"{app}-session" for app in ("onemind", "relationship", "lifecoach", "taskflow")}
    declared = await declared_endpoints(client)
    assert {e.source for e in declared} >= {"README", "app relationship"}
    assert len(readme_endpoints()) >= 20  # the table was found and parsed
    missing = uncovered(declared, ids)
    assert not missing, (
        "endpoints without a security-matrix case (add a Case line to "
        f"tests/support/security_matrix.py CASES): {missing}"
    )


def test_the_coverage_check_notices_a_new_endpoint() -> None:
    new = Endpoint("GET", r"/v1/me/secrets/[^/]+", "README")
    assert uncovered([new], {}) == [new]
    table = "## HTTP API\n\n| `GET /v1/me/secrets/{id}?x=` | new |\n\n## Next\n"
    assert [e.pattern for e in readme_endpoints(table)] == [r"/v1/me/secrets/[^/]+"]
