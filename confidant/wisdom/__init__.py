"""Wisdom retrieval adapters for the `WisdomIndex` port: the embedded lexical index and
Vertex AI Vector Search (confidant/wisdom/vertex.py, imported only when configured)."""

from confidant.wisdom.corpus import DEFAULT_CORPUS_PATH, CorpusPassage, load_corpus
from confidant.wisdom.local_index import LocalWisdomIndex

__all__ = ["DEFAULT_CORPUS_PATH", "CorpusPassage", "LocalWisdomIndex", "load_corpus"]
