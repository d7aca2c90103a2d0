"""Fake model endpoints shared by the model-layer integration tests (one server per module)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_gemini import FakeGemini
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture(scope="module")
def _gemini_server() -> Iterator[FakeGemini]:
    with FakeGemini() as server:
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
