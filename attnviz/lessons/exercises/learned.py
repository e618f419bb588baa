"""Lesson 9's exercises: attention that was learned, in the shipped dates translator (a bi-GRU
encoder and a GRU decoder that attends with the dot score, `learn.translation`).

Shape letters: T output characters (rows), S input characters (columns).

Every check runs a model: the shipped translator (`learn.pretrained.load_pretrained`) and an
untrained one of the same sizes, each built once per process (`functools.lru_cache`). They are
imported inside the functions that load them, so listing the exercises does not import
TensorFlow.
"""

from __future__ import annotations

import functools

import numpy as np

from attnviz.learn.recipes import RECIPES
from attnviz.learn.translation.dates import read_date
from attnviz.learn.translation.tasks import make_pairs
from attnviz.lessons.exercises.base import (
    Exercise,
    PickOne,
    Reveal,
    TypeNumber,
    Variant,
    Verdict,
    number_text,
    rng,
    typed_verdict,
)

TASK = "dates"
SCORE = "dot"  # the score lesson 9's page starts with, and a shipped model's
CANDIDATES = 12  # dates a variant draws; it takes the first that fits
ISO_PARTS = ("year",) * 4 + (None,) + ("month",) * 2 + (None,) + ("day",) * 2  # per output char
DIGIT_ROWS = tuple(i for i, part in enumerate(ISO_PARTS) if part)  # the 8 digit characters
OTHER = "something else: a space, a mark or a filler word"  # 9a's last option
UNTRAINED_SHARE = 0.02  # 9b: a typed weight within this share of 1/S counts (the untrained
# weights stray from 1/S by under 1 % of it; 1/(S + 1) is over 3 % off for any S up to 30)
SPACE = "␣"  # how a space is labelled on a chart
KEPT = 64  # model runs kept per process: a check, its reveal and its explanation share one


@functools.lru_cache(maxsize=1)
def trained_model():
    """The shipped dates translator (dot score), loaded once."""
    from attnviz.learn.pretrained import load_pretrained

    return load_pretrained(TASK, SCORE)


@functools.lru_cache(maxsize=1)
def untrained_model():
    """A dates translator of the shipped sizes that never trained, built once. Its weights are
    drawn as Keras draws any new model's (the global seeds are left alone: a training run of
    another session is not disturbed)."""
    from attnviz.learn.recipes import network_config
    from attnviz.learn.translation.model import Seq2SeqAttention

    return Seq2SeqAttention(TASK, network_config(TASK, SCORE), seed=None)


def char_label(index: int, char: str) -> str:
    """A chart label of one character, unique by its place: "8: 2", "7: ␣"."""
    return f"{index}: {SPACE if char == ' ' else char}"


def _labels(text: str) -> tuple[str, ...]:
    return tuple(char_label(i, c) for i, c in enumerate(text))


def _candidates(exercise_id: str, seed: int) -> list[tuple[str, str]]:
    """`CANDIDATES` (source, ISO target) dates of the seed, in the order they are tried."""
    return make_pairs(TASK, CANDIDATES, int(rng(seed, exercise_id).integers(0, 2**32)))


def _parts(source: str) -> list[tuple[str, tuple[int, int]]]:
    """The parts a date shows, in reading order: [(name, (start, end)), ...]."""
    _, spans = read_date(source)
    return sorted(spans.items(), key=lambda item: item[1][0])


def _place(row: int, target: str) -> str:
    """ "character 5 of 2026-**1**1-22"."""
    return f"character {row} of {target[:row]}**{target[row]}**{target[row + 1 :]}"


# ---- 9a: which part of the input does an output character read? ---------------------------


def _part_options(source: str) -> tuple[tuple[str, ...], tuple[tuple[int, int] | None, ...]]:
    """The options of 9a (the input's parts by their text and place, then `OTHER`) and the
    span each stands for (None: anything outside the parts)."""
    labels, spans = [], []
    for _, (a, b) in _parts(source):
        where = f"character {a}" if b - a == 1 else f"characters {a}–{b - 1}"
        labels.append(f"'{source[a:b]}' ({where})")
        spans.append((a, b))
    return (*labels, OTHER), (*spans, None)


def _option_of(spans: tuple, column: int) -> int:
    """The index of the option whose span holds `column` (the last, `OTHER`, if none)."""
    for k, span in enumerate(spans[:-1]):
        if span[0] <= column < span[1]:
            return k
    return len(spans) - 1


