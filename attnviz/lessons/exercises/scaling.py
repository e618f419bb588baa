"""Lesson 3's exercises: dividing the scores by √d_k keeps softmax from saturating.

Shape letters: T queries, S keys, D features (d_k).
"""

from __future__ import annotations

import math

import numpy as np

from attnviz.lessons.exercises.base import (
    Estimate,
    Exercise,
    PickOne,
    Reveal,
    TypeNumber,
    Variant,
    Verdict,
    labels,
    number_text,
    read_fraction,
    rng,
    typed_verdict,
)
from attnviz.lessons.exercises.maths import attend

TOLERANCE = 0.01  # 3a: a typed score this close counts
ESTIMATE_TOLERANCE = 0.1  # 3b: a guessed weight this close counts
SMALL, LARGE = 4, 64  # 3c: the features of the two queries compared


def _scores(q: np.ndarray, k: np.ndarray, scale: bool) -> np.ndarray:
    """Dot scores `(T, S)` by `compute_attention`, divided by √d_k when `scale`."""
    return np.asarray(attend(q, k, k, score="dot", scale=scale).scores, dtype=np.float64)


def _weights(q: np.ndarray, k: np.ndarray, scale: bool) -> np.ndarray:
    """Softmax weights `(T, S)` by `compute_attention`, scaled or not."""
    return np.asarray(attend(q, k, k, score="dot", scale=scale).weights, dtype=np.float64)


def _top_weight(scores: np.ndarray) -> float:
    """The largest softmax weight of a row of `scores` `(S,)`, in numpy: only for drawing a
    variant (drawing stays free of TensorFlow; checks use `compute_attention`)."""
    e = np.exp(scores - scores.max())
    return float(e.max() / e.sum())


# ---- 3a: compute one scaled score ----------------------------------------------------------

CELL_QUERIES, CELL_KEYS, CELL_FEATURES = 2, 3, 4  # √4 = 2: a division by hand


def _make_cell(seed: int) -> Variant:
    gen = rng(seed, "3a")
    while True:
        q = gen.integers(-3, 4, size=(CELL_QUERIES, CELL_FEATURES)).astype(np.float64)
        k = gen.integers(-3, 4, size=(CELL_KEYS, CELL_FEATURES)).astype(np.float64)
        i, j = int(gen.integers(0, CELL_QUERIES)), int(gen.integers(0, CELL_KEYS))
        if abs(q[i] @ k[j]) >= 2:  # raw, ÷2 and ÷4 then differ by at least 0.5
            break
    return Variant(
        seed,
        f"Work out the **scaled** score of **query {i}** for **key {j}**: q{i} · k{j} / √d_k, "
        f"with d_k = {CELL_FEATURES} features.",
        TypeNumber(f"Scaled score of query {i} for key {j}", tolerance=TOLERANCE),
        {"q": q, "k": k, "cell": (i, j)},
        (
            ("Q", q, labels("query", CELL_QUERIES), labels("feature", CELL_FEATURES)),
            ("K", k, labels("key", CELL_KEYS), labels("feature", CELL_FEATURES)),
        ),
    )


def _cell_scores(variant: Variant, scale: bool = True) -> np.ndarray:
    return _scores(variant.data["q"], variant.data["k"], scale)


def _check_cell(variant: Variant, answer) -> Verdict:
    i, j = variant.data["cell"]
    raw, right = _cell_scores(variant, False)[i, j], _cell_scores(variant)[i, j]
    return typed_verdict(
        answer, right, TOLERANCE,
        lambda: f"Right: q{i} · k{j} = {number_text(raw)}, and {number_text(raw)} / "
        f"√{CELL_FEATURES} = {number_text(raw)} / {math.isqrt(CELL_FEATURES)} = "
        f"**{number_text(right)}**.",
        lambda typed: _cell_mistake(variant, typed),
    )  # fmt: skip


def _cell_mistake(variant: Variant, typed: float) -> str:
    """The step that went wrong, found by computing what each usual mistake gives."""
    i, j = variant.data["cell"]
    raw, scaled = _cell_scores(variant, False), _cell_scores(variant)
    root = math.isqrt(CELL_FEATURES)
    if abs(typed - raw[i, j]) <= TOLERANCE:
        return (
            f"You forgot to divide by √d_k: {number_text(raw[i, j])} is q{i} · k{j} itself. "
            f"Divide it by √{CELL_FEATURES} = {root}."
        )
    if abs(typed - raw[i, j] / CELL_FEATURES) <= TOLERANCE:
        return (
            f"You divided by d_k = {CELL_FEATURES}, not by its square root: divide "
            f"{number_text(raw[i, j])} by √{CELL_FEATURES} = {root}."
        )
    for a in range(CELL_QUERIES):
        for b in range(CELL_KEYS):
            if (a, b) != (i, j) and abs(typed - scaled[a, b]) <= TOLERANCE:
                return (
                    f"That is query {a}'s scaled score for key {b}. Take row {i} of Q and "
                    f"row {j} of K."
                )
    return (
        f"Not quite. Multiply row {i} of Q and row {j} of K feature by feature, add the "
        f"products, then divide by √{CELL_FEATURES} = {root}."
    )


