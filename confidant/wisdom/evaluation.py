"""Retrieval quality: recall@k and mean reciprocal rank over a set of labelled queries.

A query is a hit at k when any of its relevant passages is among the first k results; its
reciprocal rank is 1 / the rank of the first relevant passage (0 when none is returned).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from confidant.ports import WisdomIndex

DEFAULT_EVAL_PATH = Path(__file__).resolve().parents[2] / "bench" / "data" / "wisdom_eval.jsonl"
RANKED_DEPTH = 10  # how deep MRR looks


class EvalQuery(BaseModel):
    id: str
    locale: str
    query: str
    relevant: list[str]


@dataclass
class EvalReport:
    k: int
    queries: int = 0
    hits: int = 0
    reciprocal_ranks: float = 0.0
    misses: list[tuple[EvalQuery, list[str]]] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.hits / self.queries if self.queries else 0.0

    @property
    def mrr(self) -> float:
        return self.reciprocal_ranks / self.queries if self.queries else 0.0


def load_eval_set(path: Path = DEFAULT_EVAL_PATH) -> list[EvalQuery]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [EvalQuery.model_validate(json.loads(line)) for line in lines if line.strip()]


async def evaluate(index: WisdomIndex, queries: Sequence[EvalQuery], *, k: int = 3) -> EvalReport:
    """Runs every query in its own locale and scores the ranking."""
    report = EvalReport(k=k)
    for query in queries:
        results = await index.search(query.query, top_k=RANKED_DEPTH, locale=query.locale)
        ranked = [passage.id for passage in results]
        relevant = set(query.relevant)
        report.queries += 1
        if relevant & set(ranked[:k]):
            report.hits += 1
        else:
            report.misses.append((query, ranked[:k]))
        rank = next((i for i, pid in enumerate(ranked, start=1) if pid in relevant), None)
        report.reciprocal_ranks += 1.0 / rank if rank else 0.0
    return report
