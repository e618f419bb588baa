"""Lesson 11's exercises: RoPE rotates each query and key by its position, so a score sees how
far apart two tokens are. Checked with attnviz's own rotation (`core.positions.apply_rope`) and
`compute_attention` with `position="rope"`."""

from __future__ import annotations

import numpy as np

from attnviz.lessons.exercises.base import (
    Control,
    Exercise,
    PickOne,
    Reveal,
    SetControls,
    TypeNumber,
    Variant,
    Verdict,
    labels,
    number_text,
    rng,
    typed_verdict,
)
from attnviz.lessons.exercises.maths import attend

FEATURES = 4  # two pairs: feature 0 with 2, feature 1 with 3 ("rotate half")
THETAS = (4.0, 16.0, 100.0, 10_000.0)  # RoPE bases θ to draw from
TOLERANCE = 0.01  # 11a: a typed feature this close counts
TOKENS = 6  # 11b: queries and keys
SAME = 1e-3  # 11b: two scores this close (relative to the largest) are equal


def _rotate(q: np.ndarray, position: int, theta: float) -> np.ndarray:
    """`(4,)` q rotated by RoPE at `position`, by `core.positions.apply_rope`."""
    from attnviz.core.positions import apply_rope

    return apply_rope(q[None, :], [position], theta)[0]


# ---- 11a: rotate one feature by hand -------------------------------------------------------


def _make_rotate(seed: int) -> Variant:
    gen = rng(seed, "11a")
    q = gen.integers(-3, 4, size=FEATURES).astype(np.float64)
    while not np.all(q[:2] ** 2 + q[2:] ** 2 > 0):  # both pairs turn visibly
        q = gen.integers(-3, 4, size=FEATURES).astype(np.float64)
    theta = float(gen.choice(THETAS))
    position = int(gen.integers(1, 4))
    feature = int(gen.integers(0, FEATURES))
    return Variant(
        seed,
        f"RoPE rotates the query q = ({', '.join(number_text(x) for x in q)}) at **position "
        f"{position}**. Feature 0 is paired with feature 2 and feature 1 with feature 3 (the "
        "“rotate half” layout of Llama); pair p turns by the angle position · ω_p (in "
        f"radians), with ω_p = θ^(−2p/4) and **θ = {number_text(theta)}**. A pair (x, y) becomes "
        "(x·cos(angle) − y·sin(angle), y·cos(angle) + x·sin(angle)). What is **feature "
        f"{feature}** after the rotation? (Within {TOLERANCE}.)",
        TypeNumber(f"Feature {feature} after RoPE", tolerance=TOLERANCE),
        {"q": q, "theta": theta, "position": position, "feature": feature},
        (("q", q[None, :], ("the query",), labels("feature", FEATURES)),),
    )


def _right(variant: Variant) -> float:
    data = variant.data
    return float(_rotate(data["q"], data["position"], data["theta"])[data["feature"]])


def _pair(variant: Variant) -> tuple[float, float, float, bool]:
    """(x, y, angle, second) of the asked feature's pair: `second` when it is the pair's y."""
    data = variant.data
    f, half = data["feature"], FEATURES // 2
    p = f % half
    angle = data["position"] * data["theta"] ** (-2 * p / FEATURES)
    return float(data["q"][p]), float(data["q"][p + half]), float(angle), f >= half


def _mistakes(variant: Variant) -> dict[str, float]:
    """What each usual mistake gives, computed."""
    data = variant.data
    x, y, angle, second = _pair(variant)
    f, q, m = data["feature"], data["q"], data["position"]
    neighbour = q[f + 1] if f % 2 == 0 else q[f - 1]  # the paper's layout: f with f ± 1
    p = f // 2  # that layout's pair, with its own frequency
    angle_n = m * data["theta"] ** (-2 * p / FEATURES)
    if f % 2 == 0:
        interleaved = q[f] * np.cos(angle_n) - neighbour * np.sin(angle_n)
    else:
        interleaved = q[f] * np.cos(angle_n) + neighbour * np.sin(angle_n)
    if second:
        flipped = y * np.cos(angle) - x * np.sin(angle)
        degrees = y * np.cos(np.radians(angle)) + x * np.sin(np.radians(angle))
        one = y * np.cos(m) + x * np.sin(m)
    else:
        flipped = x * np.cos(angle) + y * np.sin(angle)
        degrees = x * np.cos(np.radians(angle)) - y * np.sin(np.radians(angle))
        one = x * np.cos(m) - y * np.sin(m)
    return {
        "You did not rotate: that is the feature before RoPE.": float(q[f]),
        "The sign of the sine is the other way round: (x cos − y sin, y cos + x sin).": flipped,
        "Your calculator is in degrees: the angle is in radians.": float(degrees),
        f"Feature {f} is paired with feature {(f + 2) % 4} here, not its neighbour (the "
        "“rotate half” layout).": float(interleaved),
        f"Pair {f % 2} turns by position · θ^(−2·{f % 2}/4), not by the position alone.": one,
    }