def _explain_cell(variant: Variant) -> str:
    i, j = variant.data["cell"]
    raw = _cell_scores(variant, False)[i, j]
    return (
        f"The dot product q{i} · k{j} = {number_text(raw)} grows with the number of features; "
        f"dividing by √d_k = √{CELL_FEATURES} = {math.isqrt(CELL_FEATURES)} brings it back to "
        f"{number_text(raw / math.isqrt(CELL_FEATURES))}. The chart shows every scaled score; "
        "the outlined cell is this one."
    )


def _reveal_cell(variant: Variant, answer) -> Reveal:
    return Reveal(
        "Scaled scores q · k / √d_k",
        _cell_scores(variant),
        labels("query", CELL_QUERIES),
        labels("key", CELL_KEYS),
        kind="scores",
        right=(variant.data["cell"],),
    )


CELL = Exercise(
    "3a",
    "compute",
    "One scaled score by hand",
    _make_cell,
    _check_cell,
    lambda variant: number_text(_cell_scores(variant)[variant.data["cell"]]),
    _explain_cell,
    _reveal_cell,
    wrong=lambda variant: number_text(_cell_scores(variant, False)[variant.data["cell"]]),
)


# ---- 3b: estimate the top weight without scaling -------------------------------------------

ROW_KEYS = 3


def _make_unscaled(seed: int) -> Variant:
    gen = rng(seed, "3b")
    while True:
        d_k = int(gen.choice([4, 16]))
        scaled = gen.integers(-2, 5, size=ROW_KEYS) / 2  # -1 to 2 in halves: whole raw scores
        top = int(np.argmax(scaled))
        with_scale, without = _top_weight(scaled), _top_weight(scaled * math.sqrt(d_k))
        if (
            np.sum(scaled == scaled[top]) == 1
            and with_scale <= 0.75
            and without >= with_scale + 0.2
        ):
            break
    q, k = _one_query(scaled * math.sqrt(d_k), d_k)
    raw = ", ".join(f"key {n}: {number_text(s)}" for n, s in enumerate(scaled * math.sqrt(d_k)))
    return Variant(
        seed,
        f"One query's dot scores are {raw}, with d_k = {d_k} features. Scaled by "
        f"√{d_k} = {math.isqrt(d_k)} they become {', '.join(number_text(s) for s in scaled)}, "
        f"and softmax gives **key {top}** the weight **{with_scale:.2f}**. Switch the scaling "
        f"off: roughly what weight does key {top} get now? (Within {ESTIMATE_TOLERANCE} counts.)",
        Estimate(f"Weight of key {top} without scaling", 0.0, 1.0, 0.01),
        {"q": q, "k": k, "key": top, "d_k": d_k},
    )


def _one_query(raw: np.ndarray, d_k: int) -> tuple[np.ndarray, np.ndarray]:
    """A query `(1, d_k)` and keys `(S, d_k)` whose dot scores are `raw` `(S,)`."""
    q = np.eye(d_k)[:1]  # (1, d_k): its scores are the keys' first features
    k = np.zeros((len(raw), d_k))
    k[:, 0] = raw
    return q, k


def _unscaled_weight(variant: Variant, scale: bool = False) -> float:
    return float(_weights(variant.data["q"], variant.data["k"], scale)[0, variant.data["key"]])


def _check_unscaled(variant: Variant, answer) -> Verdict:
    try:
        answer = read_fraction(answer)
    except ValueError as error:
        return Verdict(False, str(error))
    right, kept = _unscaled_weight(variant), _unscaled_weight(variant, scale=True)
    off = abs(answer - right)
    if off <= ESTIMATE_TOLERANCE:
        return Verdict(
            True, f"Close enough: without scaling it is **{right:.3f}** (you said {answer:.2f})."
        )
    if abs(answer - kept) <= ESTIMATE_TOLERANCE / 2:
        return Verdict(
            False,
            f"That is about the weight with scaling ({kept:.3f}). Without it every score is "
            f"√{variant.data['d_k']} = {math.isqrt(variant.data['d_k'])} times larger, so the "
            f"gaps between them grow too and the top key takes more: **{right:.3f}**.",
        )
    return Verdict(
        False,
        f"Without scaling the weight is **{right:.3f}**; you said {answer:.2f}, {off:.2f} "
        f"{'too high' if answer > right else 'too low'}.",
    )


def _explain_unscaled(variant: Variant) -> str:
    d_k, top = variant.data["d_k"], variant.data["key"]
    return (
        f"Softmax only sees the gaps between scores. Without scaling they are √{d_k} = "
        f"{math.isqrt(d_k)} times wider, and e^gap grows fast, so key {top} goes from "
        f"{_unscaled_weight(variant, scale=True):.2f} to {_unscaled_weight(variant):.2f}: the "
        "row gets much sharper. The chart shows both rows."
    )