def _make_part(seed: int) -> Variant:
    pairs = _candidates("9a", seed)
    translations = trained_model().translate_batch([s for s, _ in pairs])
    order = [int(r) for r in rng(seed, "9a-row").permutation(DIGIT_ROWS)]
    fallback = None
    for (source, target), translation in zip(pairs, translations, strict=True):
        if translation.output != target:
            continue  # a date the model gets wrong has no clear answer
        spans = dict(_parts(source))
        for row in order:
            top = int(translation.weights[row].argmax())
            fallback = fallback or (source, target, row)
            if spans[ISO_PARTS[row]][0] <= top < spans[ISO_PARTS[row]][1]:
                return _part_variant(seed, source, target, row)
    return _part_variant(seed, *(fallback or (*pairs[0], order[0])))


def _part_variant(seed: int, source: str, target: str, row: int) -> Variant:
    options, spans = _part_options(source)
    return Variant(
        seed,
        f"The shipped translator (trained on {RECIPES[TASK].training.n_pairs:,} dates) turns "
        f"`{source}` into `{target}`. When it writes "
        f"{_place(row, target)}, which part of the input does it look at most?",
        PickOne("It looks most at", options),
        {"source": source, "target": target, "row": row, "spans": spans},
    )


@functools.lru_cache(maxsize=KEPT)
def _trained_weights(source: str) -> np.ndarray:
    """The trained model's weights on `source` `(T, S)`, greedy as the page shows (read-only)."""
    weights = np.asarray(trained_model().translate(source).weights, dtype=np.float64)
    weights.setflags(write=False)
    return weights


def _weights(variant: Variant) -> np.ndarray:
    return _trained_weights(variant.data["source"])


def _top(variant: Variant) -> int:
    return int(_weights(variant)[variant.data["row"]].argmax())


def _check_part(variant: Variant, answer) -> Verdict:
    options = variant.answer.options
    if answer not in options:
        return Verdict(False, f"Pick one of: {'; '.join(options)}.")
    source, row, spans = variant.data["source"], variant.data["row"], variant.data["spans"]
    top = _top(variant)
    weight = _weights(variant)[row, top]
    looked = f"character {top} ('{source[top]}', weight {weight:.2f})"
    right = _option_of(spans, top)
    if options.index(answer) == right:
        return Verdict(True, f"Right: it looks most at {looked}, in {options[right]}.")
    return Verdict(False, _part_mistake(variant, options.index(answer), looked, right))


def _part_mistake(variant: Variant, picked: int, looked: str, right: int) -> str:
    """Why the picked part is wrong: the usual mistake (output character k reads input
    character k), or where the model looked."""
    row, options = variant.data["row"], variant.answer.options
    said = f"It looks most at {looked}, in {options[right]}."
    if row < len(variant.data["source"]) and _option_of(variant.data["spans"], row) == picked:
        return (
            f"Not this time. Output character {row} does not read input character {row}: the "
            f"model learned where each output character comes from, wherever it sits. {said}"
        )
    part = ISO_PARTS[row]
    return f"Not this time. {said} Output character {row} is a {part} digit of the ISO date."


def _wrong_part(variant: Variant) -> str:
    """The usual mistake: the part that holds input character k for output character k."""
    options, spans, row = variant.answer.options, variant.data["spans"], variant.data["row"]
    right = _option_of(spans, _top(variant))
    same_place = _option_of(spans, row) if row < len(variant.data["source"]) else right
    return options[same_place if same_place != right else (right + 1) % len(options)]


def _explain_part(variant: Variant) -> str:
    row, target = variant.data["row"], variant.data["target"]
    part = ISO_PARTS[row]
    return (
        f"Output character {row} of {target} is a {part} digit. Trained on "
        f"{RECIPES[TASK].training.n_pairs:,} dates, the model learned to look at the {part} "
        "of the input, wherever the format puts it, so "
        f"row {row} of the chart is bright inside the {part}. (The encoder reads both ways, so "
        "the brightest cell may sit one character off the digit itself.)"
    )


def _reveal_part(variant: Variant, answer) -> Reveal:
    source, target, row = variant.data["source"], variant.data["target"], variant.data["row"]
    options, spans = variant.answer.options, variant.data["spans"]
    guessed = ()
    if answer in options:
        span = spans[options.index(answer)]
        columns = range(*span) if span else (j for j in range(len(source))
                                             if _option_of(spans, j) == len(spans) - 1)  # fmt: skip
        guessed = tuple((row, j) for j in columns)
    return Reveal(
        "The trained model's weights: your part outlined, its largest weight marked",
        _weights(variant),
        _labels(target),
        _labels(source),
        guessed=guessed,
        right=((row, _top(variant)),),
    )


LOOKS_AT = Exercise(
    "9a",
    "predict",
    "Where does a digit come from?",
    _make_part,
    _check_part,
    lambda variant: variant.answer.options[_option_of(variant.data["spans"], _top(variant))],
    _explain_part,
    _reveal_part,
    wrong=_wrong_part,
    needs_models=True,
)


