"""Wisdom retrieval adapters for the `WisdomIndex` port."""

from confidant.wisdom.local_index import DEFAULT_CORPUS_PATH, LocalWisdomIndex

__all__ = ["DEFAULT_CORPUS_PATH", "LocalWisdomIndex"]