def _reveal_unscaled(variant: Variant, answer) -> Reveal:
    q, k = variant.data["q"], variant.data["k"]
    rows = np.concatenate([_weights(q, k, True), _weights(q, k, False)])  # (2, S)
    return Reveal(
        "Weights with and without scaling",
        rows,
        ("scaled by √d_k", "not scaled"),
        labels("key", ROW_KEYS),
        right=((1, variant.data["key"]),),
    )


UNSCALED = Exercise(
    "3b",
    "predict",
    "Switch the scaling off",
    _make_unscaled,
    _check_unscaled,
    _unscaled_weight,
    _explain_unscaled,
    _reveal_unscaled,
    wrong=lambda variant: round(_unscaled_weight(variant, scale=True), 2),
)


# ---- 3c: which of two queries is sharper -------------------------------------------------

SHARP_KEYS = 4
SHARP_OPTIONS = (f"query A ({SMALL} features)", f"query B ({LARGE} features)")


def _make_sharper(seed: int) -> Variant:
    gen = rng(seed, "3c")
    while True:
        pairs = [
            (
                gen.integers(-1, 2, size=(1, d)).astype(np.float64),
                gen.integers(-1, 2, size=(SHARP_KEYS, d)).astype(np.float64),
            )
            for d in (SMALL, LARGE)
        ]
        tops = [_top_weight((q @ k.T)[0]) for q, k in pairs]
        if abs(tops[0] - tops[1]) >= 0.15:
            break
    (qa, ka), (qb, kb) = pairs
    keys = labels("key", SHARP_KEYS)
    return Variant(
        seed,
        f"Query A and its {SHARP_KEYS} keys have {SMALL} features each; query B and its keys "
        f"have {LARGE}. All their numbers are random whole numbers −1, 0 or 1. **Without "
        "scaling**, whose weights are sharper (the largest weight closer to 1)?",
        PickOne("Sharper without scaling", SHARP_OPTIONS),
        {"pairs": pairs},
        (
            ("query A", qa, ("A",), labels("feature", SMALL)),
            ("keys of A", ka, keys, labels("feature", SMALL)),
            ("query B", qb, ("B",), labels("feature", LARGE)),
            ("keys of B", kb, keys, labels("feature", LARGE)),
        ),
    )


def _sharp_rows(variant: Variant, scale: bool = False) -> np.ndarray:
    """The two queries' weights `(2, S)`: A's row, then B's."""
    return np.concatenate([_weights(q, k, scale) for q, k in variant.data["pairs"]])


def _sharper(variant: Variant) -> int:
    return int(np.argmax(_sharp_rows(variant).max(axis=1)))


def _check_sharper(variant: Variant, answer) -> Verdict:
    if answer not in SHARP_OPTIONS:
        return Verdict(False, f"Pick one of: {', '.join(SHARP_OPTIONS)}.")
    raw = [_scores(q, k, False)[0] for q, k in variant.data["pairs"]]
    tops = _sharp_rows(variant).max(axis=1)
    said = (
        f"Query A's scores run from {number_text(raw[0].min())} to {number_text(raw[0].max())} "
        f"and its largest weight is {tops[0]:.3f}; query B's run from "
        f"{number_text(raw[1].min())} to {number_text(raw[1].max())}, largest weight "
        f"{tops[1]:.3f}."
    )
    if SHARP_OPTIONS.index(answer) == _sharper(variant):
        return Verdict(True, f"Right. {said}")
    return Verdict(False, f"Not this time. {said}")


def _explain_sharper(variant: Variant) -> str:
    scaled = _sharp_rows(variant, scale=True).max(axis=1)
    return (
        f"A dot product adds one product per feature, so with {LARGE} features the scores "
        f"spread about √({LARGE}/{SMALL}) = {math.isqrt(LARGE // SMALL)} times wider than with "
        f"{SMALL}, and softmax saturates. Dividing by √d_k undoes it: scaled, the largest "
        f"weights are {scaled[0]:.2f} (A) and {scaled[1]:.2f} (B). The chart shows both rows "
        "unscaled."
    )


def _reveal_sharper(variant: Variant, answer) -> Reveal:
    rows = _sharp_rows(variant)
    best = _sharper(variant)
    guessed = ()
    if answer in SHARP_OPTIONS:
        row = SHARP_OPTIONS.index(answer)
        guessed = ((row, int(np.argmax(rows[row]))),)
    return Reveal(
        "Weights without scaling",
        rows,
        ("query A", "query B"),
        labels("key", SHARP_KEYS),
        guessed=guessed,
        right=((best, int(np.argmax(rows[best]))),),
    )


SHARPER = Exercise(
    "3c",
    "predict",
    "Few features or many?",
    _make_sharper,
    _check_sharper,
    lambda variant: SHARP_OPTIONS[_sharper(variant)],
    _explain_sharper,
    _reveal_sharper,
    wrong=lambda variant: SHARP_OPTIONS[1 - _sharper(variant)],
)

EXERCISES = (CELL, UNSCALED, SHARPER)