# ---- 9b: the untrained model's weights, by hand -------------------------------------------


def _make_untrained(seed: int) -> Variant:
    source, target = _candidates("9b", seed)[0]
    gen = rng(seed, "9b-cell")
    row = int(gen.choice(DIGIT_ROWS))
    column = int(gen.integers(0, len(source)))
    tolerance = round(UNTRAINED_SHARE / len(source), 4)
    return Variant(
        seed,
        f"A translator of the same size that has **not trained yet** reads `{source}`. Given "
        f"the right answer `{target}` one character at a time, when it writes "
        f"{_place(row, target)}, what weight does it put on input character {column} "
        f"('{source[column]}')? Work it out without the chart and type it (within "
        f"{number_text(tolerance, 4)}).",
        TypeNumber(f"Weight on input character {column}", tolerance=tolerance),
        {"source": source, "target": target, "row": row, "column": column},
    )


@functools.lru_cache(maxsize=KEPT)
def _untrained_of(source: str, target: str) -> np.ndarray:
    """The untrained model's weights `(T, S)` on `source`, the true ISO `target` fed to its
    decoder (its own guesses are noise); read-only."""
    weights = untrained_model().teacher_forced_weights([(source, target)])[0]  # (T_max, S_max)
    weights = np.array(weights[: len(target), : len(source)], dtype=np.float64)  # (T, S)
    weights.setflags(write=False)
    return weights


def _untrained_weights(variant: Variant) -> np.ndarray:
    return _untrained_of(variant.data["source"], variant.data["target"])


def _check_untrained(variant: Variant, answer) -> Verdict:
    row, column = variant.data["row"], variant.data["column"]
    right = _untrained_weights(variant)[row, column]
    n = len(variant.data["source"])
    return typed_verdict(
        answer, right, variant.answer.tolerance,
        lambda: f"Right: the weight is **{right:.4f}**, about 1/{n} = {1 / n:.4f}: the {n} "
        "input characters share it evenly.",
        lambda typed: _untrained_mistake(variant, typed, right),
    )  # fmt: skip


def _untrained_mistake(variant: Variant, typed: float, right: float) -> str:
    """The step that went wrong, found by computing what each usual mistake gives."""
    source, outputs = variant.data["source"], len(variant.data["target"])
    n, letters = len(source), sum(c.isalnum() for c in source)
    said = f"The weight is {right:.4f}; you typed {number_text(typed, 4)}."
    if typed >= 0.3:
        return (
            f"{said} That is a sharp weight, as the trained model puts on the character it "
            f"reads. Before training nothing tells the model where to look: the {n} input "
            "characters share the weight almost evenly."
        )
    tolerance = variant.answer.tolerance
    if letters != n and abs(typed - 1 / letters) <= tolerance:
        return (
            f"{said} That is 1/{letters}: you counted the letters and digits only. Spaces and "
            f"marks are input characters too, each a key: there are {n}."
        )
    if abs(typed - 1 / outputs) <= tolerance:
        return (
            f"{said} That is 1/{outputs}, shared over the output characters. A row shares its "
            f"weight over the input characters, the columns: 1/{n}."
        )
    if min(abs(typed - 1 / (n - 1)), abs(typed - 1 / (n + 1))) <= tolerance:
        return f"{said} Count again: the input has {n} characters, spaces and marks included."
    return f"{said} Count the input characters, spaces and marks included, and split 1 evenly."


def _explain_untrained(variant: Variant) -> str:
    n = len(variant.data["source"])
    return (
        f"Before training the encoder's and decoder's states are small random vectors, so every "
        f"score q · k is close to 0, and softmax turns {n} nearly equal scores into {n} nearly "
        f"equal weights: 1/{n} = {1 / n:.4f} each. Every cell of the chart is the same dark "
        "colour; training is what makes one cell per row bright."
    )


def _reveal_untrained(variant: Variant, answer) -> Reveal:
    row, column = variant.data["row"], variant.data["column"]
    return Reveal(
        "The untrained model's weights: every cell about the same",
        _untrained_weights(variant),
        _labels(variant.data["target"]),
        _labels(variant.data["source"]),
        right=((row, column),),
    )


UNTRAINED = Exercise(
    "9b",
    "compute",
    "Before training",
    _make_untrained,
    _check_untrained,
    lambda variant: number_text(
        _untrained_weights(variant)[variant.data["row"], variant.data["column"]], 4
    ),
    _explain_untrained,
    _reveal_untrained,
    wrong=lambda variant: "0.9",  # the sharp weight of a trained model
    needs_models=True,
)

EXERCISES = (LOOKS_AT, UNTRAINED)
