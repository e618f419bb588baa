"""Lesson 2's exercises: softmax turns a row of scores into weights that add up to 1."""

from __future__ import annotations

import numpy as np

from attnviz.lessons.exercises.base import (
    EditMatrices,
    Estimate,
    Exercise,
    Reveal,
    Variant,
    Verdict,
    labels,
    matrix_text,
    number_text,
    read_fraction,
    read_matrix,
    rng,
)
from attnviz.lessons.exercises.maths import attend, solve_scores

TOKENS = 3
FEATURES = 3
ESTIMATE_TOLERANCE = 0.1  # a guessed weight this close counts
SURE = 0.9  # 2b: the weight query 0 must put on its key
HALF_TOLERANCE = 0.02  # 2c: each of the two weights within 0.5 ± this


def _weights(q, k, v=None) -> np.ndarray:
    """Softmax of the unscaled dot scores, by `compute_attention`: `(T, S)`."""
    result = attend(q, k, k if v is None else v, score="dot", scale=False)
    return np.asarray(result.weights, dtype=np.float64)


def _draw_keys(gen: np.random.Generator) -> np.ndarray:
    """Keys `(3, 3)` of small whole numbers whose differences are independent (so a query can
    be found for any target)."""
    while True:
        k = gen.integers(-2, 3, size=(TOKENS, FEATURES)).astype(np.float64)
        if np.linalg.matrix_rank(k[1:] - k[0]) == TOKENS - 1 and len({*map(tuple, k)}) == TOKENS:
            return k


def _row_labels(n: int = TOKENS) -> tuple[str, ...]:
    return labels("query", n)


# ---- 2a: estimate a weight -----------------------------------------------------------------


def _make_estimate(seed: int) -> Variant:
    gen = rng(seed, "2a")
    while True:
        scores = gen.integers(-2, 4, size=TOKENS).astype(np.float64)
        if 0.15 < np.exp(scores).max() / np.exp(scores).sum() < 0.95:
            break
    j = int(gen.integers(0, TOKENS))
    q = np.eye(FEATURES)[:1]  # one query, (1, 3): its scores are the keys' first features
    k = np.zeros((TOKENS, FEATURES))
    k[:, 0] = scores
    said = ", ".join(f"key {n}: {number_text(s)}" for n, s in enumerate(scores))
    return Variant(
        seed,
        f"A query's scores are {said}. Roughly what weight does softmax give **key {j}**? "
        f"(Within {ESTIMATE_TOLERANCE} counts.)",
        Estimate(f"Weight of key {j}", 0.0, 1.0, 0.01),
        {"q": q, "k": k, "key": j, "scores": scores},
    )


def _check_estimate(variant: Variant, answer) -> Verdict:
    try:
        answer = read_fraction(answer)
    except ValueError as error:
        return Verdict(False, str(error))
    j = variant.data["key"]
    right = _weights(variant.data["q"], variant.data["k"])[0, j]
    off = abs(answer - right)
    if off <= ESTIMATE_TOLERANCE:
        return Verdict(
            True, f"Close enough: the weight is **{right:.3f}** (you said {answer:.2f})."
        )
    return Verdict(
        False,
        f"The weight is **{right:.3f}**; you said {answer:.2f}, {off:.2f} "
        f"{'too high' if answer > right else 'too low'}.",
    )


def _explain_estimate(variant: Variant) -> str:
    scores, j = variant.data["scores"], variant.data["key"]
    exps = np.exp(scores)
    terms = " + ".join(f"e^{number_text(s)}" for s in scores)
    return (
        f"Softmax divides e^score by the sum over the row: e^{number_text(scores[j])} / "
        f"({terms}) = {exps[j]:.2f} / {exps.sum():.2f} = {exps[j] / exps.sum():.3f}. A score "
        "one larger makes its e^score 2.7 times larger, so the biggest score takes most."
    )


def _reveal_estimate(variant: Variant, answer) -> Reveal:
    j = variant.data["key"]
    return Reveal(
        "The query's weights",
        _weights(variant.data["q"], variant.data["k"]),
        ("the query",),
        labels("key", TOKENS),
        right=((0, j),),
    )


def _off_by(right: float) -> float:
    """A guess 0.3 away from `right`, within 0 to 1."""
    return float(right + 0.3 if right + 0.3 <= 1 else right - 0.3)


ESTIMATE = Exercise(
    "2a",
    "predict",
    "Guess a weight",
    _make_estimate,
    _check_estimate,
    lambda variant: float(_weights(variant.data["q"], variant.data["k"])[0, variant.data["key"]]),
    _explain_estimate,
    _reveal_estimate,
    wrong=lambda variant: _off_by(
        _weights(variant.data["q"], variant.data["k"])[0, variant.data["key"]]
    ),
)


# ---- 2b and 2c: make the weights -----------------------------------------------------------


