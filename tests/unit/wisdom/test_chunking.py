"""Chunking: sentence-bounded, size-limited, overlapping, content-keyed."""

from __future__ import annotations

import itertools
from pathlib import Path

from confidant.wisdom.chunking import MAX_CHARS, chunk_corpus, chunk_passage, split_sentences
from confidant.wisdom.corpus import CorpusPassage, load_corpus


def _passage(text: str, locale: str = "en", **fields: object) -> CorpusPassage:
    return CorpusPassage.model_validate(
        {"id": "p-1", "title": "T", "text": text, "locale": locale, "topic": "habits", **fields}
    )


def test_sentences_split_in_both_languages() -> None:
    assert split_sentences("One. Two? Three!") == ["One.", "Two?", "Three!"]
    assert split_sentences("第一句。第二句！第三句？") == ["第一句。", "第二句！", "第三句？"]


def test_long_text_becomes_overlapping_chunks_within_the_limit() -> None:
    sentences = [f"Sentence number {i} says something about habits and change." for i in range(40)]
    chunks = chunk_passage(_passage(" ".join(sentences)))
    assert len(chunks) > 1
    assert all(len(chunk.text) <= MAX_CHARS["en"] for chunk in chunks)
    assert [chunk.seq for chunk in chunks] == list(range(len(chunks)))
    for first, second in itertools.pairwise(chunks):
        assert split_sentences(first.text)[-1] == split_sentences(second.text)[0]  # overlap
    covered = {s for chunk in chunks for s in split_sentences(chunk.text)}
    assert covered == set(sentences)  # nothing lost


def test_chinese_uses_a_smaller_limit_and_joins_without_spaces() -> None:
    text = "习惯的改变从一个很小的动作开始，小到几乎不需要意志力就能完成。" * 12
    chunks = chunk_passage(_passage(text, locale="zh"))
    assert len(chunks) > 1
    assert all(len(chunk.text) <= MAX_CHARS["zh"] and " " not in chunk.text for chunk in chunks)


def test_ids_are_content_hashes() -> None:
    same = chunk_passage(_passage("Small steps. Every day."))
    again = chunk_passage(_passage("Small steps. Every day."))
    edited = chunk_passage(_passage("Small steps. Every single day."))
    retagged = chunk_passage(_passage("Small steps. Every day.", tags=["new"]))
    assert [c.id for c in same] == [c.id for c in again]
    assert same[0].id.startswith("p-1.")
    assert same[0].id != edited[0].id != retagged[0].id


def test_the_starter_corpus_is_mostly_one_chunk_per_passage() -> None:
    passages = load_corpus()
    chunks = chunk_corpus(passages)
    assert len({c.id for c in chunks}) == len(chunks)
    assert {c.passage_id for c in chunks} == {p.id for p in passages}


def test_a_markdown_corpus_loads_like_jsonl(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.md"
    corpus.write_text(
        "# Wisdom\n\n"
        "## en-sleep-x: Stop trying to fall asleep\n"
        "locale: en\ntopic: sleep\ntags: sleep, insomnia\nsource: test\n\n"
        "Sleep cannot be forced.\nGet up until drowsy.\n\nThen lie down again.\n\n"
        "## zh-anger-x: 愤怒指向边界\nlocale: zh\n\n愤怒常常在提醒你。\n",
        encoding="utf-8",
    )
    first, second = load_corpus(corpus)
    assert (first.id, first.title, first.locale, first.topic) == (
        "en-sleep-x",
        "Stop trying to fall asleep",
        "en",
        "sleep",
    )
    assert first.tags == ["sleep", "insomnia"] and first.source == "test"
    assert first.text == "Sleep cannot be forced. Get up until drowsy. Then lie down again."
    assert (second.id, second.text, second.topic) == ("zh-anger-x", "愤怒常常在提醒你。", None)
