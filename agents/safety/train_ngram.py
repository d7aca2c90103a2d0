"""Train the n-gram risk model (agents/safety/ngram.py) and write its weights to the repository.

    .venv/bin/python -m agents.safety.train_ngram          # train, report, write the JSON

Training data (`tests/data/`): the development set, the tuning set and the training sets
written for the model (`crisis_train_en.jsonl`, `crisis_train_zh.jsonl`), and every
construction of `data/crisis_frames.json`; never a held-out set, which only measures.
Logistic regression by stochastic gradient descent with per-feature step sizes (AdaGrad), L2,
classes balanced per language, a seeded shuffle: the same data gives the same weights. The
number of epochs is chosen by early stopping: every tenth written case is set aside, the model
is trained until the balanced log-loss on those stops improving, and then trained again on
everything for that many epochs.

The threshold is chosen per language on data the model has not seen, the selection sets
(`crisis_selection.jsonl`, `crisis_select_en.jsonl`, `crisis_select_zh.jsonl`): the lowest one
at which the model adds at most 2% false alarms to what the lexicon already fires on (a case
the lexicon fires on, or whose window holds what the lexicon held back, is not the model's).
The language's bias is then shifted so that the window fires at probability 0.5 there.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
from collections import Counter
from pathlib import Path

from agents.safety.detector import CrisisDetector
from agents.safety.ngram import LANGS, MODEL_FILE, THRESHOLD, NgramModel, features, language
from agents.safety.normalise import DATA_DIR, normalise

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
TRAINING_SETS = (
    "crisis_dev_set.jsonl",
    "crisis_tuning.jsonl",
    "crisis_train_en.jsonl",
    "crisis_train_zh.jsonl",
)
# Choose the thresholds; never trained on.
SELECTION_SETS = ("crisis_selection.jsonl", "crisis_select_en.jsonl", "crisis_select_zh.jsonl")
# Measure only. Read here for one thing: a training or selection case that normalises to the
# same text as a held-out case is dropped, so the held-out figures stay unseen ones.
HELD_OUT_SETS = ("crisis_heldout.jsonl", "crisis_heldout2.jsonl")
FRAMES_FILE = "crisis_frames.json"
# Ordinary coaching text (never trained on): the thresholds must keep it quiet too, with the
# ordinary messages of the frames file that are not trained on.
ORDINARY_TEXT = Path(__file__).resolve().parents[2] / "confidant/wisdom/data/corpus.jsonl"
# The ordinary messages count this many times: a few hundred must outweigh what thousands of
# look-alikes (mostly about others, fiction, news) teach by accident, that "I" and "myself"
# alone are risky.
ORDINARY_REPEATS = 4
STOP_SHARE = 0.05
SEED = 20261123
MAX_EPOCHS = 30
PATIENCE = 3  # epochs without a better validation loss before stopping
VALIDATION_EVERY = 10  # every tenth written case validates the epoch count
LEARNING_RATE = 0.1
L2 = 1e-5
FALSE_ALARM_BUDGET = 0.02  # what the model may add, per language, on unseen look-alikes
MIN_WEIGHT = 0.005  # smaller weights are dropped from the shipped file

Example = tuple[list[str], bool, str]  # n-grams, risky, language


def frame_cases() -> list[dict]:
    """Every frame with every predicate (`data/crisis_frames.json`): the same construction with
    a risky and an everyday predicate, and risky predicates said of others or in a story; and
    every other ordinary message to a coach (benign; the others choose the threshold)."""
    body = json.loads((DATA_DIR / FRAMES_FILE).read_text(encoding="utf-8"))
    cases = []
    for lang in LANGS:
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
        ordinary = [{"text": text, "risky": False, "lang": lang} for text in spec["ordinary"][::2]]
        cases += ordinary * ORDINARY_REPEATS
    return cases


def ordinary_selection() -> list[str]:
    """The ordinary messages of `data/crisis_frames.json` not trained on (every other one)."""
    body = json.loads((DATA_DIR / FRAMES_FILE).read_text(encoding="utf-8"))
    return [text for lang in LANGS for text in body[lang]["ordinary"][1::2]]


def examples(cases: list[dict]) -> list[Example]:
    return [
        (features(normalise(case["text"])), bool(case["risky"]), case["lang"]) for case in cases
    ]


def stop_words(data: list[Example]) -> frozenset[str]:
    """Single words and characters found in more than STOP_SHARE of the cases ("i", "my",
    "我", "了"): they get no weight (in pairs they keep theirs), so a message is not risky for
    being in the first person."""
    frequency = Counter(gram for grams, _, _ in data for gram in set(grams) if _single(gram))
    return frozenset(gram for gram, n in frequency.items() if n > STOP_SHARE * len(data))


def _single(gram: str) -> bool:
    return len(gram) == 1 or (gram.isascii() and gram.isalpha())


class _Trainer:
    """Logistic regression over feature ids, AdaGrad steps, classes balanced per language."""

    def __init__(self, data: list[Example]) -> None:
        self.vocabulary: dict[str, int] = {}
        ids = self.vocabulary.setdefault
        stop = stop_words(data)
        self.rows = [
            ([ids(gram, len(self.vocabulary)) for gram in grams if gram not in stop], risky, lang)
            for grams, risky, lang in data
        ]
        counts = Counter((lang, risky) for _, risky, lang in data)
        self.class_weight = {
            (lang, risky): (counts[lang, True] + counts[lang, False]) / (2 * counts[lang, risky])
            for lang, risky in counts
        }
        self.weights = [0.0] * len(self.vocabulary)
        self.squares = [1e-8] * len(self.vocabulary)
        self.bias, self.bias_squares = 0.0, 1e-8
        self.order = list(range(len(self.rows)))
        self.shuffle = random.Random(SEED)

    def epoch(self) -> None:
        weights, squares = self.weights, self.squares
        self.shuffle.shuffle(self.order)
        for index in self.order:
            ids, risky, lang = self.rows[index]
            probability = _logistic(self.bias + sum(weights[i] for i in ids))
            gradient = (probability - risky) * self.class_weight[lang, risky]
            self.bias_squares += gradient * gradient
            self.bias -= LEARNING_RATE * gradient / math.sqrt(self.bias_squares)
            for i in ids:
                step = gradient + L2 * weights[i]
                squares[i] += step * step
                weights[i] -= LEARNING_RATE * step / math.sqrt(squares[i])

    def model(self) -> NgramModel:
        names = {index: gram for gram, index in self.vocabulary.items()}
        kept = {names[i]: w for i, w in enumerate(self.weights) if abs(w) >= MIN_WEIGHT}
        return NgramModel(kept, dict.fromkeys(LANGS, self.bias))


def _logistic(score: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))


def balanced_log_loss(model: NgramModel, data: list[Example]) -> float:
    """Mean log-loss, each (language, class) weighing the same."""
    losses: dict[tuple[str, bool], list[float]] = {}
    for grams, risky, lang in data:
        score = model.biases[lang] + sum(model.weights.get(gram, 0.0) for gram in grams)
        probability = min(max(_logistic(score), 1e-9), 1 - 1e-9)
        losses.setdefault((lang, risky), []).append(
            -math.log(probability if risky else 1 - probability)
        )
    return sum(sum(group) / len(group) for group in losses.values()) / len(losses)


def choose_epochs(written: list[Example], frames: list[Example]) -> int:
    """Early stopping: the epoch count with the lowest loss on every tenth written case."""
    validation = written[::VALIDATION_EVERY]
    training = [case for i, case in enumerate(written) if i % VALIDATION_EVERY] + frames
    trainer = _Trainer(training)
    best, best_epochs = math.inf, 1
    for epoch in range(1, MAX_EPOCHS + 1):
        trainer.epoch()
        loss = balanced_log_loss(trainer.model(), validation)
        if loss < best:
            best, best_epochs = loss, epoch
        elif epoch - best_epochs >= PATIENCE:
            break
    return best_epochs


def train(data: list[Example], epochs: int) -> NgramModel:
    trainer = _Trainer(data)
    for _ in range(epochs):
        trainer.epoch()
    return trainer.model()


def choose_thresholds(model: NgramModel, selection: list[dict]) -> dict[str, float]:
    """Per language, the lowest logit threshold at which the model adds at most the budget of
    false alarms both on the selection sets' benign look-alikes and on ordinary coaching text
    (the wisdom corpus's passages); the lexicon runs first."""
    groups = [
        [case["text"] for case in selection if not case["risky"]],
        [passage["text"] for passage in read_cases(ORDINARY_TEXT.parent, ORDINARY_TEXT.name)]
        + ordinary_selection(),
    ]
    chosen = [_lowest_thresholds(model, texts) for texts in groups]
    return {lang: max(thresholds[lang] for thresholds in chosen) for lang in LANGS}


def _lowest_thresholds(model: NgramModel, benign_texts: list[str]) -> dict[str, float]:
    lexicon = CrisisDetector()
    logits: dict[str, list[float]] = {lang: [] for lang in LANGS}
    benign: Counter[str] = Counter()
    for text in benign_texts:
        detection = lexicon.detect(text)
        benign[language(detection.view)] += 1
        if detection.risky:
            continue
        window = model.riskiest(detection.view)
        if any(s < window.end and window.start < e for (_, s, e) in _held(detection)):
            continue  # the model never overrules what the lexicon held back
        logits[language(detection.view[window.start : window.end])].append(
            _logit(window.probability)
        )
    thresholds = {}
    for lang in LANGS:
        ranked = sorted(logits[lang], reverse=True)
        allowed = int(FALSE_ALARM_BUDGET * benign[lang])
        thresholds[lang] = ranked[allowed] + 1e-6 if allowed < len(ranked) else -math.inf
    return thresholds


def _held(detection) -> list[tuple[str, int, int]]:  # type: ignore[no-untyped-def]
    return [(why, match.start, match.end) for match, why in detection.held_back]


def _logit(probability: float) -> float:
    probability = min(max(probability, 1e-12), 1 - 1e-12)
    return math.log(probability / (1 - probability))


def at_thresholds(model: NgramModel, thresholds: dict[str, float]) -> NgramModel:
    """The model with each language's bias shifted so that it fires at THRESHOLD exactly where
    that language's chosen threshold lies."""
    shift = _logit(THRESHOLD)
    biases = {
        lang: model.biases[lang] - max(thresholds[lang], -30.0) + shift for lang in model.biases
    }
    return NgramModel(model.weights, biases, THRESHOLD)


def selection_report(model: NgramModel, selection: list[dict]) -> str:
    """Recall and false alarms per language on the selection sets, lexicon alone and with the
    model (the whole detector)."""
    rows = []
    detectors = {"lexicon": CrisisDetector(), "lexicon + model": CrisisDetector(model=model)}
    for lang in LANGS:
        cases = [case for case in selection if case["lang"] == lang]
        for name, detector in detectors.items():
            fired = [(detector.detect(case["text"]).risky, case["risky"]) for case in cases]
            risky = [f for f, r in fired if r]
            benign = [f for f, r in fired if not r]
            rows.append(
                f"  {lang} {name:16s} recall {sum(risky)}/{len(risky)}, "
                f"false alarms {sum(benign)}/{len(benign)}"
            )
    return "\n".join(rows)


def unseen_cases(data: Path, names: tuple[str, ...]) -> tuple[list[dict], int]:
    """The cases of the sets, without those whose view is a held-out case's (and how many
    were dropped)."""
    held_out = {
        normalise(case["text"])
        for name in HELD_OUT_SETS
        if (data / name).exists()
        for case in read_cases(data, name)
    }
    cases = [case for name in names for case in read_cases(data, name)]
    kept = [case for case in cases if normalise(case["text"]) not in held_out]
    return kept, len(cases) - len(kept)


def read_cases(data: Path, name: str) -> list[dict]:
    path = data / name
    if not path.exists():
        raise SystemExit(f"{path} is missing: the model is trained on every set listed")
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _fingerprint(data: Path, name: str) -> str:
    digest = hashlib.sha256((data / name).read_bytes()).hexdigest()[:12]
    return f"{name} ({len(read_cases(data, name))} cases, sha256 {digest})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DATA_DIR / MODEL_FILE)
    parser.add_argument("--data", type=Path, default=DATA, help="where the sets are")
    args = parser.parse_args()
    training, dropped = unseen_cases(args.data, TRAINING_SETS)
    written = examples(training)
    frames = examples(frame_cases())
    epochs = choose_epochs(written, frames)
    model = train(written + frames, epochs)
    selection, dropped_selection = unseen_cases(args.data, SELECTION_SETS)
    thresholds = choose_thresholds(model, selection)
    model = at_thresholds(model, thresholds)
    args.out.write_text(model.to_json() + "\n", encoding="utf-8")
    for name in TRAINING_SETS + SELECTION_SETS:
        print(_fingerprint(args.data, name))
    print(
        f"dropped as duplicates of held-out cases: {dropped} training, "
        f"{dropped_selection} selection cases"
    )
    print(
        f"{len(written)} written cases and {len(frames)} frames, {epochs} epochs (early "
        f"stopping), {len(model.weights)} weights -> {args.out.name}; logit thresholds "
        + ", ".join(f"{lang} {value:.3f}" for lang, value in thresholds.items())
    )
    print("selection sets, the whole detector:\n" + selection_report(model, selection))


if __name__ == "__main__":
    main()
