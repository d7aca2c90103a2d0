"""The wisdom corpus: passages in JSONL (one JSON object a line) or Markdown, zh and en.

Markdown, for people writing passages: one `## <id>: <title>` heading per passage, then
`key: value` lines (`locale`, `topic`, `source`, `tags` as a comma-separated list), a blank
line, and the passage text (lines joined with a space: write a Chinese passage on one line)::

    ## en-sleep-01: Stop trying to fall asleep
    locale: en
    topic: sleep
    tags: sleep, insomnia

    Sleep cannot be forced; the harder you try, the more awake you become.

Topics are the port's closed vocabulary (confidant/ports.py WISDOM_TOPICS); a passage
outside it fails loudly when the corpus is loaded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

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


_HEADING = re.compile(r"^##\s+(?P<id>[^:\s]+)\s*:\s*(?P<title>.+?)\s*$")
_FIELD = re.compile(r"^(?P<key>locale|topic|source|tags)\s*:\s*(?P<value>.*?)\s*$")


def _jsonl_records(text: str) -> list[tuple[int, dict[str, Any]]]:
    return [
        (number, json.loads(line))
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]


def _markdown_records(text: str) -> list[tuple[int, dict[str, Any]]]:
    records: list[tuple[int, dict[str, Any]]] = []
    body: list[str] = []

    def finish() -> None:
        if records:
            records[-1][1]["text"] = " ".join(" ".join(body).split())
        body.clear()

    for number, line in enumerate(text.splitlines(), start=1):
        heading = _HEADING.match(line)
        field = _FIELD.match(line) if records and not body else None
        if heading:
            finish()
            records.append((number, {"id": heading["id"], "title": heading["title"]}))
        elif field:
            key, value = field["key"], field["value"]
            records[-1][1][key] = (
                [t.strip() for t in value.split(",") if t.strip()] if (key == "tags") else value
            )
        elif records and line.strip():
            body.append(line.strip())
    finish()
    return records


def load_corpus(path: Path = DEFAULT_CORPUS_PATH) -> list[CorpusPassage]:
    """The passages of a JSONL or Markdown (`.md`) corpus; duplicate ids are an error."""
    text = path.read_text(encoding="utf-8")
    records = _markdown_records(text) if path.suffix == ".md" else _jsonl_records(text)
    passages: list[CorpusPassage] = []
    seen: set[str] = set()
    for number, record in records:
        try:
            passage = CorpusPassage.model_validate(record)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from exc
        if passage.id in seen:
            raise ValueError(f"{path}:{number}: duplicate passage id {passage.id!r}")
        seen.add(passage.id)
        passages.append(passage)
    return passages
