"""Crisis detector evaluation: recall and false alarms on the development set, and speed.

    .venv/bin/python -m bench.crisis_eval                      # the table
    .venv/bin/python -m bench.crisis_eval --show               # plus every miss / false alarm
    .venv/bin/python -m bench.crisis_eval --set other.jsonl    # another set, same fields
    .venv/bin/python -m bench.crisis_eval --set tests/data/crisis_heldout.jsonl --runs 0

A set is JSON lines `{"text", "lang", "risky", "signal"}`: `signal` is the signal a risky
case shows, or the kind of look-alike a benign case is. Recall is the share of risky cases that
fire; the false-alarm rate is the share of benign cases that fire.

The summary is printed twice, for the lexicon alone and with the n-gram model
(`CONFIDANT_CRISIS_MODEL`), so what the model adds is measured on the same cases in the same
run; then the false alarms of both on ordinary messages to a coach, which are no look-alikes
(the user queries of the wisdom benchmark, `bench/data/wisdom_eval.jsonl`: neither the lexicon
nor the model was written, trained or thresholded on them).

Speed: the median time of `detect()` on 2,000-character messages (English, Chinese, mixed),
built from ordinary coaching talk (the wisdom corpus) and, as a worst case, from the set's
benign look-alikes packed together (so nearly every pattern is a candidate), for the lexicon
with the n-gram model (`CONFIDANT_CRISIS_MODEL=on`) and alone, next to a baseline in the same
run: the median time of NFKC normalisation of the same text. A second table times messages
that are each new (`--distinct`), because RE2 builds its automata lazily: the first messages a
process sees cost more. Last, the n-gram model's load in fresh processes (CPU time of
`load_model()`, and of importing numpy, which the layer needs), and the lexicon's build and its
first messages in fresh processes: what every cold start pays. The frozen held-out set is for
measuring only: never print its misses to tune on them.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agents.safety import CrisisDetector
from agents.safety.ngram import load_model
from agents.safety.normalise import normalise

DEV_SET = Path(__file__).resolve().parents[1] / "tests" / "data" / "crisis_dev_set.jsonl"
WISDOM = Path(__file__).resolve().parents[1] / "confidant" / "wisdom" / "data" / "corpus.jsonl"
ORDINARY = Path(__file__).resolve().parent / "data" / "wisdom_eval.jsonl"
MESSAGE_CHARS = 2000
LANGS = ("en", "zh")


def load_cases(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _rate(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.1f}%)" if total else "—"


def evaluate(detector: CrisisDetector, cases: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Counts per (lang, risky, signal) of cases and of cases that fired."""
    fired: dict[tuple[str, bool, str], int] = defaultdict(int)
    total: dict[tuple[str, bool, str], int] = defaultdict(int)
    wrong: list[dict[str, Any]] = []
    for case in cases:
        key = (case["lang"], bool(case["risky"]), case["signal"])
        detection = detector.detect(case["text"])
        total[key] += 1
        fired[key] += detection.risky
        if detection.risky != bool(case["risky"]):
            wrong.append(case | {"fired": list(detection.signals), "view": detection.view})
    return {"fired": fired, "total": total, "wrong": wrong}


def _sum(counts: dict[tuple[str, bool, str], int], match: Callable[[str, bool, str], bool]) -> int:
    return sum(n for key, n in counts.items() if match(*key))


