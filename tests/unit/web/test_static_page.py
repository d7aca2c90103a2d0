"""The built page and its assets through the HTTP layer; nothing else of the disk."""

from __future__ import annotations

import re

from confidant.web import STATIC_DIR

# With an identity, so a path that is not the page gets past authentication to its 404.
ALICE = {"X-User-Id": "alice"}


async def test_the_page_and_its_assets_are_served_locally(make_client) -> None:
    client, _ = make_client()
    page = await client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<div id="root">' in page.text
    assets = re.findall(r'(?:src|href)="(/assets/[^"]+)"', page.text)
    assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets)
    for path in assets:
        asset = await client.get(path)
        assert asset.status_code == 200
        assert "immutable" in asset.headers["cache-control"]
        assert asset.content == (STATIC_DIR / path.removeprefix("/")).read_bytes()


async def test_only_files_inside_assets_are_reachable(make_client) -> None:
    client, _ = make_client()
    for path in (
        "/assets/%2e%2e/%2e%2e/__init__.py",
        "/assets/nope.js",
        "/settings.py",
    ):
        response = await client.get(path, headers=ALICE)
        assert response.status_code == 404, path
        assert response.headers["content-type"] == "application/json"
    assert "text/html" not in (await client.post("/")).headers["content-type"]


async def test_the_cloud_serves_no_page_unless_asked(make_client) -> None:
    off, _ = make_client(web_ui=False)
    assert (await off.get("/", headers=ALICE)).status_code == 404
    assert (await off.get("/healthz")).status_code == 200
    on, _ = make_client(web_ui=True)
    assert (await on.get("/")).status_code == 200
