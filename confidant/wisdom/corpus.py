"""The wisdom corpus: passages in JSONL (one JSON object a line), zh and en.

Topics are a closed vocabulary so that the cloud index can restrict on them and the coach's
tool can name one; a passage outside it fails loudly when the corpus is loaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, Field

DEFAULT_CORPUS_PATH = Path(__file__).parent / "data" / "corpus.jsonl"

Topic = Literal[
    "procrastination",
    "perfectionism",
    "fear_of_failure",
    "self_compassion",
    "inner_critic",
    "inner_parts",
    "habits",
    "grief",
    "anger",
    "sleep",
    "relationships",
    "values",
    "acceptance",
    "reflection",
]
TOPICS: tuple[str, ...] = get_args(Topic)


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