def report(result: dict[str, Any]) -> str:
    fired, total = result["fired"], result["total"]
    rows = [
        "| slice | recall (risky cases caught) | false alarms (benign cases fired) |",
        "|---|---|---|",
    ]
    for lang in ("all", "en", "zh"):

        def of(risky: bool, lang: str = lang) -> Callable[[str, bool, str], bool]:
            return lambda cl, cr, _s: cr is risky and lang in ("all", cl)

        rows.append(
            f"| {lang} | {_rate(_sum(fired, of(True)), _sum(total, of(True)))} "
            f"| {_rate(_sum(fired, of(False)), _sum(total, of(False)))} |"
        )
    rows += ["", "| risky signal | en recall | zh recall |", "|---|---|---|"]
    for signal in sorted({s for (_, r, s) in total if r}):
        cells = [
            _rate(fired.get((lang, True, signal), 0), total.get((lang, True, signal), 0))
            for lang in ("en", "zh")
        ]
        rows.append(f"| {signal} | {cells[0]} | {cells[1]} |")
    rows += ["", "| benign look-alike | en false alarms | zh false alarms |", "|---|---|---|"]
    for signal in sorted({s for (_, r, s) in total if not r}):
        cells = [
            _rate(fired.get((lang, False, signal), 0), total.get((lang, False, signal), 0))
            for lang in ("en", "zh")
        ]
        rows.append(f"| {signal} | {cells[0]} | {cells[1]} |")
    return "\n".join(rows)


def ordinary(detector: CrisisDetector, lexicon_only: CrisisDetector) -> str:
    """False alarms on ordinary messages to a coach (the wisdom benchmark's queries)."""
    queries = load_cases(ORDINARY)
    rows = [
        "| ordinary messages | lexicon false alarms | with n-gram model |",
        "|---|---|---|",
    ]
    for lang in LANGS:
        texts = [query["query"] for query in queries if query["locale"] == lang]
        by_lexicon = sum(lexicon_only.detect(text).risky for text in texts)
        by_both = sum(detector.detect(text).risky for text in texts)
        rows.append(f"| {lang} | {_rate(by_lexicon, len(texts))} | {_rate(by_both, len(texts))} |")
    return "\n".join(rows)


def _long_message(texts: list[str], joiner: str) -> str:
    message = ""
    index = 0
    while len(message) < MESSAGE_CHARS:
        message += texts[index % len(texts)] + joiner
        index += 1
    return message[:MESSAGE_CHARS]