def _make_edit(exercise_id: str, seed: int, prompt: str, check, **data) -> Variant:
    """A variant whose starting query does not already hold (`check` says)."""
    gen = rng(seed, exercise_id)
    while True:
        k = _draw_keys(gen)
        q = gen.integers(-1, 2, size=(1, FEATURES)).astype(np.float64)
        variant = Variant(
            seed,
            prompt,
            EditMatrices((("Q", matrix_text(q)),)),
            {"k": k, "q": q, **data},
            (("K", k, labels("key", TOKENS), labels("feature", FEATURES)),),
        )
        if not check(variant, {"Q": matrix_text(q)}).solved:
            return variant


def _read_q(answer) -> np.ndarray:
    text = answer.get("Q") if isinstance(answer, dict) else None
    return read_matrix(text, "Q", (1, FEATURES))


def _make_sure(seed: int) -> Variant:
    target = int(rng(seed, "2b-key").integers(0, TOKENS))
    return _make_edit(
        "2b",
        seed,
        f"Edit the query (one row of {FEATURES} numbers) so that it puts at least **{SURE}** of "
        f"its weight on **key {target}** (dot scores, no scaling).",
        _check_sure,
        target=target,
    )


def _check_sure(variant: Variant, answer) -> Verdict:
    try:
        q = _read_q(answer)
    except ValueError as error:
        return Verdict(False, str(error))
    target = variant.data["target"]
    weight = _weights(q, variant.data["k"])[0, target]
    if weight >= SURE:
        return Verdict(True, f"Solved: key {target} gets **{weight:.3f}**.", 1.0)
    return Verdict(
        False,
        f"Key {target} gets {weight:.3f}; it needs {SURE}. Make q · k{target} larger than the "
        "other scores by about 3 or more.",
        float(weight / SURE),
    )


def _solve_sure(variant: Variant) -> dict[str, str]:
    target, k = variant.data["target"], variant.data["k"]
    gap = float(np.log(SURE / (1 - SURE) * (TOKENS - 1))) + 1.0
    gaps = {(target, other): gap for other in range(TOKENS) if other != target}
    return {"Q": matrix_text(np.round(solve_scores(k, gaps), 3)[None, :])}


def _explain_sure(variant: Variant) -> str:
    target = variant.data["target"]
    return (
        f"Softmax gives key {target} 0.9 when e^score of key {target} is nine times the others' "
        f"together: its score must lead each other score by about ln(18) ≈ 2.9. A query that "
        f"points along key {target}, away from the others, does it; so does making it longer."
    )


def _reveal_edit(variant: Variant, answer) -> Reveal | None:
    try:
        q = _read_q(answer)
    except ValueError:
        return None
    targets = variant.data.get("pair") or (variant.data["target"],)
    return Reveal(
        "Your query's weights",
        _weights(q, variant.data["k"]),
        ("your query",),
        labels("key", TOKENS),
        right=tuple((0, t) for t in targets),
    )


SURE_OF_ONE = Exercise(
    "2b",
    "make",
    "Put 0.9 on one key",
    _make_sure,
    _check_sure,
    _solve_sure,
    _explain_sure,
    _reveal_edit,
    wrong=lambda variant: {"Q": "0 0 0"},
)


def _make_halves(seed: int) -> Variant:
    a, b = sorted(int(x) for x in rng(seed, "2c-keys").choice(TOKENS, size=2, replace=False))
    return _make_edit(
        "2c",
        seed,
        f"Edit the query so that **key {a} and key {b} get 0.5 each** (within {HALF_TOLERANCE}), "
        "and the other key almost nothing.",
        _check_halves,
        pair=(a, b),
    )


def _check_halves(variant: Variant, answer) -> Verdict:
    try:
        q = _read_q(answer)
    except ValueError as error:
        return Verdict(False, str(error))
    a, b = variant.data["pair"]
    w = _weights(q, variant.data["k"])[0]
    off = max(abs(w[a] - 0.5), abs(w[b] - 0.5))
    if off <= HALF_TOLERANCE:
        return Verdict(True, f"Solved: key {a} gets {w[a]:.3f} and key {b} {w[b]:.3f}.", 1.0)
    return Verdict(
        False,
        f"Key {a} gets {w[a]:.3f} and key {b} {w[b]:.3f}. Two keys share evenly when their "
        "scores are equal; the third must score far below both.",
        float(max(0.0, 1.0 - off / 0.5)),
    )


def _solve_halves(variant: Variant) -> dict[str, str]:
    a, b = variant.data["pair"]
    (c,) = set(range(TOKENS)) - {a, b}
    q = solve_scores(variant.data["k"], {(a, b): 0.0, (a, c): 6.0})
    return {"Q": matrix_text(np.round(q, 3)[None, :])}


def _explain_halves(variant: Variant) -> str:
    a, b = variant.data["pair"]
    return (
        f"Softmax splits weight evenly between keys whose scores are equal: q · k{a} = q · k{b}. "
        "If the third key's score is several units lower, its e^score is tiny, and the two "
        "keys share the rest: 0.5 each. The output is then the average of their values."
    )


HALVES = Exercise(
    "2c",
    "make",
    "Share evenly between two keys",
    _make_halves,
    _check_halves,
    _solve_halves,
    _explain_halves,
    _reveal_edit,
    wrong=lambda variant: {"Q": "1 0 0 0"},
)

EXERCISES = (ESTIMATE, SURE_OF_ONE, HALVES)
