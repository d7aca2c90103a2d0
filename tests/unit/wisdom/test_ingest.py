"""Ingestion into the local target: content-hash planning, idempotence, deletions, dry run,
pacing, and the console script."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from confidant.embeddings import HashedEmbedder
from confidant.wisdom.chunking import chunk_corpus
from confidant.wisdom.corpus import load_corpus
from confidant.wisdom.ingest import LocalFileSink, RateLimiter, ingest, main, plan


def _write_corpus(path: Path, passages: list[dict[str, object]]) -> Path:
    path.write_text(
        "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in passages), encoding="utf-8"
    )
    return path


def _passages() -> list[dict[str, object]]:
    return [
        {"id": "a", "title": "Sleep", "text": "Rest comes when unforced.", "locale": "en"},
        {"id": "b", "title": "Anger", "text": "Anger marks a boundary.", "locale": "en"},
        {"id": "c", "title": "悲伤", "text": "悲伤像潮水。", "locale": "zh", "topic": "grief"},
    ]


async def _run(corpus: Path, sink: LocalFileSink, *, dry_run: bool = False) -> str:
    out = io.StringIO()
    await ingest(
        sink,
        HashedEmbedder(),
        corpus_path=corpus,
        dry_run=dry_run,
        progress=False,
        out=out,
        requests_per_minute=0,
    )
    return out.getvalue()


async def test_first_run_adds_everything_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    corpus = _write_corpus(tmp_path / "corpus.jsonl", _passages())
    index = tmp_path / "index.jsonl"
    sink = LocalFileSink(index)

    first = await _run(corpus, sink)
    records = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines()]
    assert first.startswith("3 chunk(s) to upsert, 0 to remove, 0 unchanged")
    assert sorted(r["passage_id"] for r in records) == ["a", "b", "c"]
    assert all(len(r["vector"]) == HashedEmbedder().dimensions for r in records)
    assert {r["id"] for r in records} == {c.id for c in chunk_corpus(load_corpus(corpus))}
    before = index.read_bytes()

    second = await _run(corpus, sink)
    assert second.startswith("0 chunk(s) to upsert, 0 to remove, 3 unchanged")
    assert index.read_bytes() == before


async def test_edits_replace_and_removals_delete(tmp_path: Path) -> None:
    corpus = _write_corpus(tmp_path / "corpus.jsonl", _passages())
    sink = LocalFileSink(tmp_path / "index.jsonl")
    await _run(corpus, sink)
    old_ids = await sink.existing_ids()

    edited = _passages()
    edited[0]["text"] = "Rest comes when it is not chased."
    del edited[1]
    _write_corpus(corpus, edited)
    output = await _run(corpus, sink)

    assert output.startswith("1 chunk(s) to upsert, 2 to remove, 1 unchanged")
    ids = await sink.existing_ids()
    assert {i.split(".")[0] for i in ids} == {"a", "c"}
    assert len(ids - old_ids) == 1  # the edited passage has a new content hash


async def test_dry_run_prints_the_plan_and_touches_nothing(tmp_path: Path) -> None:
    corpus = _write_corpus(tmp_path / "corpus.jsonl", _passages())
    index = tmp_path / "index.jsonl"
    output = await _run(corpus, LocalFileSink(index), dry_run=True)
    assert not index.exists()
    assert "3 chunk(s) to upsert" in output
    assert "+ a." in output and "+ c." in output


def test_plan_is_a_set_difference() -> None:
    chunks = chunk_corpus(load_corpus())
    everything = {c.id for c in chunks}
    assert plan(chunks, everything).empty
    stale = plan(chunks[1:], everything)
    assert stale.remove == [chunks[0].id] and not stale.upsert


async def test_rate_limiter_spaces_requests() -> None:
    now = [100.0]
    limiter = RateLimiter(per_minute=600, clock=lambda: now[0])  # one request every 0.1 s
    await limiter.acquire()
    assert limiter._next == pytest.approx(100.1)
    await limiter.acquire(3)  # waits 0.1 s (real sleep), then books three slots
    assert limiter._next == pytest.approx(100.4)


def test_console_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _write_corpus(tmp_path / "corpus.jsonl", _passages())
    index = tmp_path / "index.jsonl"
    argv = ["--corpus", str(corpus), "--local-path", str(index), "--no-progress", "--rpm", "0"]
    assert main(argv) == 0
    assert "done: 3 upserted, 0 removed" in capsys.readouterr().out
    assert main([*argv, "--dry-run"]) == 0
    assert "0 chunk(s) to upsert, 0 to remove, 3 unchanged" in capsys.readouterr().out


def test_console_script_refuses_a_cloud_target_without_an_index(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CONFIDANT_VECTOR_SEARCH_INDEX", raising=False)
    assert main(["--target", "vertex"]) == 2
    assert "CONFIDANT_VECTOR_SEARCH_INDEX" in capsys.readouterr().err


def test_a_bad_corpus_line_is_reported_with_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "title": "t", "text": "x", "locale": "en", "topic": "nope"}\n')
    assert main(["--corpus", str(corpus), "--local-path", str(tmp_path / "i.jsonl")]) == 2
    assert "corpus.jsonl:1" in capsys.readouterr().err