def _median_us(function: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        # CPU time of this process: on a shared machine wall time mostly measures the others.
        started = time.process_time()
        function()
        samples.append(time.process_time() - started)
    return statistics.median(samples) * 1e6


# Each look-alike quoted after a reporting word: the detector then finds the quotations again
# and asks who said them.
_QUOTE_FRAMES = {"en": ('she said "', '"'), "zh": ("她说“", "”")}


def _speed_sources(cases: list[dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    """The texts long messages are built from, by kind and language: ordinary coaching talk
    (the wisdom corpus), the set's benign look-alikes, and the same look-alikes quoted."""
    corpus = [json.loads(line) for line in WISDOM.read_text(encoding="utf-8").splitlines()]
    look_alikes = {
        lang: [c["text"] for c in cases if not c["risky"] and c["lang"] == lang] for lang in LANGS
    }
    return {
        "ordinary": {lang: [p["text"] for p in corpus if p["locale"] == lang] for lang in LANGS},
        "look-alike-dense": look_alikes,
        "look-alike-quoted": {
            lang: [_QUOTE_FRAMES[lang][0] + text + _QUOTE_FRAMES[lang][1] for text in texts]
            for lang, texts in look_alikes.items()
        },
    }


def speed(
    detector: CrisisDetector, lexicon_only: CrisisDetector, cases: list[dict[str, Any]], runs: int
) -> str:
    """Median detect() time on 2,000-character messages: ordinary coaching talk (the wisdom
    corpus) and, the worst case, text packed with look-alikes (the set's benign cases)."""
    sources = _speed_sources(cases)
    rows = [
        "| 2,000-char message | lexicon + n-gram model | lexicon alone | NFKC baseline | ratio |",
        "|---|---|---|---|---|",
    ]
    for kind, texts in sources.items():
        mixed = [t for pair in zip(texts["en"], texts["zh"], strict=False) for t in pair]
        messages = {
            "en": _long_message(texts["en"], ". "),
            "zh": _long_message(texts["zh"], "。"),
            "mixed": _long_message(mixed, " "),
        }
        for lang, message in messages.items():
            detector.detect(message)  # warm caches
            ours = _median_us(lambda m=message: detector.detect(m), runs)
            rules = _median_us(lambda m=message: lexicon_only.detect(m), runs)
            base = _median_us(lambda m=message: unicodedata.normalize("NFKC", m), runs)
            rows.append(
                f"| {kind} {lang} | {ours / 1000:.3f} ms | {rules / 1000:.3f} ms "
                f"| {base / 1000:.3f} ms | {ours / base:.0f}× |"
            )
    return "\n".join(rows)


def speed_on_distinct_messages(
    detector: CrisisDetector, lexicon_only: CrisisDetector, cases: list[dict[str, Any]], count: int
) -> str:
    """Median detect() time over `count` different 2,000-character messages per kind (seeded
    shuffles of the same sources), after as many others: RE2 builds its automata lazily, so a
    message seen for the first time costs more than the same message timed again and again.
    The first ones are timed with the lexicon alone, then as many others with the lexicon
    alone, then as many others with the model (each message new to both)."""
    sources = _speed_sources(cases)
    shuffle = random.Random(6)
    rows = [
        "| 2,000-char messages, each new | first ones, lexicon alone "
        "| lexicon + n-gram model | lexicon alone | NFKC baseline |",
        "|---|---|---|---|---|",
    ]
    for kind, texts in sources.items():
        for lang, joiner in (("en", ". "), ("zh", "。")):
            messages = [
                _long_message(shuffle.sample(texts[lang], len(texts[lang])), joiner)
                for _ in range(3 * count)
            ]
            first = [_median_us(lambda m=m: lexicon_only.detect(m), 1) for m in messages[:count]]
            later = [
                _median_us(lambda m=m: lexicon_only.detect(m), 1)
                for m in messages[count : 2 * count]
            ]
            with_model = [
                _median_us(lambda m=m: detector.detect(m), 1) for m in messages[2 * count :]
            ]
            base = [
                _median_us(lambda m=m: unicodedata.normalize("NFKC", m), 1)
                for m in messages[count : 2 * count]
            ]
            rows.append(
                f"| {kind} {lang} | {statistics.median(first) / 1000:.3f} ms "
                f"| {statistics.median(with_model) / 1000:.3f} ms "
                f"| {statistics.median(later) / 1000:.3f} ms "
                f"| {statistics.median(base) / 1000:.3f} ms |"
            )
    return "\n".join(rows)


def model_speed(runs: int) -> str:
    """Median time of the n-gram layer alone (`NgramModel.riskiest` on the normalised view) on
    2,000-character messages of ordinary coaching talk."""
    model = load_model()
    if model is None:
        return "no n-gram model shipped"
    corpus = [json.loads(line) for line in WISDOM.read_text(encoding="utf-8").splitlines()]
    rows = ["| 2,000-char message | n-gram layer alone |", "|---|---|"]
    for lang, joiner in (("en", ". "), ("zh", "。")):
        view = normalise(_long_message([p["text"] for p in corpus if p["locale"] == lang], joiner))
        took = _median_us(lambda v=view: model.riskiest(v), runs)
        rows.append(f"| ordinary {lang} | {took / 1000:.3f} ms |")
    return "\n".join(rows)


# Run in a fresh interpreter: CPU time of importing numpy, then of loading the model (the
# detector's own imports come between, untimed).
_LOAD_PROBE = """
import time
started = time.process_time()
import numpy
imported = time.process_time()
from agents.safety.ngram import load_model
loading = time.process_time()
load_model()
print(imported - started, time.process_time() - loading)
"""


def _fresh_processes(probe: str, processes: int, stdin: str = "") -> list[float]:
    """Per number the probe prints, its median over `processes` fresh interpreters."""
    root = Path(__file__).resolve().parents[1]
    runs = []
    for _ in range(processes):
        command = [sys.executable, "-c", probe]
        done = subprocess.run(command, cwd=root, input=stdin, capture_output=True, text=True)
        done.check_returncode()
        runs.append([float(number) for number in done.stdout.split()])
    return [statistics.median(column) for column in zip(*runs, strict=True)]


def model_load(processes: int) -> str:
    """Median CPU time, over fresh processes, of loading the n-gram model and importing numpy."""
    numpy, load = _fresh_processes(_LOAD_PROBE, processes)
    return (
        f"| fresh process (median of {processes}) | `load_model()` | `import numpy` |\n"
        "|---|---|---|\n"
        f"| n-gram model | {load * 1000:.0f} ms | {numpy * 1000:.0f} ms |"
    )


# Run in a fresh interpreter: CPU time of building the lexicon-only detector (its imports
# untimed), then of its first messages (read from stdin, one JSON list), each after the last.
_BUILD_PROBE = """
import json, sys, time
from agents.safety.detector import CrisisDetector
messages = json.load(sys.stdin)
started = time.process_time()
detector = CrisisDetector()
times = [time.process_time() - started]
for message in messages:
    started = time.process_time()
    detector.detect(message)
    times.append(time.process_time() - started)
print(*times)
"""


def lexicon_build(processes: int, cases: list[dict[str, Any]]) -> str:
    """Median CPU time, over fresh processes, of `CrisisDetector()` (the lexicon: every line
    parsed and proved, Python's `re` compiling a line only when RE2 first says it may match)
    and of its first messages: a short one, then a 2,000-character ordinary one, then a
    2,000-character look-alike-dense one (each new one compiles the lines it first touches)."""
    sources = _speed_sources(cases)
    messages = [
        "i had a long day at work and i just want to talk it through",
        _long_message(sources["ordinary"]["en"], ". "),
        _long_message(sources["look-alike-dense"]["en"], ". "),
    ]
    medians = _fresh_processes(_BUILD_PROBE, processes, json.dumps(messages))
    took = [f"{median * 1000:.0f} ms" for median in medians]
    return (
        f"| fresh process (median of {processes}) | `CrisisDetector()` | then a short message "
        "| then a 2,000-char ordinary one | then a 2,000-char look-alike-dense one |\n"
        "|---|---|---|---|---|\n"
        f"| lexicon | {' | '.join(took)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", type=Path, default=DEV_SET, help="JSON lines cases")
    parser.add_argument("--show", action="store_true", help="list misses and false alarms")
    parser.add_argument("--runs", type=int, default=300, help="timed runs per message (0: none)")
    parser.add_argument(
        "--distinct", type=int, default=100, help="new messages per kind to time (0: none)"
    )
    args = parser.parse_args()
    cases = load_cases(args.set)
    detector, lexicon_only = CrisisDetector(model=load_model()), CrisisDetector()
    result = evaluate(detector, cases)
    print(f"cases: {len(cases)} from {args.set.name}\n")
    print("lexicon only:\n")
    print(report(evaluate(lexicon_only, cases)).split("\n\n")[0])
    print("\nlexicon and n-gram model (CONFIDANT_CRISIS_MODEL=on):\n")
    print(report(result))
    print()
    print(ordinary(detector, lexicon_only))
    if args.runs:
        print()
        print(speed(detector, lexicon_only, cases, args.runs))
        print()
        print(model_speed(args.runs))
    if args.runs and args.distinct:
        print()
        print(speed_on_distinct_messages(detector, lexicon_only, cases, args.distinct))
    if args.runs:
        print()
        print(model_load(5))
        print()
        print(lexicon_build(5, cases))
    if args.show:
        print()
        for case in result["wrong"]:
            kind = "MISS" if case["risky"] else "FALSE ALARM"
            print(
                f"{kind} [{case['lang']} {case['signal']}] {case['text']!r} fired={case['fired']}"
            )
            print(f"    view: {case['view']!r}")


if __name__ == "__main__":
    main()
