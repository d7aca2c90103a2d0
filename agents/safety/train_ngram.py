"""Train the n-gram risk model (agents/safety/ngram.py) and write its weights to the repository.

    .venv/bin/python -m agents.safety.train_ngram          # train, report, write the model file
    .venv/bin/python -m agents.safety.train_ngram --cv 5   # 5-fold cross-validation first

Training data (`tests/data/`): the development set, the tuning set and the training sets
written for the model (TRAINING_SETS), every other ordinary message of ORDINARY_SETS, and every
construction of `data/crisis_frames.json`; never a held-out set, which only measures.
Logistic regression by stochastic gradient descent with per-feature step sizes (AdaGrad), L2,
classes balanced per language, a seeded shuffle: the same data gives the same weights. The
number of epochs (EPOCHS) was chosen by 5-fold cross-validation over the written cases.

The threshold is chosen per language on data the model has not seen: the lowest one at which
the model adds at most 2% false alarms to what the lexicon already fires on among the
selection sets' look-alikes (`crisis_selection.jsonl`, `crisis_select_en.jsonl`,
`crisis_select_zh.jsonl`; a case the lexicon fires on, or whose window holds what the lexicon
held back, is not the model's) and fires on at most ORDINARY_BUDGET of the ordinary coaching
text not trained on. The language's bias is then shifted so that the window fires at
probability 0.5 there.

The veto level is chosen per language by k-fold cross-validation (VETO_FOLDS): each fold's
model, thresholded as above, scores the held-out fold's cases that the lexicon fired on with
signals the model may hold back (`detector.MODEL_MAY_HOLD_BACK`); the level is the highest at
which it would have held back at most VETO_MISS_BUDGET of the risky cases the lexicon caught.
The strict level, for what the lexicon fired on with a means, a method, a plan, a farewell or
self-harm, is the highest at which it would have held back at most STRICT_VETO_MISS_BUDGET of
those risky catches.
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
from typing import NamedTuple

from agents.safety.detector import (
    MODEL_MAY_HOLD_BACK,
    CrisisDetector,
    model_window,
    veto_window,
)
from agents.safety.ngram import (
    LANGS,
    MODEL_FILE,
    THRESHOLD,
    NgramModel,
    Weights,
    features,
    language,
    windowed,
)
from agents.safety.normalise import DATA_DIR, normalise

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
TRAINING_SETS = (
    "crisis_dev_set.jsonl",
    "crisis_tuning.jsonl",
    "crisis_train_en.jsonl",
    "crisis_train_zh.jsonl",
    "crisis_train3_en.jsonl",
    "crisis_train3_zh.jsonl",
    "crisis_train4_en.jsonl",
    "crisis_train4_zh.jsonl",
    "crisis_train5_en.jsonl",
    "crisis_train5_zh.jsonl",
    "crisis_train6_en.jsonl",
    "crisis_train6_zh.jsonl",
    "crisis_train7_en.jsonl",
    "crisis_train7_zh.jsonl",
    "crisis_train8_en.jsonl",
    "crisis_train8_zh.jsonl",
    "crisis_train9_en.jsonl",
    "crisis_train9_zh.jsonl",
    "crisis_train10_en.jsonl",
    "crisis_train10_zh.jsonl",
    "crisis_train11_en.jsonl",
    "crisis_train11_zh.jsonl",
    "crisis_train12_en.jsonl",
    "crisis_train12_zh.jsonl",
    "crisis_train13_en.jsonl",
    "crisis_train13_zh.jsonl",
    "crisis_train14_en.jsonl",
    "crisis_train14_zh.jsonl",
    "crisis_train15_en.jsonl",
    "crisis_train15_zh.jsonl",
    "crisis_train16_en.jsonl",
    "crisis_train16_zh.jsonl",
    "crisis_train17_en.jsonl",
    "crisis_train17_zh.jsonl",
    "crisis_train18_en.jsonl",
    "crisis_train18_zh.jsonl",
    "crisis_train19_en.jsonl",
    "crisis_train19_zh.jsonl",
    "crisis_train20_en.jsonl",
    "crisis_train20_zh.jsonl",
    "crisis_train21_en.jsonl",
    "crisis_train21_zh.jsonl",
    "crisis_train22_en.jsonl",
    "crisis_train22_zh.jsonl",
    # Session 11: the line between then and now (23), means and acts against their twins (24),
    # long journal entries with a risk buried in one sentence (25, 26).
    "crisis_train23_en.jsonl",
    "crisis_train23_zh.jsonl",
    "crisis_train24_en.jsonl",
    "crisis_train24_zh.jsonl",
    "crisis_train25_en.jsonl",
    "crisis_train25_zh.jsonl",
    "crisis_train26_en.jsonl",
    "crisis_train26_zh.jsonl",
    # Session 12: recovery told in the past and numbness against their twins now (27), long
    # messages of 600-2,500 characters with the risk in one or two sentences (28).
    "crisis_train27_en.jsonl",
    "crisis_train27_zh.jsonl",
    "crisis_train28_en.jsonl",
    "crisis_train28_zh.jsonl",
    # Held-out set 4 until session 9: measured at session 8's start and end (docs/safety.md),
    # then trained on, with set 5 written to measure in its place.
    "crisis_former_heldout4.jsonl",
    # Held-out set 5 until session 10 (measured at session 9's start and end), then trained on.
    "crisis_former_heldout5.jsonl",
)
# Ordinary messages to a coach (session 7, no risk, no look-alikes): every other one is trained
# on (ORDINARY_REPEATS times), the rest chooses the threshold with the ordinary budget.
ORDINARY_SETS = (
    "crisis_ordinary_en.jsonl",
    "crisis_ordinary_zh.jsonl",
    "crisis_ordinary4_en.jsonl",
    "crisis_ordinary4_zh.jsonl",
    "crisis_ordinary8_en.jsonl",
    "crisis_ordinary8_zh.jsonl",
    "crisis_ordinary11_en.jsonl",
    "crisis_ordinary11_zh.jsonl",
    "crisis_ordinary17_en.jsonl",
    "crisis_ordinary17_zh.jsonl",
    "crisis_ordinary18_en.jsonl",
    "crisis_ordinary18_zh.jsonl",
    "crisis_ordinary19_en.jsonl",
    "crisis_ordinary19_zh.jsonl",
    "crisis_ordinary20_en.jsonl",
    "crisis_ordinary20_zh.jsonl",
    "crisis_ordinary21_en.jsonl",
    "crisis_ordinary21_zh.jsonl",
    "crisis_ordinary22_en.jsonl",
    "crisis_ordinary22_zh.jsonl",
    # Written after the model retrained on train16-22 gave the helplines to an e2e test's
    # "I'm afraid it won't be good enough": the self-doubt and worry a coach hears most.
    "crisis_ordinary23_en.jsonl",
    "crisis_ordinary23_zh.jsonl",
    # Session 11: what users type to the four apps, heavy everyday words included (24), the
    # everyday senses of the words a filter trips on (26), and the ordinary lines of train23-26
    # (long journal entries among them).
    "crisis_ordinary24_en.jsonl",
    "crisis_ordinary24_zh.jsonl",
    "crisis_ordinary23t_en.jsonl",
    "crisis_ordinary23t_zh.jsonl",
    "crisis_ordinary24t_en.jsonl",
    "crisis_ordinary24t_zh.jsonl",
    "crisis_ordinary25t_en.jsonl",
    "crisis_ordinary25t_zh.jsonl",
    "crisis_ordinary26_en.jsonl",
    "crisis_ordinary26_zh.jsonl",
    "crisis_ordinary26t_en.jsonl",
    "crisis_ordinary26t_zh.jsonl",
    # Session 12: the ordinary lines of train27 and the long journal entries of train28.
    "crisis_ordinary27t_en.jsonl",
    "crisis_ordinary27t_zh.jsonl",
    "crisis_ordinary28t_en.jsonl",
    "crisis_ordinary28t_zh.jsonl",
    "crisis_former_heldout4_ordinary.jsonl",
    "crisis_former_heldout5_ordinary.jsonl",
)
# Written in session 13 and not yet trained on (tests/data/crisis_train29_*, 30_*, 31_* and
# crisis_ordinary29t_* ... 31t_*): farewells, plans with a time, burden and self-harm against
# their everyday twins (29), then vs now and me vs someone else (30), long entries with the risk
# buried (31). Retrained with them, the model caught fewer of the selection sets' and the
# held-out sets' risky cases than session 12's; but so did retrains on session 12's own data
# (with the 4 cases that equal held-out set 10 dropped) under three seeds: a retrain is a draw
# that spreads that much (docs/safety.md, session 13). The shipped model is still session
# 12's; steadier training comes before training on these.
# Choose the thresholds; never trained on.
SELECTION_SETS = ("crisis_selection.jsonl", "crisis_select_en.jsonl", "crisis_select_zh.jsonl")
# Measure only. Read here for one thing: a training or selection case that normalises to the
# same text as a held-out case is dropped, so the held-out figures stay unseen ones.
HELD_OUT_SETS = (
    "crisis_heldout.jsonl",
    "crisis_heldout2.jsonl",
    "crisis_heldout3.jsonl",
    "crisis_heldout6.jsonl",
    "crisis_heldout6_ordinary.jsonl",
    "crisis_heldout7.jsonl",
    "crisis_heldout7_ordinary.jsonl",
    "crisis_heldout8.jsonl",
    "crisis_heldout8_ordinary.jsonl",
    "crisis_heldout9.jsonl",
    "crisis_heldout9_ordinary.jsonl",
    "crisis_heldout10.jsonl",
    "crisis_heldout10_ordinary.jsonl",
    "crisis_heldout11.jsonl",
    "crisis_heldout11_ordinary.jsonl",
)
FRAMES_FILE = "crisis_frames.json"
# Ordinary coaching text (never trained on): the thresholds must keep it quiet too, with the
# ordinary messages of the frames file that are not trained on.
ORDINARY_TEXT = Path(__file__).resolve().parents[2] / "confidant/wisdom/data/corpus.jsonl"
BENCH_QUERIES = Path(__file__).resolve().parents[2] / "bench/data/wisdom_eval.jsonl"
# The ordinary messages count this many times: a few hundred must outweigh what thousands of
# look-alikes (mostly about others, fiction, news) teach by accident, that "I" and "myself"
# alone are risky.
ORDINARY_REPEATS = 4
STOP_SHARE = 0.05
SEED = 20261123
LEARNING_RATE = 0.1
L2 = 1e-5
FALSE_ALARM_BUDGET = 0.02  # what the model may add, per language, on unseen look-alikes
# What it may fire on, per language, in the ordinary coaching text kept for the threshold. Half
# of 1%: on ordinary messages that neither trained nor thresholded the model, a 1% budget fired
# on 1.3% (en) in 5-fold CV, 0.5% on 0.7% (docs/safety.md).
ORDINARY_BUDGET = 0.005
MIN_WEIGHT = 0.05  # smaller weights are dropped (5-fold CV: no loss, a third fewer lookups)
# The veto may cost at most this share of the risky cases the lexicon catches, per language,
# in cross-validation (the levels tried are VETO_LEVELS, window probabilities after the shift).
VETO_MISS_BUDGET = 0.005
# A means, a method, a plan, a farewell or self-harm: at most one in a thousand of the lexicon's
# risky catches of those (a budget of none let one case in 1,540 switch the tier off).
STRICT_VETO_MISS_BUDGET = 0.001
VETO_FOLDS = 5
# Levels under 0.001 for the strict tier: with 0.001 the lowest, two risky catches scored under
# it (the budget is one) switched the Chinese tier off at one seed and not at another (session
# 10, docs/safety.md). A lower level is tried first, so it never lowers a tier's choice.
VETO_LEVELS = (
    0.0001,
    0.0002,
    0.0003,
    0.0005,
    0.0007,
    0.001,
    0.002,
    0.005,
    0.01,
    0.02,
    0.03,
    0.05,
    0.08,
    0.1,
    0.15,
    0.2,
    0.3,
)
# Chosen by 5-fold CV (recall at the budgets: 2-3 epochs, which early stopping on log-loss
# picks, caught 2.5 points fewer risky zh cases than 8; 15 was no better).
EPOCHS = 8

Example = tuple[list[str], bool, str]  # n-grams, risky, language


def frame_cases() -> list[dict]:
    """Every frame with every predicate (`data/crisis_frames.json`): the same construction with
    a risky and an everyday predicate or topic, and risky predicates said of others or in a
    story; and
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
            (spec.get("topic_frames", []), spec.get("topics_risky", []), True),
            (spec.get("topic_frames", []), spec.get("topics_benign", []), False),
        ):
            cases += [
                {
                    "text": frame.format(p=predicate, m=predicate, t=predicate),
                    "risky": risky,
                    "lang": lang,
                }
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
    being in the first person. (Counted per language instead, 5-fold CV caught 45 more risky
    English cases but fired on 21 more look-alikes and 4 more ordinary messages.)"""
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
        return NgramModel(Weights.of(kept), dict.fromkeys(LANGS, self.bias))


def _logistic(score: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))


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


class Passed(NamedTuple):
    """What the lexicon made of a text: its language, what the model will see when the
    lexicon is silent (None: the lexicon fired, and a veto would weigh `view`), the view, and
    whether a veto would be the strict one (a signal past the wishes fired)."""

    lang: str
    silent: Silent | None
    view: str = ""
    strict: bool = False
    fired: tuple[tuple[int, int], ...] = ()  # the spans the lexicon fired on


def lexicon_pass(texts: list[str]) -> list[Passed]:
    """Each text through the lexicon (which does not change with the model: done once)."""
    lexicon = CrisisDetector()
    passed = []
    for text in texts:
        detection = lexicon.detect(text)
        held = tuple((match.start, match.end) for match, _ in detection.held_back)
        silent = None if detection.risky else Silent(detection.view, held)
        strict = not MODEL_MAY_HOLD_BACK.issuperset(detection.signals)
        fired = tuple((match.start, match.end) for match in detection.matches)
        passed.append(Passed(language(detection.view), silent, detection.view, strict, fired))
    return passed


# Logit thresholds (before the shift) per language and window kind: (lang, True) for a view
# scored whole (a short message), (lang, False) for the riskiest of a long one's windows.
Thresholds = dict[tuple[str, bool], float]


def fires(model: NgramModel, thresholds: Thresholds, passed: Passed) -> bool:
    """Whether the lexicon, or else the model at these (unshifted) logit thresholds, fires (the
    veto is measured on its own, by `choose_vetoes`)."""
    if passed.silent is None:
        return True
    logit, whole = model_score(model, passed)
    return logit >= thresholds[passed.lang, whole]


@dataclass(frozen=True)
class VetoChoice:
    levels: dict[str, float]
    strict_levels: dict[str, float]
    report: str


def choose_vetoes(
    training: list[dict],
    always: list[Example],
    groups: list[tuple[list[Passed], float]],
    folds: int = VETO_FOLDS,
) -> VetoChoice:
    """Per language and tier, the highest VETO_LEVELS level at which the fold models would have
    held back at most the tier's budget of the risky cases the lexicon caught in their folds:
    VETO_MISS_BUDGET of all its catches for wishes and words alone, STRICT_VETO_MISS_BUDGET of
    its catches with a means, method, plan, farewell or self-harm for those."""
    written = examples(training)
    fired = lexicon_pass([case["text"] for case in training])
    # language, strict, risky, the riskiest window's probability
    scored: list[tuple[str, bool, bool, float]] = []
    caught: Counter[tuple[str, bool]] = Counter()
    for fold in range(folds):
        model = train([c for i, c in enumerate(written) if i % folds != fold] + always, EPOCHS)
        model = at_thresholds(model, choose_thresholds(model, groups))
        for index in range(fold, len(training), folds):
            passed = fired[index]
            if passed.silent is not None:  # the lexicon did not fire: nothing to veto
                continue
            risky_case = bool(training[index]["risky"])
            caught[passed.lang, passed.strict] += risky_case
            probability = veto_window(model, passed.view, passed.fired).probability
            scored.append((passed.lang, passed.strict, risky_case, probability))
    levels: dict[bool, dict[str, float]] = {False: {}, True: {}}
    lines = []
    for strict, name in ((False, "wishes and words alone"), (True, "means, plans, farewells")):
        for lang in LANGS:
            tier = [(risky, p) for lg, st, risky, p in scored if lg == lang and st == strict]
            if strict:
                allowed = int(STRICT_VETO_MISS_BUDGET * caught[lang, True])
            else:
                allowed = int(VETO_MISS_BUDGET * (caught[lang, False] + caught[lang, True]))
            level = 0.0
            for candidate in VETO_LEVELS:
                if sum(1 for risky, p in tier if risky and p < candidate) > allowed:
                    break
                level = candidate
            lost = sum(1 for risky, p in tier if risky and p < level)
            spared = sum(1 for risky, p in tier if not risky and p < level)
            false_alarms = sum(1 for risky, _ in tier if not risky)
            levels[strict][lang] = level
            lines.append(
                f"  {lang} {name}: veto below {level}, {folds}-fold: of the lexicon's "
                f"{false_alarms} false alarms {spared} held back, of its "
                f"{caught[lang, strict]} risky catches {lost} lost"
            )
    return VetoChoice(levels[False], levels[True], "\n".join(lines))


def model_score(model: NgramModel, passed: Passed) -> tuple[float, bool]:
    """The logit of the model's riskiest window (before the threshold shift), or -inf where the
    lexicon fired or held back something in that window (the model never overrules it); and
    whether the view was scored whole (a short message) or per window."""
    silent = passed.silent
    window = None if silent is None else model_window(model, silent.view, silent.held)
    if window is None:
        return -math.inf, not windowed(passed.view)
    return _logit(window.probability), window.whole


def choose_thresholds(model: NgramModel, groups: list[tuple[list[Passed], float]]) -> Thresholds:
    """Per language and window kind, the lowest logit threshold at which the model fires on at
    most each group's budget of its benign texts of that kind (look-alikes: 2%, ordinary text:
    ORDINARY_BUDGET); the strictest group wins. What the lexicon fires on is not the model's
    and does not count. Short messages and long ones are thresholded apart: the riskiest of a
    long text's dozens of windows runs higher than a short text's one score, and with one
    threshold for both, the long ordinary texts set it (session 11: 10 of the 13 English ones
    over it were long, and the selection sets' recall fell from 104 to 91 of 125). A kind no
    group holds takes the other kind's threshold."""
    chosen = [_lowest_thresholds(model, passed, budget) for passed, budget in groups]
    thresholds = {key: max(found[key] for found in chosen) for key in chosen[0]}
    for lang in LANGS:
        if thresholds[lang, False] == -math.inf:
            thresholds[lang, False] = thresholds[lang, True]
    return thresholds


def _lowest_thresholds(model: NgramModel, passed: list[Passed], budget: float) -> Thresholds:
    logits: dict[tuple[str, bool], list[float]] = {
        (lang, whole): [] for lang in LANGS for whole in (True, False)
    }
    for case in passed:
        logit, whole = model_score(model, case)
        logits[case.lang, whole].append(logit)
    thresholds = {}
    for key, found in logits.items():
        ranked = sorted(found, reverse=True)
        allowed = int(budget * len(ranked))
        thresholds[key] = ranked[allowed] + 1e-6 if allowed < len(ranked) else -math.inf
    return thresholds


def model_thresholds(model: NgramModel) -> Thresholds:
    """The logit thresholds a shifted model fires at (`at_thresholds`)."""
    return {
        (lang, whole): _logit(
            model.threshold if whole else model.window_thresholds.get(lang, model.threshold)
        )
        for lang in LANGS
        for whole in (True, False)
    }


def _logit(probability: float) -> float:
    probability = min(max(probability, 1e-12), 1 - 1e-12)
    return math.log(probability / (1 - probability))


def at_thresholds(model: NgramModel, thresholds: Thresholds) -> NgramModel:
    """The model with each language's bias shifted so that a short message fires at THRESHOLD
    exactly where that language's chosen threshold lies, and the window threshold where the
    long messages' one lies on the shifted scale."""
    shift = _logit(THRESHOLD)
    whole = {lang: max(thresholds[lang, True], -30.0) for lang in model.biases}
    biases = {lang: model.biases[lang] - whole[lang] + shift for lang in model.biases}
    windows = {
        lang: round(_logistic(max(thresholds[lang, False], -30.0) - whole[lang] + shift), 6)
        for lang in model.biases
    }
    return NgramModel(model.weights, biases, THRESHOLD, window_thresholds=windows)


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


def ordinary_threshold_texts(data: Path, *, with_ordinary_sets: bool = True) -> list[str]:
    """Ordinary coaching text never trained on: the wisdom corpus's passages, the frames
    file's and (unless cross-validation folds them itself) the ordinary sets' messages not
    trained on."""
    corpus = [passage["text"] for passage in read_cases(ORDINARY_TEXT.parent, ORDINARY_TEXT.name)]
    kept = ordinary_cases(data)[1] if with_ordinary_sets else []
    return corpus + ordinary_selection() + kept


def threshold_groups(
    selection: list[dict], ordinary: list[str]
) -> list[tuple[list[Passed], float]]:
    look_alikes = [case["text"] for case in selection if not case["risky"]]
    return [
        (lexicon_pass(look_alikes), FALSE_ALARM_BUDGET),
        (lexicon_pass(ordinary), ORDINARY_BUDGET),
    ]


def fired_counts(model: NgramModel, thresholds: Thresholds, passed: list[Passed]) -> Counter[str]:
    """Per language, how many texts the whole detector fires on at those thresholds."""
    fired: Counter[str] = Counter()
    for case in passed:
        fired[case.lang] += fires(model, thresholds, case)
    return fired


def cross_validate(data: Path, folds: int) -> None:
    """k-fold cross-validation over the written training cases and, separately, over the
    ordinary messages of ORDINARY_SETS (the frames are always trained on). Each fold's model is
    trained on the other folds (of the other ordinary folds every other message, ORDINARY_REPEATS
    times), thresholded by the rule above on the selection sets and the rest of the other
    ordinary folds with the other threshold text, then measured on its folds: recall and false
    alarms of the whole detector on the written cases (the development set, which the lexicon
    was tuned to catch entirely, apart), how often it fires on ordinary messages no part of the
    fold's training or threshold saw (without the veto, which `choose_vetoes` measures)."""
    training, _ = unseen_cases(data, TRAINING_SETS)
    selection, _ = unseen_cases(data, SELECTION_SETS)
    ordinary, _ = unseen_cases(data, ORDINARY_SETS)
    always = examples(frame_cases())
    other_threshold_text = ordinary_threshold_texts(data, with_ordinary_sets=False)
    look_alikes = threshold_groups(selection, [])[0]
    ordinary_passed = lexicon_pass([case["text"] for case in ordinary])
    other_passed = lexicon_pass(other_threshold_text)
    ordinary_examples = examples(ordinary)
    passed = lexicon_pass([case["text"] for case in training])
    written = examples(training)
    dev = {case["text"] for case in read_cases(data, "crisis_dev_set.jsonl")}
    totals: Counter[tuple[str, str]] = Counter()
    for fold in range(folds):
        rest = [i for i in range(len(ordinary)) if i % folds != fold]
        trained = [ordinary_examples[i] for i in rest[::2]] * ORDINARY_REPEATS
        model = train(
            [c for i, c in enumerate(written) if i % folds != fold] + always + trained, EPOCHS
        )
        groups = [
            look_alikes,
            ([ordinary_passed[i] for i in rest[1::2]] + other_passed, ORDINARY_BUDGET),
        ]
        thresholds = choose_thresholds(model, groups)
        for index in range(fold, len(ordinary), folds):
            case = ordinary_passed[index]
            totals[case.lang, "ordinary"] += 1
            totals[case.lang, "ordinary lexicon"] += case.silent is None
            totals[case.lang, "ordinary fired"] += fires(model, thresholds, case)
        for index in range(fold, len(training), folds):
            if training[index]["text"] in dev:
                continue
            case = passed[index]
            kind = "risky" if training[index]["risky"] else "benign"
            fired = fires(model, thresholds, case)
            totals[case.lang, kind] += 1
            totals[case.lang, f"{kind} lexicon"] += case.silent is None
            totals[case.lang, f"{kind} fired"] += fired
    print(f"{folds}-fold cross-validation, {EPOCHS} epochs, written cases outside the dev set:")
    for lang in LANGS:
        n = {key: totals[lang, key] for _, key in totals if _ == lang}
        print(
            f"  {lang} recall lexicon {n.get('risky lexicon', 0)}/{n.get('risky', 0)}, with model "
            f"{n.get('risky fired', 0)}/{n.get('risky', 0)}; "
            f"false alarms lexicon {n.get('benign lexicon', 0)}/{n.get('benign', 0)}, with model "
            f"{n.get('benign fired', 0)}/{n.get('benign', 0)}; unseen ordinary messages fired: "
            f"lexicon "
            f"{n.get('ordinary lexicon', 0)}/{n.get('ordinary', 0)}, with model "
            f"{n.get('ordinary fired', 0)}/{n.get('ordinary', 0)}"
        )


def bench_queries() -> list[Passed]:
    """The wisdom benchmark's user queries: ordinary messages to a coach that nothing here
    trains or thresholds on (bench.crisis_eval prints the same count)."""
    lines = BENCH_QUERIES.read_text(encoding="utf-8").splitlines()
    return lexicon_pass([json.loads(line)["query"] for line in lines if line.strip()])


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
    model = replace(
        at_thresholds(model, thresholds), vetoes=veto.levels, strict_vetoes=veto.strict_levels
    )
    model.save(args.out)
    for name in TRAINING_SETS + ORDINARY_SETS + SELECTION_SETS:
        print(_fingerprint(args.data, name))
    print(
        f"dropped as duplicates of held-out cases: {dropped} training, "
        f"{dropped_selection} selection cases"
    )
    print(
        f"{len(written)} written cases, {len(frames)} frame and ordinary rows "
        f"({len(ordinary_trained)} ordinary messages x{ORDINARY_REPEATS}), {epochs} epochs, "
        f"{len(model.weights)} weights -> {args.out.name}; logit thresholds, short / long "
        + ", ".join(
            f"{lang} {thresholds[lang, True]:.3f} / {thresholds[lang, False]:.3f}" for lang in LANGS
        )
    )
    ordinary_total = Counter(case.lang for case in groups[1][0])
    print(
        "ordinary text kept for the threshold ("
        f"{len(ordinary_kept)} ordinary-set messages, the frames' other half, the wisdom "
        "corpus), the whole detector fires on: "
        + ", ".join(f"{lang} {ordinary_fired[lang]}/{ordinary_total[lang]}" for lang in LANGS)
    )
    print("the model's veto over the lexicon (cross-validated):\n" + veto.report)
    print("selection sets, the whole detector:\n" + selection_report(model, selection))
    queries = bench_queries()
    queries_fired = fired_counts(model, model_thresholds(model), queries)
    print(
        "wisdom benchmark queries (ordinary, never trained or thresholded on), fired: "
        + ", ".join(
            f"{lang} {queries_fired[lang]}/{sum(q.lang == lang for q in queries)}" for lang in LANGS
        )
    )


if __name__ == "__main__":
    main()
