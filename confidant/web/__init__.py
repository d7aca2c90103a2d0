"""The web chat page: static files built from web/ (`make web`) and committed under static/.

Served at `/` by the HTTP layer when `Settings.web_enabled` (local mode by default; the cloud
service only with `CONFIDANT_WEB_UI=true`).
"""

from __future__ import annotations

from pathlib import Path

from starlette.responses import FileResponse, Response

STATIC_DIR = Path(__file__).resolve().parent / "static"
_INDEX = STATIC_DIR / "index.html"
_ASSETS = STATIC_DIR / "assets"
# Built asset names carry a content hash: they never change, so browsers may keep them.
_IMMUTABLE = "public, max-age=31536000, immutable"


def page_response(path: str, method: str) -> Response | None:
    """The page or one of its assets for a GET/HEAD of `path`, or None when it is not ours."""
    if method not in ("GET", "HEAD"):
        return None
    if path in ("/", "/index.html"):
        if not _INDEX.is_file():
            return None
        return FileResponse(_INDEX, headers={"cache-control": "no-cache"})
    if path.startswith("/assets/"):
        asset = (_ASSETS / path[len("/assets/") :]).resolve()
        # Only files directly inside assets/: no way out of the folder.
        if asset.parent != _ASSETS or not asset.is_file():
            return None
        return FileResponse(asset, headers={"cache-control": _IMMUTABLE})
    return None
