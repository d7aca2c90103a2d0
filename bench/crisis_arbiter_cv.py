"""Cross-validate an arbiter for the lexicon's hits against today's veto (docs/safety.md,
"Session 10: an arbiter for the lexicon's hits").

    .venv/bin/python -m bench.crisis_arbiter_cv               # the table (about 6 min CPU)
    .venv/bin/python -m bench.crisis_arbiter_cv --seed 7      # another shuffle seed

The veto (`train_ngram.choose_vetoes`) asks the general n-gram model, trained on every case,
whether a message the lexicon fired on reads as benign. An arbiter is the same kind of model
(`train_ngram.train`, the same features) trained only on the written cases the lexicon fires
on, classes balanced per language, so it learns to tell risky from benign among exactly those.
Both are measured on the same folds as `choose_vetoes` (case index modulo 5): each fold's
models are trained on the other folds and score the fold's cases the lexicon fired on. Per
language and tier (wishes and words alone; means, methods, plans, farewells, self-harm), the
level is the highest at which at most the tier's budget of the lexicon's risky catches would
be lost (`VETO_MISS_BUDGET`, `STRICT_VETO_MISS_BUDGET`), chosen as `choose_vetoes` does on the
pooled fold scores: from `VETO_LEVELS` (the rule) or exactly (the score of the risky catch
just past the budget, which no grid can beat); "nested" chooses each fold's level on the other
folds' scores only and counts on the fold, an estimate of what a level does on new data.
Training data only: no held-out set is read beyond `unseen_cases` dropping their duplicates.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import agents.safety.train_ngram as training_module
from agents.safety.ngram import LANGS, features
from agents.safety.train_ngram import (
    DATA,
    EPOCHS,
    ORDINARY_REPEATS,
    SELECTION_SETS,
    STRICT_VETO_MISS_BUDGET,
    TRAINING_SETS,
    VETO_FOLDS,
    VETO_LEVELS,
    VETO_MISS_BUDGET,
    Example,
    Passed,
    at_thresholds,
    choose_thresholds,
    examples,
    frame_cases,
    lexicon_pass,
    ordinary_cases,
    ordinary_threshold_texts,
    threshold_groups,
    train,
    unseen_cases,
)

Scores = dict[int, float]  # case index -> probability of risk (low: the lexicon is held back)
TIERS = ((False, "wishes"), (True, "strict"))
# The levels session 9's veto chose from (0.001 the lowest), next to today's.
SESSION_9_LEVELS = tuple(level for level in VETO_LEVELS if level >= 0.001)


@dataclass(frozen=True)
class Arbiter:
    """One way of training the arbiter."""

    name: str
    frames: bool = False  # the frame rows the lexicon fires on trained on as well
    per_tier: bool = False  # classes balanced per language and tier, not per language
    matched: bool = False  # also the cases where the lexicon held every match back
    stop_share: float | None = None  # None: train_ngram's STOP_SHARE
    epochs: int = EPOCHS
    l2: float | None = None


ARBITERS = (
    Arbiter("arbiter"),
    Arbiter("+ frames' lexicon hits", frames=True),
    Arbiter("balanced per tier", per_tier=True),
    Arbiter("+ cases the lexicon held back", matched=True),
    Arbiter("no stop words", stop_share=1.0),
    Arbiter("held back + no stop words", matched=True, stop_share=1.0),
    Arbiter("3 epochs", epochs=3),
    Arbiter("15 epochs", epochs=15),
    Arbiter("L2 1e-3", l2=1e-3),
)


@contextmanager
def _settings(**values: float) -> Iterator[None]:
    """train_ngram's module settings (the trainer reads them when it runs), for one variant."""
    saved = {name: getattr(training_module, name) for name in values}
    for name, value in values.items():
        setattr(training_module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(training_module, name, value)


class Folds:
    """The written cases, what the lexicon made of them, and the budgets per language and tier."""

    def __init__(self) -> None:
        self.training, _ = unseen_cases(DATA, TRAINING_SETS)
        ordinary_trained, _ = ordinary_cases(DATA)
        self.frame_rows = frame_cases() + ordinary_trained * ORDINARY_REPEATS
        selection, _ = unseen_cases(DATA, SELECTION_SETS)
        self.groups = threshold_groups(selection, ordinary_threshold_texts(DATA))
        self.passed = lexicon_pass([case["text"] for case in self.training])
        self.frames_passed = lexicon_pass([case["text"] for case in self.frame_rows])
        self.fired = [i for i, p in enumerate(self.passed) if p.silent is None]
        self.held = [i for i, p in enumerate(self.passed) if p.silent is not None and p.silent.held]
        caught: Counter[tuple[str, bool]] = Counter()
        for i in self.fired:
            caught[self.passed[i].lang, self.passed[i].strict] += self.risky(i)
        self.allowed = {}
        for lang in LANGS:
            both = caught[lang, False] + caught[lang, True]
            self.allowed[lang, False] = int(VETO_MISS_BUDGET * both)
            self.allowed[lang, True] = int(STRICT_VETO_MISS_BUDGET * caught[lang, True])
        self.caught = caught

    def risky(self, index: int) -> bool:
        return bool(self.training[index]["risky"])

    def veto_scores(self) -> Scores:
        """Today's veto: the fold's general model, thresholded, its riskiest window."""
        written = examples(self.training)
        frames = examples(self.frame_rows)
        scores: Scores = {}
        for fold in range(VETO_FOLDS):
            rest = [c for i, c in enumerate(written) if i % VETO_FOLDS != fold]
            model = train(rest + frames, EPOCHS)
            model = at_thresholds(model, choose_thresholds(model, self.groups))
            for i in self.fired:
                if i % VETO_FOLDS == fold:
                    scores[i] = model.riskiest(self.passed[i].view).probability
        return scores

    def arbiter_scores(self, arbiter: Arbiter) -> tuple[Scores, Scores]:
        """The fold arbiters' scores of the whole view and of the riskiest window."""

        def row(passed: Passed, risky: bool) -> Example:
            group = f"{passed.lang} {passed.strict}" if arbiter.per_tier else passed.lang
            return features(passed.view), risky, group

        trained_on = self.fired + (self.held if arbiter.matched else [])
        rows = {i: row(self.passed[i], self.risky(i)) for i in trained_on}
        always = []
        if arbiter.frames:
            always = [
                row(p, bool(case["risky"]))
                for p, case in zip(self.frames_passed, self.frame_rows, strict=True)
                if p.silent is None
            ]
        settings: dict[str, float] = {}
        if arbiter.stop_share is not None:
            settings["STOP_SHARE"] = arbiter.stop_share
        if arbiter.l2 is not None:
            settings["L2"] = arbiter.l2
        whole: Scores = {}
        window: Scores = {}
        with _settings(**settings):
            for fold in range(VETO_FOLDS):
                rest = [rows[i] for i in trained_on if i % VETO_FOLDS != fold]
                model = train(rest + always, arbiter.epochs)
                for i in self.fired:
                    if i % VETO_FOLDS == fold:
                        view = self.passed[i].view
                        whole[i] = model.probability(view)
                        window[i] = model.riskiest(view).probability
        return whole, window

    def measure(self, scores: Scores, grid: tuple[float, ...] | None) -> str:
        """Per tier and language: false alarms held back / the lexicon's false alarms, risky
        catches lost, the level; and the nested estimate."""
        cells = []
        for strict, tier in TIERS:
            for lang in LANGS:
                cell = [
                    i
                    for i in self.fired
                    if self.passed[i].lang == lang and self.passed[i].strict == strict
                ]
                pairs = [(self.risky(i), scores[i]) for i in cell]
                allowed = self.allowed[lang, strict]
                level = _level(pairs, allowed, grid)
                held, lost = _counts(pairs, level)
                nested_held = nested_lost = 0
                for fold in range(VETO_FOLDS):
                    inner = [(self.risky(i), scores[i]) for i in cell if i % VETO_FOLDS != fold]
                    share = sum(r for r, _ in inner) / max(1, sum(r for r, _ in pairs))
                    fold_level = _level(inner, int(allowed * share), grid)
                    outer = [(self.risky(i), scores[i]) for i in cell if i % VETO_FOLDS == fold]
                    n_held, n_lost = _counts(outer, fold_level)
                    nested_held += n_held
                    nested_lost += n_lost
                false_alarms = sum(1 for r, _ in pairs if not r)
                cells.append(
                    f"{lang} {tier} {held}/{false_alarms} −{lost} "
                    f"(nested {nested_held} −{nested_lost})"
                )
        return " | ".join(cells)


def _level(pairs: list[tuple[bool, float]], allowed: int, grid: tuple[float, ...] | None) -> float:
    """The highest level (of `grid`, or any) below which at most `allowed` risky cases lie."""
    if grid is not None:
        level = 0.0
        for candidate in grid:
            if sum(1 for risky, p in pairs if risky and p < candidate) > allowed:
                break
            level = candidate
        return level
    risky = sorted(p for r, p in pairs if r)
    return risky[allowed] if allowed < len(risky) else 1.0


def _counts(pairs: list[tuple[bool, float]], level: float) -> tuple[int, int]:
    held = sum(1 for risky, p in pairs if not risky and p < level)
    lost = sum(1 for risky, p in pairs if risky and p < level)
    return held, lost


def _logit(probability: float) -> float:
    probability = min(max(probability, 1e-12), 1 - 1e-12)
    return math.log(probability / (1 - probability))


def blend(arbiter: Scores, veto: Scores, weight: float) -> Scores:
    """Both models weighed: the arbiter's logit times `weight` plus the veto's times the rest
    (½: held back only where both read the message as benign enough)."""
    return {
        i: 1 / (1 + math.exp(-(weight * _logit(arbiter[i]) + (1 - weight) * _logit(veto[i]))))
        for i in veto
    }


def show(name: str, row: str) -> None:
    print(f"{name:44s} {row}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=training_module.SEED, help="shuffle seed")
    args = parser.parse_args()
    training_module.SEED = args.seed
    folds = Folds()
    print(
        f"seed {args.seed}; the lexicon's risky catches (wishes, strict): "
        + ", ".join(
            f"{lang} {folds.caught[lang, False]}, {folds.caught[lang, True]}" for lang in LANGS
        )
        + "; may lose: "
        + ", ".join(
            f"{lang} {folds.allowed[lang, False]}, {folds.allowed[lang, True]}" for lang in LANGS
        ),
        flush=True,
    )
    veto = folds.veto_scores()
    show("the veto, session 9's levels", folds.measure(veto, SESSION_9_LEVELS))
    show("the veto, VETO_LEVELS", folds.measure(veto, VETO_LEVELS))
    show("the veto, exact level", folds.measure(veto, None))
    for arbiter in ARBITERS:
        whole, window = folds.arbiter_scores(arbiter)
        show(f"{arbiter.name}: whole view", folds.measure(whole, None))
        show(f"{arbiter.name}: riskiest window", folds.measure(window, None))
        for weight in (0.25, 0.5, 0.75):
            show(
                f"{arbiter.name}: whole ×{weight} + veto",
                folds.measure(blend(whole, veto, weight), None),
            )


if __name__ == "__main__":
    main()
