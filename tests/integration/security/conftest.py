"""Fixtures of the cloud-adapter security matrix."""

from tests.unit.conftest import make_client  # noqa: F401 - the in-process chat API fixture