def _check_rotate(variant: Variant, answer) -> Verdict:
    right = _right(variant)
    return typed_verdict(
        answer, right, TOLERANCE,
        lambda: f"Right: **{right:.3f}**. {_worked(variant)}",
        lambda typed: _rotate_mistake(variant, typed, right),
    )  # fmt: skip


def _rotate_mistake(variant: Variant, typed: float, right: float) -> str:
    """The usual mistake `typed` matches (one that differs from the right value), or how."""
    for why, value in _mistakes(variant).items():
        if abs(value - right) > TOLERANCE and abs(typed - value) <= TOLERANCE:
            return why
    return f"Not quite. {_worked(variant)}"


def _worked(variant: Variant) -> str:
    x, y, angle, second = _pair(variant)
    c, s = np.cos(angle), np.sin(angle)
    if second:
        sum_ = f"{_factor(y)}·{_factor(c)} + {_factor(x)}·{_factor(s)}"
    else:
        sum_ = f"{_factor(x)}·{_factor(c)} − {_factor(y)}·{_factor(s)}"
    return (
        f"The pair is (x, y) = ({number_text(x)}, {number_text(y)}), the angle "
        f"{angle:.3f} rad (cos {c:.3f}, sin {s:.3f}): {sum_} = {_right(variant):.3f}."
    )


def _factor(x: float) -> str:
    """`x` to 3 decimals, in brackets when negative: "0.54", "(-2)"."""
    text = number_text(x)
    return f"({text})" if text.startswith("-") else text


def _explain_rotate(variant: Variant) -> str:
    return (
        f"{_worked(variant)} The chart shows the same query rotated at every position up to "
        f"{variant.data['position']}: each pair turns a little more at each step, the first "
        "pair fastest, and its length never changes."
    )


def _reveal_rotate(variant: Variant, answer) -> Reveal:
    data = variant.data
    rotated = np.stack([_rotate(data["q"], m, data["theta"]) for m in range(data["position"] + 1)])
    return Reveal(
        "The query rotated at positions 0, 1, …",
        rotated,
        labels("position", data["position"] + 1),
        labels("feature", FEATURES),
        kind="scores",
        right=((data["position"], data["feature"]),),
    )


def _wrong_rotate(variant: Variant) -> str:
    right = _right(variant)
    for value in _mistakes(variant).values():
        if abs(value - right) > TOLERANCE:
            return number_text(value)
    return number_text(right + 1)


ROTATE = Exercise(
    "11a",
    "compute",
    "Rotate one feature",
    _make_rotate,
    _check_rotate,
    lambda variant: number_text(_right(variant)),
    _explain_rotate,
    _reveal_rotate,
    wrong=_wrong_rotate,
)


# ---- 11b: does the score move with the pair? -----------------------------------------------

CASES = {  # what the variant compares
    "both": "every token is the same vector; both positions move by the same step",
    "one": "every token is the same vector; the key moves one step further than the query",
    "differ": "the tokens are different vectors; both positions move by the same step",
}
OPTIONS = ("the same score", "a different score")


