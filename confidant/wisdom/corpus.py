"""The wisdom corpus: passages in JSONL (one JSON object a line), zh and en.

Topics are the port's closed vocabulary (confidant/ports.py WISDOM_TOPICS); a passage
outside it fails loudly when the corpus is loaded.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from confidant.ports import WISDOM_TOPICS, WisdomTopic

DEFAULT_CORPUS_PATH = Path(__file__).parent / "data" / "corpus.jsonl"

Topic = WisdomTopic
TOPICS = WISDOM_TOPICS


class CorpusPassage(BaseModel):
    """One line of corpus.jsonl."""

    id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,100}$")
    title: str
    text: str
    source: str = ""
    locale: str
    topic: Topic | None = None
    tags: list[str] = Field(default_factory=list)


def load_corpus(path: Path = DEFAULT_CORPUS_PATH) -> list[CorpusPassage]:
    """The passages of a JSONL corpus; duplicate ids are an error (they would overwrite)."""
    passages: list[CorpusPassage] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            passage = CorpusPassage.model_validate(json.loads(line))
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from exc
        if passage.id in seen:
            raise ValueError(f"{path}:{number}: duplicate passage id {passage.id!r}")
        seen.add(passage.id)
        passages.append(passage)
    return passages
