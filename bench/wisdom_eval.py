"""Wisdom retrieval quality: recall@3 and MRR of each index variant on the evaluation set.

    .venv/bin/python -m bench.wisdom_eval [--misses] [--k 3]

Variants, all on the same chunks of the bundled corpus (confidant/wisdom/data/corpus.jsonl)
and the same 80 labelled queries (bench/data/wisdom_eval.jsonl; each query in its locale):

* `bm25` — the embedded default (LocalWisdomIndex);
* `tfidf` — the same features, TF-IDF cosine;
* `hashed` — the offline HashedEmbedder (the Embedder port's default), exact cosine;
* `vertex-embeddings` — Vertex AI / Gemini embeddings, exact cosine in memory: only when
  Gemini credentials are set (GOOGLE_API_KEY, or GOOGLE_GENAI_USE_VERTEXAI with a project);
* `vertex-index` — the deployed Vector Search index through the real adapter: only when
  CONFIDANT_WISDOM=vertex and its settings are set (ingest the corpus first).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable

from confidant.embeddings import HashedEmbedder
from confidant.ports import WisdomIndex
from confidant.settings import Settings
from confidant.wisdom import LocalWisdomIndex, load_corpus
from confidant.wisdom.chunking import chunk_corpus
from confidant.wisdom.embedding_index import EmbeddingWisdomIndex
from confidant.wisdom.evaluation import EvalQuery, EvalReport, evaluate, load_eval_set


def _variants(settings: Settings) -> dict[str, Callable[[], WisdomIndex]]:
    chunks = chunk_corpus(load_corpus())
    variants: dict[str, Callable[[], WisdomIndex]] = {
        "bm25 (default)": lambda: LocalWisdomIndex(scoring="bm25"),
        "tfidf": lambda: LocalWisdomIndex(scoring="tfidf"),
        "hashed": lambda: EmbeddingWisdomIndex(HashedEmbedder(), chunks),
    }
    if settings.google_api_key or settings.use_vertex:
        from confidant.embeddings.vertex import build_vertex_embedder

        variants["vertex-embeddings"] = lambda: EmbeddingWisdomIndex(
            build_vertex_embedder(settings, attempts=5, timeout_s=60), chunks
        )
    if settings.wisdom == "vertex":
        from confidant.bootstrap import _embedder, _wisdom

        variants["vertex-index"] = lambda: _wisdom(settings, _embedder(settings))
    return variants


def _row(name: str, report: EvalReport, by_locale: dict[str, EvalReport], seconds: float) -> str:
    cells = [f"{report.recall:.3f}", f"{report.mrr:.3f}"]
    for locale in ("en", "zh"):
        cells.append(f"{by_locale[locale].recall:.3f}")
    return f"| {name} | " + " | ".join(cells) + f" | {seconds * 1000 / report.queries:.1f} |"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--misses", action="store_true", help="list the queries each one missed")
    args = parser.parse_args()
    queries = load_eval_set()
    print(f"{len(queries)} queries, {len(load_corpus())} passages, recall@{args.k}\n")
    k = args.k
    print(f"| variant | recall@{k} | MRR | recall@{k} en | recall@{k} zh | ms/query |")
    print("|---|---|---|---|---|---|")
    misses: dict[str, list[tuple[EvalQuery, list[str]]]] = {}
    for name, build in _variants(Settings()).items():
        index = build()
        await evaluate(index, queries[:1], k=args.k)  # warm: builds the index / embeds the corpus
        started = time.perf_counter()
        report = await evaluate(index, queries, k=args.k)
        seconds = time.perf_counter() - started
        by_locale = {
            locale: await evaluate(index, [q for q in queries if q.locale == locale], k=args.k)
            for locale in ("en", "zh")
        }
        print(_row(name, report, by_locale, seconds))
        misses[name] = report.misses
    if args.misses:
        for name, missed in misses.items():
            print(f"\n{name}: {len(missed)} missed")
            for query, got in missed:
                print(f"  {query.query!r} wants {query.relevant}, got {got}")


if __name__ == "__main__":
    asyncio.run(main())
