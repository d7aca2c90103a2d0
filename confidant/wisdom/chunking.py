"""Passages → chunks, the unit that is embedded and indexed (offline and in the cloud alike).

Chunks end on sentence boundaries and hold at most `max_chars` characters: about 700 for
English (~150 tokens) and 280 for Chinese (one character is roughly one token), short enough
that one chunk carries one idea and long enough to keep its context. Consecutive chunks
share their boundary sentence (the overlap), so an idea split across them is whole in one.
Most starter passages are one chunk.

Each chunk is keyed by a hash of everything that is indexed for it (text, title, locale,
topic, tags, source): re-ingesting an unchanged corpus yields the same ids and changes
nothing; an edited passage yields new ids, and the old ones are removed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from confidant.wisdom.corpus import CorpusPassage

MAX_CHARS = {"zh": 280, "en": 700}
DEFAULT_MAX_CHARS = 700
OVERLAP_SENTENCES = 1
# A sentence ends at . ! ? (followed by space) or at a Chinese full stop, ! or ? (no space).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])")


@dataclass(frozen=True)
class Chunk:
    """One indexed piece of a passage."""

    id: str  # "<passage id>.<content hash>": stable for unchanged content
    passage_id: str
    seq: int
    text: str
    title: str
    locale: str
    topic: str | None
    tags: tuple[str, ...]
    source: str

    @property
    def embedding_text(self) -> str:
        """What is embedded: the title frames the chunk; tags name the situations it helps in."""
        return "\n".join(filter(None, [self.title, self.text, ", ".join(self.tags)]))

    def metadata(self) -> dict[str, object]:
        """Stored with the vector, returned with a hit."""
        return {
            "passage_id": self.passage_id,
            "seq": self.seq,
            "title": self.title,
            "text": self.text,
            "source": self.source,
            "locale": self.locale,
            "topic": self.topic,
            "tags": list(self.tags),
        }


def split_sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def _windows(sentences: Sequence[str], max_chars: int, overlap: int, joiner: str) -> list[str]:
    chunks: list[str] = []
    start = 0
    while start < len(sentences):
        end, size = start, 0
        # Always take at least one sentence, however long, so the text is never dropped.
        while end < len(sentences) and (end == start or size + len(sentences[end]) <= max_chars):
            size += len(sentences[end]) + 1
            end += 1
        chunks.append(joiner.join(sentences[start:end]))
        if end >= len(sentences):
            break
        start = max(end - overlap, start + 1)
    return chunks


def content_hash(passage: CorpusPassage, text: str, seq: int) -> str:
    payload = {
        "passage_id": passage.id,
        "seq": seq,
        "text": text,
        "title": passage.title,
        "locale": passage.locale,
        "topic": passage.topic,
        "tags": passage.tags,
        "source": passage.source,
    }
    encoded = json.dumps(payload, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()[:16]


def chunk_passage(
    passage: CorpusPassage, *, max_chars: int | None = None, overlap: int = OVERLAP_SENTENCES
) -> list[Chunk]:
    limit = max_chars or MAX_CHARS.get(passage.locale, DEFAULT_MAX_CHARS)
    joiner = "" if passage.locale == "zh" else " "  # Chinese sentences join without a space
    pieces = _windows(split_sentences(passage.text), limit, overlap, joiner) or [passage.text]
    return [
        Chunk(
            id=f"{passage.id}.{content_hash(passage, text, seq)}",
            passage_id=passage.id,
            seq=seq,
            text=text,
            title=passage.title,
            locale=passage.locale,
            topic=passage.topic,
            tags=tuple(passage.tags),
            source=passage.source,
        )
        for seq, text in enumerate(pieces)
    ]


def chunk_corpus(passages: Iterable[CorpusPassage], **options: int) -> list[Chunk]:
    return [chunk for passage in passages for chunk in chunk_passage(passage, **options)]


def best_chunk_per_passage(ranked: Iterable[tuple[float, Chunk]]) -> list[tuple[float, Chunk]]:
    """Keeps each passage's first (best) chunk, in order: one passage never fills the top k."""
    seen: set[str] = set()
    kept: list[tuple[float, Chunk]] = []
    for score, chunk in ranked:
        if chunk.passage_id not in seen:
            seen.add(chunk.passage_id)
            kept.append((score, chunk))
    return kept
