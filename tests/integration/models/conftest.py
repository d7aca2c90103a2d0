"""Fake model endpoints shared by the model-layer integration tests (one server per module)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_gemini import FakeGemini
from tests.support.fake_openai import FakeOpenAI

EXTRACTOR_MARKER = "CONFIDANT_EXTRACTOR"


@pytest.fixture(scope="module")
def _gemini_server() -> Iterator[FakeGemini]:
    # Post-turn job extractors call the model after a turn: they never take a test's script.
    with FakeGemini(scripted_for=lambda r: EXTRACTOR_MARKER not in r.system_instruction) as server:
        yield server


@pytest.fixture
def gemini(_gemini_server: FakeGemini) -> Iterator[FakeGemini]:
    _gemini_server.reset()
    yield _gemini_server
    _gemini_server.reset()


@pytest.fixture(scope="module")
def _openai_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def openai_server(_openai_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    _openai_server.reset()
    yield _openai_server
    _openai_server.reset()
