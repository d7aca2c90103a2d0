"""Taskflow's final task as an artifact on Cloud Storage (ADK's GcsArtifactService against the
storage emulator), downloaded through the owner-checked endpoint and erased with the user."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from confidant.bootstrap import build_runtime
from confidant.settings import Settings
from tests.support.gcs import BUCKET, storage_emulator
from tests.support.taskflow import CONFIRMATION_NEEDED, REQUEST, send
from tests.unit.conftest import asgi_app


@pytest.fixture
def gcs() -> Iterator[str]:
    with storage_emulator() as url:
        yield url


async def test_the_final_task_is_stored_in_the_bucket_and_only_its_owner_gets_it(tmp_path, gcs):
    settings = Settings(
        sqlite_path=str(tmp_path / "c.db"), model="offline", artifacts_bucket=BUCKET
    )
    runtime = build_runtime(settings)
    transport = httpx.ASGITransport(app=asgi_app(runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        await send(client, "gcs", "a1", REQUEST + ". It's about splitting invoices. 2026-12-01")
        final = (await send(client, "gcs", "a1", "yes")).one(CONFIRMATION_NEEDED)
        done = await send(client, "gcs", "a1", "ok", approved=True, call_id=final["callId"])
        (written,) = [o for o in done.outputs() if isinstance(o, dict) and "artifact" in o]
        url = f"/v1/sessions/a1/artifacts/{written['artifact']}?app=taskflow"
        owner, stranger = {"X-User-Id": "gcs"}, {"X-User-Id": "eve"}

        download = await client.get(url, headers=owner)
        assert download.status_code == 200
        assert download.json()["written"]["id"] == written["task"]["id"]
        assert (await client.get(url, headers=stranger)).status_code == 404

        blobs = [blob.name for blob in runtime.artifacts.storage_client.list_blobs(BUCKET)]
        assert blobs == [f"taskflow/gcs/a1/{written['artifact']}/0"]

        assert (await client.delete("/v1/me", headers=owner)).status_code == 200
        assert list(runtime.artifacts.storage_client.list_blobs(BUCKET)) == []
    await runtime.close()
