"""Lesson 5's exercises: the general score q W kᵀ puts a learned matrix between query and key,
and W changes what counts as a match.

Shape letters: T queries, S keys, D features (Dq = Dk = 2 here, so dot and general compare).
Scores come from `compute_attention` with `score="general"` and `params={"W": W}`, unscaled.
"""

from __future__ import annotations

import numpy as np

from attnviz.lessons.exercises.base import (
    EditMatrices,
    Exercise,
    PickOne,
    Reveal,
    TypeNumber,
    Variant,
    Verdict,
    labels,
    matrix_text,
    number_text,
    read_matrix,
    rng,
    typed_verdict,
)
from attnviz.lessons.exercises.maths import attend, solve_scores

FEATURES = 2
KEYS = 3
TOLERANCE = 0.01  # 5a: a typed score this close counts
LEAD = 1.0  # 5c: the target key's score must beat every other by at least this


def general_scores(q: np.ndarray, k: np.ndarray, w: np.ndarray) -> np.ndarray:
    """q W kᵀ `(T, S)`, unscaled, by `compute_attention`."""
    result = attend(q, k, k, score="general", scale=False, params={"W": w})
    return np.asarray(result.scores, dtype=np.float64)


def dot_scores(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """q · k `(T, S)`, unscaled, by `compute_attention`."""
    return np.asarray(attend(q, k, k, score="dot", scale=False).scores, dtype=np.float64)


def _ints(gen: np.random.Generator, low: int, high: int, shape: tuple[int, ...]) -> np.ndarray:
    return gen.integers(low, high + 1, size=shape).astype(np.float64)


def _shown(q: np.ndarray, k: np.ndarray, w: np.ndarray | None = None) -> tuple:
    features = labels("feature", FEATURES)
    shown = (
        ("Q", q, labels("query", len(q)), features),
        ("K", k, labels("key", KEYS), features),
    )
    return shown if w is None else (*shown, ("W", w, features, features))


def _said(row: np.ndarray) -> str:
    return ", ".join(f"key {j}: {number_text(s)}" for j, s in enumerate(row))


def _clear_winner(row: np.ndarray) -> bool:
    top = np.sort(row)
    return top[-1] - top[-2] >= 1


# ---- 5a: compute one general score ---------------------------------------------------------


def _make_general(seed: int) -> Variant:
    gen = rng(seed, "5a")
    while True:
        q, k, w = (
            _ints(gen, -2, 2, (2, FEATURES)),
            _ints(gen, -2, 2, (KEYS, FEATURES)),
            _ints(gen, -1, 2, (FEATURES, FEATURES)),
        )
        i, j = int(gen.integers(0, 2)), int(gen.integers(0, KEYS))
        right, dot, flipped = q[i] @ w @ k[j], q[i] @ k[j], q[i] @ w.T @ k[j]
        if min(abs(right - dot), abs(right - flipped), abs(right)) >= 1:
            break
    return Variant(
        seed,
        f"Work out the **general** score of **query {i}** for **key {j}**: q{i} W k{j}ᵀ (no "
        f"scaling). First q{i} W, a row of {FEATURES} numbers, then its dot product with k{j}.",
        TypeNumber(f"General score of query {i} for key {j}", tolerance=TOLERANCE),
        {"q": q, "k": k, "w": w, "cell": (i, j)},
        _shown(q, k, w),
    )


def _general(variant: Variant) -> np.ndarray:
    data = variant.data
    return general_scores(data["q"], data["k"], data["w"])


def _through_w(variant: Variant) -> np.ndarray:
    """q_i W `(D,)`, the query row mapped by W."""
    i, _ = variant.data["cell"]
    return variant.data["q"][i] @ variant.data["w"]  # (D,) x (D, D) -> (D,)


def _check_general(variant: Variant, answer) -> Verdict:
    i, j = variant.data["cell"]
    right = _general(variant)[i, j]
    return typed_verdict(
        answer, right, TOLERANCE,
        lambda: f"Right: q{i} W = ({', '.join(number_text(x) for x in _through_w(variant))}), "
        f"and its dot product with k{j} is **{number_text(right)}**.",
        lambda typed: _general_mistake(variant, typed),
    )  # fmt: skip


def _general_mistake(variant: Variant, typed: float) -> str:
    """The step that went wrong, found by computing what each usual mistake gives."""
    q, k, w = variant.data["q"], variant.data["k"], variant.data["w"]
    i, j = variant.data["cell"]
    mapped = ", ".join(number_text(x) for x in _through_w(variant))
    if abs(typed - dot_scores(q, k)[i, j]) <= TOLERANCE:
        return f"That is the plain dot product q{i} · k{j}: you left W out. Start with q{i} W."
    if abs(typed - general_scores(q, k, w.T)[i, j]) <= TOLERANCE:
        return (
            f"You multiplied by W's rows instead of its columns (that is q{i} Wᵀ k{j}ᵀ). Entry "
            f"c of q{i} W is q{i} times column c of W: q{i} W = ({mapped})."
        )
    if abs(typed - _general(variant)[i, j] / np.sqrt(FEATURES)) <= TOLERANCE:
        return "That is the score divided by √d_k: here the score is not scaled."
    scores = _general(variant)
    for a, b in np.ndindex(scores.shape):
        if (a, b) != (i, j) and abs(typed - scores[a, b]) <= TOLERANCE:
            return f"That is query {a}'s general score for key {b}. Take row {i} of Q, key {j}."
    return f"Not quite. q{i} W = ({mapped}); now take its dot product with k{j}."


def _explain_general(variant: Variant) -> str:
    i, j = variant.data["cell"]
    mapped = ", ".join(number_text(x) for x in _through_w(variant))
    return (
        f"W first maps query {i} to q{i} W = ({mapped}); the score is that row's dot product "
        f"with key {j}: {number_text(_general(variant)[i, j])}. With W the identity it would be "
        "the plain dot product. The chart shows every general score; this one is outlined."
    )


def _reveal_general(variant: Variant, answer) -> Reveal:
    return Reveal(
        "General scores q W kᵀ",
        _general(variant),
        labels("query", 2),
        labels("key", KEYS),
        kind="scores",
        right=(variant.data["cell"],),
    )


GENERAL_SCORE = Exercise(
    "5a",
    "compute",
    "One general score by hand",
    _make_general,
    _check_general,
    lambda variant: number_text(_general(variant)[variant.data["cell"]]),
    _explain_general,
    _reveal_general,
    wrong=lambda variant: number_text(
        dot_scores(variant.data["q"], variant.data["k"])[variant.data["cell"]]
    ),
)


# ---- 5b: does the winner change? -----------------------------------------------------------


def _make_winner(seed: int) -> Variant:
    gen = rng(seed, "5b")
    change = bool(gen.integers(0, 2))  # about half the variants change the winner
    while True:
        q, k, w = (
            _ints(gen, -2, 2, (1, FEATURES)),
            _ints(gen, -2, 2, (KEYS, FEATURES)),
            _ints(gen, -1, 2, (FEATURES, FEATURES)),
        )
        dot, general = (q @ k.T)[0], (q @ w @ k.T)[0]
        changed = np.argmax(dot) != np.argmax(general)
        if _clear_winner(dot) and _clear_winner(general) and changed == change:
            break
    best = int(np.argmax(dot))
    return Variant(
        seed,
        f"With the dot product, the query scores **key {best}** highest. Score it with the "
        "**general** score q W kᵀ and this W instead: which key wins now?",
        PickOne("The general score's winner", labels("key", KEYS)),
        {"q": q, "k": k, "w": w},
        _shown(q, k, w),
    )


def _winner_rows(variant: Variant) -> np.ndarray:
    """The query's dot and general scores `(2, S)`."""
    q, k, w = variant.data["q"], variant.data["k"], variant.data["w"]
    return np.concatenate([dot_scores(q, k), general_scores(q, k, w)])


def _winner(variant: Variant) -> int:
    return int(np.argmax(_winner_rows(variant)[1]))


def _check_winner(variant: Variant, answer) -> Verdict:
    options = labels("key", KEYS)
    if answer not in options:
        return Verdict(False, f"Pick one of {', '.join(options)}.")
    dot, general = _winner_rows(variant)
    best, picked = _winner(variant), options.index(answer)
    said = f"the general scores are {_said(general)}."
    if picked == best:
        return Verdict(True, f"Right: key {best} wins; {said}")
    if picked == int(np.argmax(dot)):
        return Verdict(
            False,
            f"Key {picked} wins the dot product, but W changes what counts as a match: "
            f"{said} Key {best} wins.",
        )
    return Verdict(False, f"Not this time: {said} Key {best} wins.")


def _explain_winner(variant: Variant) -> str:
    q, w = variant.data["q"], variant.data["w"]
    mapped = ", ".join(number_text(x) for x in (q @ w)[0])
    return (
        f"The general score is the dot product of q W = ({mapped}) with each key: W turns the "
        "query before it is compared, so a different key can line up best. The chart's first "
        "row holds the dot scores, the second the general scores."
    )


def _reveal_winner(variant: Variant, answer) -> Reveal:
    options = labels("key", KEYS)
    guessed = ((1, options.index(answer)),) if answer in options else ()
    return Reveal(
        "Dot and general scores: your guess and the winner",
        _winner_rows(variant),
        ("dot q · k", "general q W kᵀ"),
        options,
        kind="scores",
        guessed=guessed,
        right=((1, _winner(variant)),),
    )


def _wrong_winner(variant: Variant) -> str:
    dot_best, best = int(np.argmax(_winner_rows(variant)[0])), _winner(variant)
    return f"key {dot_best if dot_best != best else (best + 1) % KEYS}"


WINNER = Exercise(
    "5b",
    "predict",
    "Does W change the winner?",
    _make_winner,
    _check_winner,
    lambda variant: f"key {_winner(variant)}",
    _explain_winner,
    _reveal_winner,
    wrong=_wrong_winner,
)


# ---- 5c: make a key win with W -------------------------------------------------------------


def _make_steer(seed: int) -> Variant:
    gen = rng(seed, "5c")
    while True:
        q, k = _ints(gen, -2, 2, (1, FEATURES)), _ints(gen, -2, 2, (KEYS, FEATURES))
        dot = (q @ k.T)[0]
        losers = [j for j in range(KEYS) if j != int(np.argmax(dot))]
        independent = np.linalg.matrix_rank(k[1:] - k[0]) == KEYS - 1
        if q.any() and independent and _clear_winner(dot):
            break
    target = losers[int(gen.integers(0, len(losers)))]
    return Variant(
        seed,
        f"With W the identity the general score is the dot product, and key "
        f"{int(np.argmax(dot))} wins. Edit W ({FEATURES} rows of {FEATURES} numbers) so that "
        f"**key {target}** wins instead: its score at least {number_text(LEAD)} above every "
        "other key's.",
        EditMatrices((("W", matrix_text(np.eye(FEATURES))),)),
        {"q": q, "k": k, "target": target},
        _shown(q, k),
    )


def _check_steer(variant: Variant, answer) -> Verdict:
    text = answer.get("W") if isinstance(answer, dict) else None
    try:
        w = read_matrix(text, "W", (FEATURES, FEATURES))
        scores = general_scores(variant.data["q"], variant.data["k"], w)[0]
    except ValueError as error:
        return Verdict(False, str(error), 0.0)
    target = variant.data["target"]
    lead = min(scores[target] - s for j, s in enumerate(scores) if j != target)
    close = float(np.clip(0.5 + lead / (2 * LEAD), 0.0, 1.0))
    if lead >= LEAD:
        return Verdict(True, f"Solved: the scores are {_said(scores)}.", 1.0)
    return Verdict(
        False,
        f"The scores are {_said(scores)}: key {target} leads by {number_text(lead)}, and it "
        f"needs {number_text(LEAD)}. Choose W so that q W points along key {target} and away "
        "from the others.",
        close,
    )


def _solve_steer(variant: Variant) -> dict[str, str]:
    q, k, target = variant.data["q"][0], variant.data["k"], variant.data["target"]
    gaps = {(target, j): 2 * LEAD for j in range(KEYS) if j != target}
    mapped = solve_scores(k, gaps)  # (D,) the row q W must be
    w = np.outer(q, mapped) / (q @ q)  # (D, D): q W = mapped
    return {"W": matrix_text(np.round(w, 3))}


def _explain_steer(variant: Variant) -> str:
    target = variant.data["target"]
    return (
        f"The general score compares q W with each key, so W decides which direction the "
        f"query points in. Any W that sends q to a row close to key {target}, and far from the "
        "others, makes it win: the same query and keys, a different match."
    )


def _reveal_steer(variant: Variant, answer) -> Reveal | None:
    text = answer.get("W") if isinstance(answer, dict) else None
    try:
        w = read_matrix(text, "W", (FEATURES, FEATURES))
        scores = general_scores(variant.data["q"], variant.data["k"], w)
    except ValueError:
        return None
    return Reveal(
        "Your general scores",
        scores,
        ("the query",),
        labels("key", KEYS),
        kind="scores",
        right=((0, variant.data["target"]),),
    )


STEER = Exercise(
    "5c",
    "make",
    "Make W pick another key",
    _make_steer,
    _check_steer,
    _solve_steer,
    _explain_steer,
    _reveal_steer,
    wrong=lambda variant: {"W": matrix_text(np.eye(FEATURES))},
)

EXERCISES = (GENERAL_SCORE, WINNER, STEER)
