"""Whether two versions of the crisis detector decide alike: every detection (verdict, signals,
spans, held-back matches and reasons, view) on the open sets and on long messages built from
them, with the lexicon alone and with the model, and every lexicon line as built.

Run it in one checkout with `--save FILE`, then in the other with `--compare FILE`:

    PYTHONPATH=/path/to/main python -m bench.crisis_same_detections --save /tmp/main.pkl
    PYTHONPATH=$PWD python -m bench.crisis_same_detections --compare /tmp/main.pkl

Held-out sets are never read (only the training, selection and ordinary sets are).
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import sys
from pathlib import Path

from agents.safety.detector import CrisisDetector, Detection
from agents.safety.lexicon import load_lexicons
from agents.safety.ngram import load_model
from agents.safety.train_ngram import DATA, ORDINARY_SETS, SELECTION_SETS, TRAINING_SETS, read_cases

CORPUS = Path(__file__).resolve().parents[1] / "confidant" / "wisdom" / "data" / "corpus.jsonl"
LONG_MESSAGES = 1200
LONG_CHARS = 2000


def messages() -> list[str]:
    """The open sets' texts, then long messages of several of them and corpus passages."""
    texts = [
        case["text"]
        for names in (TRAINING_SETS, SELECTION_SETS, ORDINARY_SETS)
        for name in names
        for case in read_cases(DATA, name)
    ]
    passages = [
        json.loads(line)["text"]
        for line in CORPUS.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    pool = texts + passages
    pick = random.Random(10)
    long: list[str] = []
    for _ in range(LONG_MESSAGES):
        parts: list[str] = []
        while sum(len(p) + 1 for p in parts) < LONG_CHARS:
            parts.append(pick.choice(pool))
        long.append(" ".join(parts)[:LONG_CHARS])
    return texts + long


def _plain(detection: Detection) -> tuple:
    return (
        detection.risky,
        detection.signals,
        tuple(tuple(m) for m in detection.matches),
        tuple((tuple(m), reason) for m, reason in detection.held_back),
        detection.view,
    )


def lexicon_lines() -> list[tuple]:
    """Every lexicon line as built: its regex, RE2 over-approximation and window, and its
    language's script (which texts are searched at all)."""
    return [
        (lang, name, p.regex.pattern, p.regex.flags, p.superset, p.clauses, str(lexicon.script))
        for lang, lexicon in load_lexicons().items()
        for name, section in lexicon.sections.items()
        for p in section.patterns
    ]


def detections() -> dict[str, list[tuple]]:
    texts = messages()
    found: dict[str, list[tuple]] = {"lexicon lines": lexicon_lines()}
    for name, detector in (
        ("lexicon", CrisisDetector()),
        ("lexicon + model", CrisisDetector(model=load_model())),
    ):
        found[name] = [_plain(detector.detect(text)) for text in texts]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--save", type=Path)
    action.add_argument("--compare", type=Path)
    args = parser.parse_args()
    found = detections()
    if args.save:
        args.save.write_bytes(pickle.dumps(found))
        print(f"saved {', '.join(f'{k}: {len(v)}' for k, v in found.items())} detections")
        return
    reference = pickle.loads(args.compare.read_bytes())
    differ = 0
    for name, ours in found.items():
        theirs = reference[name]
        if len(theirs) != len(ours):
            sys.exit(f"{name}: {len(theirs)} detections saved, {len(ours)} now")
        changed = [n for n, (a, b) in enumerate(zip(theirs, ours, strict=True)) if a != b]
        print(f"{name}: {len(ours)} compared, {len(changed)} differ")
        differ += len(changed)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
