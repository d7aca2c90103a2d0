"""Session-wide fixtures: the emulators (started once, stopped at the end) and env isolation."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support import emulators

TEST_PROJECT = "confidant-test"

# Real model calls are never made from tests: no key leaks in from the developer's shell.
for _var in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "OPENAI_API_KEY"):
    os.environ.pop(_var, None)
os.environ.setdefault("ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS", "1")


@pytest.fixture(scope="session")
def firestore_emulator() -> Iterator[str]:
    """Host:port of a running Firestore emulator; FIRESTORE_EMULATOR_HOST is set for clients."""
    with emulators.running(emulators.start_firestore) as emulator:
        previous = os.environ.get("FIRESTORE_EMULATOR_HOST")
        os.environ["FIRESTORE_EMULATOR_HOST"] = emulator.host
        try:
            yield emulator.host
        finally:
            if previous is None:
                os.environ.pop("FIRESTORE_EMULATOR_HOST", None)
            else:
                os.environ["FIRESTORE_EMULATOR_HOST"] = previous


@pytest.fixture(scope="session")
def pubsub_emulator() -> Iterator[str]:
    """Host:port of a running Pub/Sub emulator; PUBSUB_EMULATOR_HOST is set for clients."""
    with emulators.running(lambda: emulators.start_pubsub(TEST_PROJECT)) as emulator:
        previous = os.environ.get("PUBSUB_EMULATOR_HOST")
        os.environ["PUBSUB_EMULATOR_HOST"] = emulator.host
        try:
            yield emulator.host
        finally:
            if previous is None:
                os.environ.pop("PUBSUB_EMULATOR_HOST", None)
            else:
                os.environ["PUBSUB_EMULATOR_HOST"] = previous
