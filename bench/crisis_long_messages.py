"""Long messages: does the crisis guard stay quiet on a long ordinary message, and does it still
catch a risky sentence buried in one?

    .venv/bin/python -m bench.crisis_long_messages
    .venv/bin/python -m bench.crisis_long_messages --sets crisis_heldout8.jsonl --count 100

A journal entry of 2,000 characters holds 20-60 ordinary sentences. A detector that fires on one
ordinary message in 200 fires on a good share of such entries, and the n-gram model scores every
window of two clauses of them. So, per language, messages of about 2,000 characters are built
from ordinary messages no part of the detector was written, trained or thresholded on (the
held-out sets' ordinary messages), shuffled with a fixed seed, and counted (never printed, the
held-out sets are for measuring only):

- ordinary: how many such messages fire;
- risky, buried: each risky case of the held-out sets put at a random sentence boundary of such
  a message: how many still fire, next to how many fire alone;
- look-alikes, buried: the same for the benign look-alikes (false alarms).

The wisdom corpus (the coaching passages the app retrieves; the model's thresholds are chosen
on it, it is never trained on) is counted too: long messages of our own coaching text.
Each row for the lexicon alone and for the lexicon with the n-gram model.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterator
from pathlib import Path

from agents.safety import CrisisDetector
from agents.safety.ngram import load_model
from bench.crisis_eval import load_cases

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
WISDOM = Path(__file__).resolve().parents[1] / "confidant" / "wisdom" / "data" / "corpus.jsonl"
HELD_OUT = ("crisis_heldout6.jsonl", "crisis_heldout7.jsonl", "crisis_heldout8.jsonl")
MESSAGE_CHARS = 2000
LANGS = ("en", "zh")
# Messages are joined as the sentences of one message: with a full stop where one ends without
# a mark (many chat messages do), so a risky sentence is not glued into its neighbour's clause.
JOINERS = {"en": " ", "zh": ""}
FULL_STOPS = {"en": ". ", "zh": "。"}
_SENTENCE_END = tuple(".!?。！？…~\n)\"'”’")
SEED = 11


def _ordinary_name(held_out: str) -> str:
    return held_out.replace(".jsonl", "_ordinary.jsonl")


class Filler:
    """Ordinary messages of one language, drawn in a seeded shuffle, cycling."""

    def __init__(self, texts: list[str], lang: str, shuffle: random.Random) -> None:
        self.texts, self.lang, self.shuffle = texts, lang, shuffle
        self._draws: Iterator[str] = iter(())

    def _next(self) -> str:
        text = next(self._draws, None)
        if text is None:
            self._draws = iter(self.shuffle.sample(self.texts, len(self.texts)))
            text = next(self._draws)
        return text

    def message(self, chars: int) -> list[str]:
        """Whole ordinary messages, about `chars` characters in all (the last one may overrun)."""
        parts: list[str] = []
        total = 0
        while total < chars:
            parts.append(self._next())
            total += len(parts[-1])
        return parts

    def text(self, chars: int = MESSAGE_CHARS) -> str:
        return self.join(self.message(chars))

    def with_case(self, case: str) -> str:
        """`case` at a random boundary of an ordinary message of about MESSAGE_CHARS in all."""
        parts = self.message(MESSAGE_CHARS - len(case))
        parts.insert(self.shuffle.randint(0, len(parts)), case)
        return self.join(parts)

    def join(self, parts: list[str]) -> str:
        ended = [
            part if part.rstrip().endswith(_SENTENCE_END) else part.rstrip() + FULL_STOPS[self.lang]
            for part in parts
        ]
        return JOINERS[self.lang].join(ended)


def _count(detector: CrisisDetector, texts: list[str]) -> int:
    return sum(detector.detect(text).risky for text in texts)


def measure(sets: tuple[str, ...], count: int) -> str:
    detectors = {"lexicon": CrisisDetector(), "lexicon + model": CrisisDetector(model=load_model())}
    wisdom = load_cases(WISDOM)
    rows = [
        "| messages of ~2,000 characters | lang | " + " | ".join(detectors) + " |",
        "|---|---|" + "---|" * len(detectors),
    ]
    for lang in LANGS:
        shuffle = random.Random(f"{SEED}-{lang}")
        ordinary = [
            case["text"]
            for name in sets
            for case in load_cases(DATA / _ordinary_name(name))
            if case["lang"] == lang
        ]
        cases = [case for name in sets for case in load_cases(DATA / name) if case["lang"] == lang]
        filler = Filler(ordinary, lang, shuffle)
        coaching = Filler([p["text"] for p in wisdom if p["locale"] == lang], lang, shuffle)
        groups = {
            f"ordinary ({len(ordinary)} held-out ordinary messages)": [
                filler.text() for _ in range(count)
            ],
            "our coaching text (wisdom corpus)": [coaching.text() for _ in range(count)],
        }
        for risky, name in ((True, "risky"), (False, "look-alikes")):
            texts = [case["text"] for case in cases if case["risky"] == risky]
            groups[f"{name}, alone"] = texts
            groups[f"{name}, buried in ordinary text"] = [filler.with_case(t) for t in texts]
        for group, texts in groups.items():
            fired = [f"{_count(d, texts)}/{len(texts)}" for d in detectors.values()]
            rows.append(f"| {group} | {lang} | " + " | ".join(fired) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(HELD_OUT), help="held-out sets")
    parser.add_argument("--count", type=int, default=200, help="ordinary messages per language")
    args = parser.parse_args()
    print(f"held-out sets: {', '.join(args.sets)} (counts only)\n")
    print(measure(tuple(args.sets), args.count))


if __name__ == "__main__":
    main()