def _make_shift(seed: int) -> Variant:
    gen = rng(seed, "11b")
    case = tuple(CASES)[int(gen.integers(0, len(CASES)))]
    while True:
        theta = float(gen.choice(THETAS[1:]))
        v = gen.integers(-2, 3, size=(1, FEATURES)).astype(np.float64)
        if not np.any(v):
            continue
        x = gen.integers(-2, 3, size=(TOKENS, FEATURES)).astype(np.float64)
        x = np.repeat(v, TOKENS, axis=0) if case != "differ" else x
        i, j = (int(a) for a in gen.integers(0, TOKENS - 3, size=2))
        step = int(gen.integers(1, 3))
        cells = ((i, j), (i + step, j + step + (case == "one")))
        variant = Variant(seed, "", PickOne("", OPTIONS), {"x": x, "theta": theta,
                          "cells": cells, "case": case})  # fmt: skip
        a, b = (_scores(variant)[c] for c in cells)
        if case == "both" or abs(a - b) > 0.05:
            break
    (i, j), (k, m) = cells
    shown = (("The tokens", x, labels("token", TOKENS), labels("feature", FEATURES)),)
    return Variant(
        seed,
        f"Queries and keys are the tokens below, rotated by RoPE (θ = {number_text(theta)}); "
        f"{CASES[case]}. Is the score of **query {k} for key {m}** the same as that of **query "
        f"{i} for key {j}**?",
        PickOne(f"Query {k} · key {m}, compared with query {i} · key {j}", OPTIONS),
        {"x": x, "theta": theta, "cells": cells, "case": case},
        shown,
    )


def _scores(variant: Variant) -> np.ndarray:
    """`(T, T)` the unscaled dot scores after RoPE, by `compute_attention`."""
    x, theta = variant.data["x"], variant.data["theta"]
    result = attend(x, x, x, score="dot", scale=False, position="rope", rope_theta=theta)
    return np.asarray(result.scores, dtype=np.float64)


def _same(variant: Variant) -> bool:
    scores = _scores(variant)
    a, b = (scores[c] for c in variant.data["cells"])
    return abs(a - b) <= SAME * (1 + np.max(np.abs(scores)))


def _check_shift(variant: Variant, answer) -> Verdict:
    if not isinstance(answer, str) or answer not in OPTIONS:
        return Verdict(False, f"Pick one of: {', '.join(OPTIONS)}.")
    said = _scores_said(variant)
    if (answer == OPTIONS[0]) == _same(variant):
        return Verdict(True, f"Right: {said}")
    return Verdict(False, f"Not this time: {said} {_why(variant)}")


def _scores_said(variant: Variant) -> str:
    scores = _scores(variant)
    (i, j), (k, m) = variant.data["cells"]
    return (
        f"query {i} · key {j} scores {scores[i, j]:.3f} and query {k} · key {m} {scores[k, m]:.3f}."
    )


def _why(variant: Variant) -> str:
    case = variant.data["case"]
    if case == "both":
        return (
            "With the same vector at every position, a RoPE score depends only on i − j, and "
            "moving both by the same step keeps i − j."
        )
    if case == "one":
        return "Moving the key one step further changes i − j, so the angle between them turns."
    return (
        "RoPE makes the *angle* depend on i − j only, but different tokens are different "
        "vectors, so the two scores compare different vectors."
    )


def _explain_shift(variant: Variant) -> str:
    return (
        f"{_why(variant)} In the chart, with one vector everywhere, each diagonal (constant "
        "i − j) holds one value; the two outlined cells are the ones compared."
    )


def _reveal_shift(variant: Variant, answer) -> Reveal:
    return Reveal(
        "Scores after RoPE (q · k)",
        _scores(variant),
        labels("query", TOKENS),
        labels("key", TOKENS),
        kind="scores",
        right=tuple(variant.data["cells"]),
    )


SHIFT = Exercise(
    "11b",
    "predict",
    "Same distance, same score?",
    _make_shift,
    _check_shift,
    lambda variant: OPTIONS[0] if _same(variant) else OPTIONS[1],
    _explain_shift,
    _reveal_shift,
    wrong=lambda variant: OPTIONS[1] if _same(variant) else OPTIONS[0],
)


# ---- 11c: choose θ so that a far key scores like a near one --------------------------------

LENGTH = 12  # 11c: tokens; the last query looks back over 11 earlier keys
THETA_CHOICES = (1, 2, 3, 10, 100, 10_000)  # the θ a learner may choose
DISTANCES = (1, 6, 9, 11)  # 11c: the distances asked for (each reached by some θ above)


def _make_wrap(seed: int) -> Variant:
    gen = rng(seed, "11c")
    a, b = (int(x) for x in gen.choice([-2, -1, 1, 2], size=2))
    v = np.array([[0.0, a, 0.0, b]])  # (1, 4): only the slow pair (features 1 and 3) turns
    distance = int(gen.choice(DISTANCES))
    last = LENGTH - 1
    return Variant(
        seed,
        f"All {LENGTH} tokens are the same vector ({', '.join(number_text(x) for x in v[0])}), "
        "rotated by RoPE: its first pair is zero, so only the second pair turns, by θ^(−1/2) "
        f"radians per step. Choose θ so that, among the keys before **query {last}**, the one "
        f"that scores highest is **{distance} back** (key {last - distance}).",
        SetControls((Control("theta", "RoPE's θ", THETA_CHOICES, default=_unsolved(distance)),)),
        {"v": v, "distance": distance},
    )


