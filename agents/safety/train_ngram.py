"""Train the n-gram risk model (agents/safety/ngram.py) and write its weights to the repository.

    .venv/bin/python -m agents.safety.train_ngram          # train, report, write the JSON

Training data: the development set and the tuning set (`tests/data/crisis_dev_set.jsonl`,
`crisis_tuning.jsonl`); never the frozen held-out set, which only measures. Logistic regression
by plain stochastic gradient descent (no dependency), balanced classes, L2, a fixed order: the
same data gives the same weights. Besides the sets, every construction of `data/crisis_frames.json`.
The threshold is chosen on data the model has not seen, the selection set
(`crisis_selection.jsonl`): the lowest one whose false-alarm rate on its benign look-alikes stays
within the budget.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

from agents.safety.ngram import MODEL_FILE, NgramModel, features
from agents.safety.normalise import DATA_DIR, normalise

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
DEV_SET, TUNING_SET = "crisis_dev_set.jsonl", "crisis_tuning.jsonl"
SELECTION_SET = "crisis_selection.jsonl"  # chooses the threshold; never trained on
FRAMES_FILE = "crisis_frames.json"
EPOCHS = 10
LEARNING_RATE = 0.05
L2 = 1e-4
FALSE_ALARM_BUDGET = 0.02  # the model alone, on unseen benign look-alikes
MIN_WEIGHT = 0.01  # smaller weights are dropped from the shipped file


def load(*names: str) -> list[tuple[list[str], bool, str]]:
    cases = [case for name in names for case in _cases(name)] + frame_cases()
    return [(features(normalise(case["text"])), case["risky"], case["lang"]) for case in cases]


def frame_cases() -> list[dict]:
    """Every frame with every predicate (`data/crisis_frames.json`): the same construction with
    a risky and an everyday predicate, and risky predicates said of others or in a story."""
    body = json.loads((DATA_DIR / FRAMES_FILE).read_text(encoding="utf-8"))
    cases = []
    for lang in ("en", "zh"):
        spec = body[lang]
        for frames, predicates, risky in (
            (spec["frames"], spec["risky"], True),
            (spec["frames"], spec["benign"], False),
            (spec["others"], spec["others_risky"], False),
            (spec["means_frames"], spec["means"], False),
        ):
            cases += [
                {"text": frame.format(p=predicate, m=predicate), "risky": risky, "lang": lang}
                for frame in frames
                for predicate in predicates
            ]
    return cases


def train(examples: list[tuple[list[str], bool, str]], threshold: float = 0.5) -> NgramModel:
    positives = sum(risky for _, risky, _ in examples)
    class_weight = {
        True: len(examples) / (2 * positives),
        False: len(examples) / (2 * (len(examples) - positives)),
    }
    weights: dict[str, float] = defaultdict(float)
    bias = 0.0
    order = _interleaved(examples)
    for epoch in range(EPOCHS):
        rate = LEARNING_RATE / (1 + epoch * 0.2)
        for index in order:
            grams, risky, _ = examples[index]
            score = bias + sum(weights[g] for g in grams)
            probability = 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))
            step = rate * class_weight[risky] * ((1.0 if risky else 0.0) - probability)
            bias += step
            for gram in grams:
                weights[gram] += step - rate * L2 * weights[gram]
    kept = {g: w for g, w in weights.items() if abs(w) >= MIN_WEIGHT}
    return NgramModel(kept, bias, threshold)


def _interleaved(examples: list[tuple[list[str], bool, str]]) -> list[int]:
    """A fixed order that mixes the sets and classes (a stride through the list)."""
    stride = 7919  # a prime, coprime with any set size we use
    return [(i * stride) % len(examples) for i in range(len(examples))]


def choose_threshold(model: NgramModel) -> tuple[float, float, float]:
    """(threshold, recall, false alarms) of the model alone on the selection set: the lowest
    threshold whose false-alarm rate on its benign look-alikes stays within the budget."""
    scored = [
        (model.riskiest(normalise(case["text"])).probability, case["risky"])
        for case in _cases(SELECTION_SET)
    ]
    benign = sorted((p for p, risky in scored if not risky), reverse=True)
    allowed = int(FALSE_ALARM_BUDGET * len(benign))
    threshold = round(benign[allowed] + 1e-4, 4) if allowed < len(benign) else 0.5
    risky = [p for p, r in scored if r]
    recall = sum(p >= threshold for p in risky) / len(risky)
    return threshold, recall, sum(p >= threshold for p in benign) / len(benign)


def _cases(name: str) -> list[dict]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DATA_DIR / MODEL_FILE)
    args = parser.parse_args()
    examples = load(DEV_SET, TUNING_SET)
    model = train(examples)
    threshold, recall, false_alarms = choose_threshold(model)
    model = NgramModel(model.weights, model.bias, threshold)
    args.out.write_text(model.to_json() + "\n", encoding="utf-8")
    print(
        f"{len(examples)} examples, {len(model.weights)} weights -> {args.out.name}; threshold "
        f"{threshold} (the model alone on the selection set: recall {recall:.1%}, "
        f"false alarms {false_alarms:.1%})"
    )


if __name__ == "__main__":
    main()
