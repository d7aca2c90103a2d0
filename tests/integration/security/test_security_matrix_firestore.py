"""The security matrix on the cloud adapters: Firestore (emulator) stores and Firebase ID tokens
(keys minted here, served by a local JWKS endpoint). Same cases as the embedded run
(tests/support/security_matrix.py); the users are fresh per run, the emulator is shared."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.conftest import TEST_PROJECT
from tests.support.security_matrix import NO_RATE_LIMITS, run_matrix
from tests.support.tokens import TokenIssuer


@pytest.fixture
def issuer() -> Iterator[TokenIssuer]:
    with TokenIssuer() as token_issuer:
        yield token_issuer


def _cloud_client(make_client, issuer: TokenIssuer, **overrides):  # type: ignore[no-untyped-def]
    return make_client(
        store="firestore",
        auth="firebase",
        firebase_project_id=issuer.project_id,
        jwks_url=issuer.jwks_url,
        project_id=TEST_PROJECT,
        store_timeout_s=60.0,  # a shared, busy emulator: slowness is not what this test is about
        **NO_RATE_LIMITS,
        **overrides,
    )


def _bearer(issuer: TokenIssuer, uid: str, **claims: object) -> dict[str, str]:
    return {"Authorization": f"Bearer {issuer.issue(uid, **claims)}"}


async def test_every_endpoint_refuses_another_users_ids_on_firestore(
    make_client, firestore_emulator, issuer, tmp_path
) -> None:
    run = uuid.uuid4().hex[:8]
    client, runtime = _cloud_client(
        make_client,
        issuer,
        web_ui=True,  # `GET /` is a case; off by default in the cloud
        artifacts="local",
        artifacts_dir=str(tmp_path / "artifacts"),
    )
    await run_matrix(
        client,
        runtime.jobs.drain,
        owner=_bearer(issuer, f"alice-{run}"),
        stranger=_bearer(issuer, f"mallory-{run}"),
        admin=_bearer(issuer, f"root-{run}", admin=True),
    )


async def test_ids_firestore_reserves_are_refused_not_failed(
    make_client, firestore_emulator, issuer
) -> None:
    """`__…__` document ids are Firestore's own: such an id is a 400 or 404, never a 5xx."""
    client, _ = _cloud_client(make_client, issuer)
    headers = _bearer(issuer, f"u-{uuid.uuid4().hex[:8]}")
    reserved = "__name__"
    calls = [
        ("DELETE", f"/v1/me/memories/{reserved}", None),
        ("GET", f"/v1/sessions/{reserved}", None),
        ("DELETE", f"/v1/sessions/{reserved}", None),
        ("GET", f"/v1/sessions/{reserved}/artifacts", None),
        ("GET", f"/v1/relationship/persons/{reserved}", None),
        ("PUT", f"/v1/relationship/persons/{reserved}", {"name": "x"}),
        ("DELETE", f"/v1/relationship/persons/{reserved}", None),
        ("POST", f"/v1/relationship/proposals/{reserved}/accept", None),
        ("POST", "/v1/chat", {"message": "hi", "session_id": reserved}),
        ("POST", "/v1/chat", {"app": "relationship", "message": "hi", "person_id": reserved}),
        ("GET", f"/v1/me/emotions?session_id={reserved}", None),
    ]
    for method, path, body in calls:
        response = await client.request(method, path, json=body, headers=headers)
        assert response.status_code in (400, 404), (method, path, response.text)
        assert response.json()["error"]["message"]
