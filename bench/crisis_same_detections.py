"""Same detections before and after a change to the crisis detector's speed: every detection of
one checkout, pickled, then compared with another's.

    cd /tmp/before && PYTHONPATH=$PWD python /path/to/bench/crisis_same_detections.py before.pkl
    cd /work/wt/mine && PYTHONPATH=$PWD python -m bench.crisis_same_detections after.pkl
    python -m bench.crisis_same_detections --compare before.pkl after.pkl

Run from each checkout's root (its `tests/data`, corpus and code). The messages: every case of
the open sets (`train_ngram`'s TRAINING_SETS, SELECTION_SETS and ORDINARY_SETS, the development
set among them), 1,600 long messages (300-4,000 characters) built from them and the wisdom
corpus with ten kinds of joiners, and the bench's 2,000-character messages (its six, and 30
shuffles per kind and language). Each is detected with the lexicon alone and with the model;
a detection is its verdict, signals, matches, held-back matches with reasons, and view. Every
lexicon line as built is compared too (its regex, flags, RE2 over-approximation, window and its
language's script). The held-out sets are not read.
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import sys
from pathlib import Path
from typing import Any

from agents.safety import CrisisDetector, Detection, load_lexicons, train_ngram
from agents.safety.ngram import load_model
from bench.crisis_eval import DEV_SET, _long_message, _speed_sources, load_cases

LONG_MESSAGES = 1600
SHUFFLES = 30
_JOINERS = [". ", "。", " ", "，", "\n", " but ", "但是", "! ", "；", "|"]


def _open_set_texts(data: Path) -> list[str]:
    names = (*train_ngram.TRAINING_SETS, *train_ngram.SELECTION_SETS, *train_ngram.ORDINARY_SETS)
    return [case["text"] for name in names for case in train_ngram.read_cases(data, name)]


def _long_messages(texts: list[str], corpus: list[str]) -> list[str]:
    rng = random.Random(10)
    pool = texts + corpus
    messages = []
    while len(messages) < LONG_MESSAGES:
        target = rng.randint(300, 4000)
        source = rng.choice([texts, pool, corpus, texts])
        parts: list[str] = []
        size = 0
        while size < target:
            part = rng.choice(source)
            parts.append(part)
            size += len(part) + 1
        messages.append(rng.choice(_JOINERS).join(parts)[:target])
    return messages


def _bench_messages() -> list[str]:
    messages = []
    for texts in _speed_sources(load_cases(DEV_SET)).values():
        mixed = [t for pair in zip(texts["en"], texts["zh"], strict=False) for t in pair]
        messages += [
            _long_message(texts["en"], ". "),
            _long_message(texts["zh"], "。"),
            _long_message(mixed, " "),
        ]
        shuffle = random.Random(6)
        for lang, joiner in (("en", ". "), ("zh", "。")):
            messages += [
                _long_message(shuffle.sample(texts[lang], len(texts[lang])), joiner)
                for _ in range(SHUFFLES)
            ]
    return messages


def _key(detection: Detection) -> tuple[Any, ...]:
    return (
        detection.risky,
        detection.signals,
        tuple(tuple(match) for match in detection.matches),
        tuple((tuple(match), reason) for match, reason in detection.held_back),
        detection.view,
    )


def lexicon_lines() -> list[tuple[Any, ...]]:
    """Every lexicon line as built: its regex, RE2 over-approximation and window, and its
    language's script (which texts are searched at all)."""
    return [
        (lang, name, p.regex.pattern, p.regex.flags, p.superset, p.clauses, str(lexicon.script))
        for lang, lexicon in load_lexicons().items()
        for name, section in lexicon.sections.items()
        for p in section.patterns
    ]


def record(out: Path) -> None:
    corpus_file = Path("confidant/wisdom/data/corpus.jsonl")
    corpus = [
        json.loads(line)["text"]
        for line in corpus_file.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    texts = _open_set_texts(Path("tests/data"))
    messages = texts + _long_messages(texts, corpus) + _bench_messages()
    print(f"{len(texts)} open-set cases, {len(messages)} messages", file=sys.stderr)
    lexicon, with_model = CrisisDetector(), CrisisDetector(model=load_model())
    detections = {
        "texts": messages,
        "lexicon lines": lexicon_lines(),
        "lexicon": [_key(lexicon.detect(text)) for text in messages],
        "model": [_key(with_model.detect(text)) for text in messages],
    }
    out.write_bytes(pickle.dumps(detections))


def compare(before: Path, after: Path) -> int:
    old, new = pickle.loads(before.read_bytes()), pickle.loads(after.read_bytes())
    if old["texts"] != new["texts"]:
        print("the two runs detected different messages")
        return 1
    lines = [
        i
        for i, pair in enumerate(zip(old["lexicon lines"], new["lexicon lines"], strict=False))
        if pair[0] != pair[1]
    ]
    differing = len(lines) + abs(len(old["lexicon lines"]) - len(new["lexicon lines"]))
    print(f"lexicon lines: {len(new['lexicon lines'])}, {differing} differ (first: {lines[:5]})")
    for kind in ("lexicon", "model"):
        changed = [
            i for i, pair in enumerate(zip(old[kind], new[kind], strict=True)) if pair[0] != pair[1]
        ]
        fired = sum(detection[0] for detection in old[kind])
        held = sum(len(detection[3]) for detection in old[kind])
        print(
            f"{kind}: {len(old[kind])} messages, {len(changed)} differ "
            f"(first: {changed[:5]}); before: {fired} fire, {held} held-back matches"
        )
        differing += len(changed)
    return 1 if differing else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", nargs="?", type=Path, help="where to pickle this checkout's run")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if args.out is None:
        parser.error("give a file to write, or --compare BEFORE AFTER")
    record(args.out)


if __name__ == "__main__":
    main()