def _unsolved(distance: int) -> int:
    """A θ that does not bring the key `distance` back to the top (where the control starts):
    Llama's slow 10,000 for a far key, 1 (a turn in about 6 steps) for the nearest."""
    return 10_000 if distance > 1 else 1


def _wrap_scores(variant: Variant, theta: float) -> np.ndarray:
    """`(T,)` the last query's unscaled scores for every key, by `compute_attention`."""
    x = np.repeat(variant.data["v"], LENGTH, axis=0)  # (T, 4)
    result = attend(x, x, x, score="dot", scale=False, position="rope", rope_theta=theta)
    return np.asarray(result.scores, dtype=np.float64)[-1]


def _best_back(variant: Variant, theta: float) -> int:
    """How many tokens back the highest-scoring earlier key is."""
    earlier = _wrap_scores(variant, theta)[:-1]  # keys 0 … T − 2
    return LENGTH - 1 - int(np.argmax(earlier))


def _read_theta(answer) -> float | None:
    theta = answer.get("theta") if isinstance(answer, dict) else None
    if isinstance(theta, bool) or not isinstance(theta, int | float) or theta not in THETA_CHOICES:
        return None
    return float(theta)


def _check_wrap(variant: Variant, answer) -> Verdict:
    theta = _read_theta(answer)
    if theta is None:
        choices = ", ".join(number_text(t) for t in THETA_CHOICES)
        return Verdict(False, f"Choose θ among {choices}.")
    got, wanted = _best_back(variant, theta), variant.data["distance"]
    if got == wanted:
        return Verdict(True, f"Solved: with θ = {number_text(theta)} the key {got} back "
                       "scores highest.", 1.0)  # fmt: skip
    step = theta**-0.5
    return Verdict(
        False,
        f"With θ = {number_text(theta)} the pair turns {step:.2f} rad per step, and the key "
        f"**{got} back** scores highest, not {wanted} back. "
        + (
            "A far key scores high when its angle has come round a full turn (2π ≈ 6.28 rad)."
            if wanted > 1
            else "For the nearest key to win, the turn per step must stay small."
        ),
        float(max(0.0, 1 - abs(got - wanted) / (LENGTH - 1))),
    )


def _solve_wrap(variant: Variant) -> dict[str, int]:
    for theta in THETA_CHOICES:
        if _best_back(variant, theta) == variant.data["distance"]:
            return {"theta": theta}
    raise AssertionError("no θ reaches the distance")  # DISTANCES are chosen so that one does


def _explain_wrap(variant: Variant) -> str:
    theta = _solve_wrap(variant)["theta"]
    step, wanted = theta**-0.5, variant.data["distance"]
    return (
        f"The score of a key d back is |v|² cos(d · θ^(−1/2)): largest when d · θ^(−1/2) is "
        f"near 0 or a full turn, 2π. With θ = {number_text(theta)} the pair turns {step:.2f} "
        f"rad per step, so {wanted} back comes to {wanted * step:.2f} rad. A large θ (10,000, "
        "as in Llama) turns so slowly that the nearest keys always score highest."
    )


def _reveal_wrap(variant: Variant, answer) -> Reveal | None:
    theta = _read_theta(answer)
    if theta is None:
        return None
    scores = _wrap_scores(variant, theta)
    last = LENGTH - 1
    return Reveal(
        f"Query {last}'s scores with θ = {number_text(theta)}: the best earlier key and the asked",
        scores[None, :],
        (f"query {last}",),
        labels("key", LENGTH),
        kind="scores",
        guessed=((0, last - _best_back(variant, theta)),),
        right=((0, last - variant.data["distance"]),),
    )


def _wrong_wrap(variant: Variant) -> dict[str, int]:
    return {"theta": _unsolved(variant.data["distance"])}


WRAP = Exercise(
    "11c",
    "make",
    "Make a far key score like a near one",
    _make_wrap,
    _check_wrap,
    _solve_wrap,
    _explain_wrap,
    _reveal_wrap,
    wrong=_wrong_wrap,
)

EXERCISES = (ROTATE, SHIFT, WRAP)
