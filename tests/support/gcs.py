"""A Cloud Storage emulator for tests: `gcp-storage-emulator` (the JSON API, in memory), run
in a background thread on a free port; clients find it through STORAGE_EMULATOR_HOST."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from gcp_storage_emulator.server import create_server

from tests.support.emulators import free_port

BUCKET = "confidant-test-artifacts"


@contextlib.contextmanager
def storage_emulator(bucket: str = BUCKET) -> Iterator[str]:
    """The emulator's base URL, with `bucket` created; STORAGE_EMULATOR_HOST is set meanwhile."""
    port = free_port()
    server = create_server("127.0.0.1", port, in_memory=True, default_bucket=bucket)
    server.start()
    url = f"http://127.0.0.1:{port}"
    previous = os.environ.get("STORAGE_EMULATOR_HOST")
    os.environ["STORAGE_EMULATOR_HOST"] = url
    try:
        yield url
    finally:
        if previous is None:
            os.environ.pop("STORAGE_EMULATOR_HOST", None)
        else:
            os.environ["STORAGE_EMULATOR_HOST"] = previous
        server.stop()
