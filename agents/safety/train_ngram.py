"""Train the n-gram risk model (agents/safety/ngram.py) and write its weights to the repository.

    .venv/bin/python -m agents.safety.train_ngram          # train, report, write the JSON

Training data (`tests/data/`): the development set, the tuning set and the training sets
written for the model (`crisis_train_en.jsonl`, `crisis_train_zh.jsonl`), and every
construction of `data/crisis_frames.json`; never a held-out set, which only measures.
Logistic regression by stochastic gradient descent with per-feature step sizes (AdaGrad), L2,
classes balanced per language, a seeded shuffle: the same data gives the same weights. The
number of epochs (EPOCHS) was chosen by 5-fold cross-validation over the written cases
(`--cv 5` prints recall and false alarms at the threshold rule below).

The threshold is chosen per language on data the model has not seen, the selection sets
(`crisis_selection.jsonl`, `crisis_select_en.jsonl`, `crisis_select_zh.jsonl`): the lowest one
at which the model adds at most 2% false alarms to what the lexicon already fires on (a case
the lexicon fires on, or whose window holds what the lexicon held back, is not the model's).
The language's bias is then shifted so that the window fires at probability 0.5 there.

The veto level is chosen per language by k-fold cross-validation (VETO_FOLDS): each fold's
model, thresholded as above, scores the held-out fold's cases that the lexicon fired on with
signals the model may hold back (`detector.MODEL_MAY_HOLD_BACK`); the level is the highest at
which it would have held back at most VETO_MISS_BUDGET of the risky cases the lexicon caught.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from agents.safety.detector import MODEL_MAY_HOLD_BACK, CrisisDetector
from agents.safety.ngram import LANGS, MODEL_FILE, THRESHOLD, NgramModel, features, language
from agents.safety.normalise import DATA_DIR, normalise

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
TRAINING_SETS = (
    "crisis_dev_set.jsonl",
    "crisis_tuning.jsonl",
    "crisis_train_en.jsonl",
    "crisis_train_zh.jsonl",
    "crisis_train3_en.jsonl",
    "crisis_train3_zh.jsonl",
)
# Ordinary messages to a coach (session 7, no risk, no look-alikes): every other one is trained
# on (ORDINARY_REPEATS times), the rest chooses the threshold with the ordinary budget.
ORDINARY_SETS = ("crisis_ordinary_en.jsonl", "crisis_ordinary_zh.jsonl")
# Choose the thresholds; never trained on.
SELECTION_SETS = ("crisis_selection.jsonl", "crisis_select_en.jsonl", "crisis_select_zh.jsonl")
# Measure only. Read here for one thing: a training or selection case that normalises to the
# same text as a held-out case is dropped, so the held-out figures stay unseen ones.
HELD_OUT_SETS = ("crisis_heldout.jsonl", "crisis_heldout2.jsonl", "crisis_heldout3.jsonl")
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
ORDINARY_BUDGET = 0.01  # what it may fire on, per language, in unseen ordinary coaching text
MIN_WEIGHT = 0.05  # smaller weights are dropped (5-fold CV: no loss, a third fewer lookups)
# The veto may cost at most this share of the risky cases the lexicon catches, per language,
# in cross-validation (the levels tried are VETO_LEVELS, window probabilities after the shift).
VETO_MISS_BUDGET = 0.005
VETO_FOLDS = 5
VETO_LEVELS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3)
# Chosen by 5-fold CV (recall at the budgets: 2-3 epochs, which early stopping on log-loss
# picks, caught 2.5 points fewer risky zh cases than 8; 15 was no better).
EPOCHS = 8

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


@dataclass(frozen=True)
class Silent:
    """A message the lexicon lets through: its view and the spans it held back."""

    view: str
    held: tuple[tuple[int, int], ...]


def lexicon_pass(texts: list[str]) -> list[tuple[str, Silent | None]]:
    """Each text's language and, when the lexicon does not fire, what the model will see (the
    lexicon does not change with the model, so this is done once per text)."""
    lexicon = CrisisDetector()
    passed = []
    for text in texts:
        detection = lexicon.detect(text)
        held = tuple((match.start, match.end) for match, _ in detection.held_back)
        silent = None if detection.risky else Silent(detection.view, held)
        passed.append((language(detection.view), silent))
    return passed


def lexicon_fired(texts: list[str]) -> list[tuple[str, bool, str | None]]:
    """Each text's language, whether the lexicon fires, and its view when it fires on signals
    the model may hold back only (what a veto would weigh)."""
    lexicon = CrisisDetector()
    fired = []
    for text in texts:
        detection = lexicon.detect(text)
        weighed = detection.risky and MODEL_MAY_HOLD_BACK.issuperset(detection.signals)
        fired.append(
            (language(detection.view), detection.risky, detection.view if weighed else None)
        )
    return fired


@dataclass(frozen=True)
class VetoChoice:
    levels: dict[str, float]
    report: str


def choose_vetoes(
    training: list[dict],
    always: list[Example],
    groups: list[tuple[list[tuple[str, Silent | None]], float]],
    folds: int = VETO_FOLDS,
) -> VetoChoice:
    """Per language, the highest VETO_LEVELS level at which the fold models would have held
    back at most VETO_MISS_BUDGET of the risky cases the lexicon caught in their folds."""
    written = examples(training)
    fired = lexicon_fired([case["text"] for case in training])
    scored: list[tuple[str, bool, float]] = []  # language, risky, riskiest window's probability
    caught: Counter[str] = Counter()
    for fold in range(folds):
        model = train([c for i, c in enumerate(written) if i % folds != fold] + always, EPOCHS)
        model = at_thresholds(model, choose_thresholds(model, groups))
        for index in range(fold, len(training), folds):
            lang, risky, view = fired[index]
            caught[lang] += risky and bool(training[index]["risky"])
            if view is not None:
                risky_case = bool(training[index]["risky"])
                scored.append((lang, risky_case, model.riskiest(view).probability))
    levels: dict[str, float] = {}
    lines = []
    for lang in LANGS:
        allowed = int(VETO_MISS_BUDGET * caught[lang])
        level = 0.0
        for candidate in VETO_LEVELS:
            lost = sum(1 for lg, risky, p in scored if lg == lang and risky and p < candidate)
            if lost > allowed:
                break
            level = candidate
        lost = sum(1 for lg, risky, p in scored if lg == lang and risky and p < level)
        spared = sum(1 for lg, risky, p in scored if lg == lang and not risky and p < level)
        false_alarms = sum(
            1
            for (lg, fires, _), case in zip(fired, training, strict=True)
            if lg == lang and fires and not case["risky"]
        )
        levels[lang] = level
        lines.append(
            f"  {lang} veto below {level}: {folds}-fold, of the lexicon's {false_alarms} false "
            f"alarms {spared} held back, of its {caught[lang]} risky catches {lost} lost"
        )
    return VetoChoice(levels, "\n".join(lines))


def model_logit(model: NgramModel, silent: Silent | None) -> float:
    """The logit of the model's riskiest window (before the threshold shift), or -inf where the
    lexicon fired or held back something in that window (the model never overrules it)."""
    if silent is None:
        return -math.inf
    window = model.riskiest(silent.view)
    if any(start < window.end and window.start < end for start, end in silent.held):
        return -math.inf
    return _logit(window.probability)


def choose_thresholds(
    model: NgramModel, groups: list[tuple[list[tuple[str, Silent | None]], float]]
) -> dict[str, float]:
    """Per language, the lowest logit threshold at which the model fires on at most each
    group's budget of its benign texts (look-alikes: 2%, ordinary text: 1%); the strictest
    group wins."""
    chosen = [_lowest_thresholds(model, passed, budget) for passed, budget in groups]
    return {lang: max(thresholds[lang] for thresholds in chosen) for lang in LANGS}


def _lowest_thresholds(
    model: NgramModel, passed: list[tuple[str, Silent | None]], budget: float
) -> dict[str, float]:
    logits: dict[str, list[float]] = {lang: [] for lang in LANGS}
    for lang, silent in passed:
        logits[lang].append(model_logit(model, silent))
    thresholds = {}
    for lang in LANGS:
        ranked = sorted(logits[lang], reverse=True)
        allowed = int(budget * len(ranked))
        thresholds[lang] = ranked[allowed] + 1e-6 if allowed < len(ranked) else -math.inf
    return thresholds


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


def ordinary_cases(data: Path) -> tuple[list[dict], list[str]]:
    """The ordinary messages of ORDINARY_SETS: every other one to train on, the rest (texts)
    for the threshold."""
    cases, _ = unseen_cases(data, ORDINARY_SETS)
    by_lang = [[case for case in cases if case["lang"] == lang] for lang in LANGS]
    trained = [case for group in by_lang for case in group[::2]]
    kept = [case["text"] for group in by_lang for case in group[1::2]]
    return trained, kept


def ordinary_threshold_texts(data: Path) -> list[str]:
    """Ordinary coaching text never trained on: the wisdom corpus's passages, the frames
    file's and the ordinary sets' messages not trained on."""
    corpus = [passage["text"] for passage in read_cases(ORDINARY_TEXT.parent, ORDINARY_TEXT.name)]
    return corpus + ordinary_selection() + ordinary_cases(data)[1]


def threshold_groups(
    selection: list[dict], ordinary: list[str]
) -> list[tuple[list[tuple[str, Silent | None]], float]]:
    look_alikes = [case["text"] for case in selection if not case["risky"]]
    return [
        (lexicon_pass(look_alikes), FALSE_ALARM_BUDGET),
        (lexicon_pass(ordinary), ORDINARY_BUDGET),
    ]


def fired_counts(
    model: NgramModel, thresholds: dict[str, float], passed: list[tuple[str, Silent | None]]
) -> Counter[str]:
    """Per language, how many texts the whole detector fires on at those thresholds."""
    fired: Counter[str] = Counter()
    for lang, silent in passed:
        fired[lang] += silent is None or model_logit(model, silent) >= thresholds[lang]
    return fired


def cross_validate(data: Path, folds: int) -> None:
    """k-fold cross-validation over the written training cases (the frames and the trained
    ordinary messages are always trained on): each fold's model is thresholded by the rule
    above on the selection sets and the held-back ordinary text, and then measured on its
    fold. Prints recall and false alarms of the whole detector (the development set, which
    the lexicon was tuned to catch entirely, apart) and how often it fires on ordinary text."""
    training, _ = unseen_cases(data, TRAINING_SETS)
    selection, _ = unseen_cases(data, SELECTION_SETS)
    ordinary_trained, _ = ordinary_cases(data)
    always = examples(frame_cases() + ordinary_trained * ORDINARY_REPEATS)
    groups = threshold_groups(selection, ordinary_threshold_texts(data))
    ordinary_passed = groups[1][0]
    passed = lexicon_pass([case["text"] for case in training])
    written = examples(training)
    epochs = EPOCHS
    dev = {case["text"] for case in read_cases(data, "crisis_dev_set.jsonl")}
    totals: Counter[tuple[str, str]] = Counter()
    for fold in range(folds):
        model = train([c for i, c in enumerate(written) if i % folds != fold] + always, epochs)
        thresholds = choose_thresholds(model, groups)
        for lang, n in fired_counts(model, thresholds, ordinary_passed).items():
            totals[lang, "ordinary fired"] += n
        for index in range(fold, len(training), folds):
            case = training[index]
            if case["text"] in dev:
                continue
            lang, silent = passed[index]
            kind = "risky" if case["risky"] else "benign"
            totals[lang, kind] += 1
            totals[lang, f"{kind} lexicon"] += silent is None
            totals[lang, f"{kind} fired"] += (
                silent is None or model_logit(model, silent) >= thresholds[lang]
            )
    ordinary_total = Counter(lang for lang, _ in ordinary_passed)
    print(f"{folds}-fold cross-validation, {epochs} epochs, written cases outside the dev set:")
    for lang in LANGS:
        print(
            f"  {lang} recall lexicon {totals[lang, 'risky lexicon']}/{totals[lang, 'risky']}, "
            f"with model {totals[lang, 'risky fired']}/{totals[lang, 'risky']}; false alarms "
            f"lexicon {totals[lang, 'benign lexicon']}/{totals[lang, 'benign']}, with model "
            f"{totals[lang, 'benign fired']}/{totals[lang, 'benign']}; ordinary text fired "
            f"{totals[lang, 'ordinary fired']}/{folds * ordinary_total[lang]} (threshold text)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DATA_DIR / MODEL_FILE)
    parser.add_argument("--data", type=Path, default=DATA, help="where the sets are")
    parser.add_argument("--cv", type=int, default=0, help="cross-validate over k folds first")
    args = parser.parse_args()
    if args.cv:
        cross_validate(args.data, args.cv)
    training, dropped = unseen_cases(args.data, TRAINING_SETS)
    written = examples(training)
    ordinary_trained, ordinary_kept = ordinary_cases(args.data)
    frames = examples(frame_cases() + ordinary_trained * ORDINARY_REPEATS)
    epochs = EPOCHS
    model = train(written + frames, epochs)
    selection, dropped_selection = unseen_cases(args.data, SELECTION_SETS)
    ordinary = ordinary_threshold_texts(args.data)
    groups = threshold_groups(selection, ordinary)
    thresholds = choose_thresholds(model, groups)
    ordinary_fired = fired_counts(model, thresholds, groups[1][0])
    veto = choose_vetoes(training, frames, groups)
    model = replace(at_thresholds(model, thresholds), vetoes=veto.levels)
    args.out.write_text(model.to_json() + "\n", encoding="utf-8")
    for name in TRAINING_SETS + ORDINARY_SETS + SELECTION_SETS:
        print(_fingerprint(args.data, name))
    print(
        f"dropped as duplicates of held-out cases: {dropped} training, "
        f"{dropped_selection} selection cases"
    )
    print(
        f"{len(written)} written cases, {len(frames)} frame and ordinary rows "
        f"({len(ordinary_trained)} ordinary messages x{ORDINARY_REPEATS}), {epochs} epochs, "
        f"{len(model.weights)} weights -> {args.out.name}; logit thresholds "
        + ", ".join(f"{lang} {value:.3f}" for lang, value in thresholds.items())
    )
    ordinary_total = Counter(lang for lang, _ in groups[1][0])
    print(
        "ordinary text kept for the threshold ("
        f"{len(ordinary_kept)} ordinary-set messages, the frames' other half, the wisdom "
        "corpus), the whole detector fires on: "
        + ", ".join(f"{lang} {ordinary_fired[lang]}/{ordinary_total[lang]}" for lang in LANGS)
    )
    print("the model's veto over the lexicon (cross-validated):\n" + veto.report)
    print("selection sets, the whole detector:\n" + selection_report(model, selection))


if __name__ == "__main__":
    main()
