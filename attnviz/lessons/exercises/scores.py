"""Lesson 1's exercises: a query scores each key with a dot product."""

from __future__ import annotations

import numpy as np

from attnviz.lessons.exercises.base import (
    Exercise,
    PickOne,
    Reveal,
    TypeNumber,
    Variant,
    Verdict,
    labels,
    number_text,
    rng,
    typed_verdict,
)
from attnviz.lessons.exercises.maths import attend

TOKENS = 3  # queries and keys
FEATURES = 3


def _draw(exercise_id: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Small whole numbers for Q and K `(3, 3)` whose rows of scores have one largest key."""
    gen = rng(seed, exercise_id)
    while True:
        q = gen.integers(-3, 4, size=(TOKENS, FEATURES)).astype(np.float64)
        k = gen.integers(-3, 4, size=(TOKENS, FEATURES)).astype(np.float64)
        scores = q @ k.T
        tops = np.sort(scores, axis=1)
        if np.all(tops[:, -1] - tops[:, -2] >= 1) and len(np.unique(scores)) >= 6:
            return q, k


def _scores(variant: Variant) -> np.ndarray:
    """The dot scores `(T, S)`, unscaled, by `compute_attention`."""
    q, k = variant.data["q"], variant.data["k"]
    return np.asarray(attend(q, k, k, score="dot", scale=False).scores, dtype=np.float64)


def _shown(q: np.ndarray, k: np.ndarray) -> tuple:
    return (
        ("Q", q, labels("query", TOKENS), labels("feature", FEATURES)),
        ("K", k, labels("key", TOKENS), labels("feature", FEATURES)),
    )


def _products(variant: Variant, i: int, j: int) -> str:
    q, k = variant.data["q"][i], variant.data["k"][j]
    return " + ".join(f"{number_text(a)}·{number_text(b)}" for a, b in zip(q, k, strict=True))


# ---- 1a: compute one score -----------------------------------------------------------------


def _make_score(seed: int) -> Variant:
    q, k = _draw("1a", seed)
    gen = rng(seed, "1a-cell")
    i, j = (int(x) for x in gen.integers(0, TOKENS, size=2))
    return Variant(
        seed,
        f"Work out the score of **query {i}** for **key {j}**: the dot product q{i} · k{j} "
        "(no scaling).",
        TypeNumber(f"Score of query {i} for key {j}", tolerance=0.01),
        {"q": q, "k": k, "cell": (i, j)},
        _shown(q, k),
    )


def _check_score(variant: Variant, answer) -> Verdict:
    i, j = variant.data["cell"]
    right = _scores(variant)[i, j]
    return typed_verdict(
        answer, right, 0.01,
        lambda: f"Right: q{i} · k{j} = {_products(variant, i, j)} = **{number_text(right)}**.",
        lambda typed: _score_mistake(variant, typed),
    )  # fmt: skip


def _score_mistake(variant: Variant, typed: float) -> str:
    """The step that went wrong, found by computing what each usual mistake gives."""
    q, k = variant.data["q"], variant.data["k"]
    i, j = variant.data["cell"]
    scores = _scores(variant)
    if abs(typed - float(np.sum(q[i] + k[j]))) <= 0.01:
        return "You added the features. Multiply them pairwise first, then add the products."
    if abs(typed - scores[i, j] / np.sqrt(FEATURES)) <= 0.01:
        return "That is the score divided by √d_k: here the score is not scaled."
    for a in range(TOKENS):
        for b in range(TOKENS):
            if (a, b) != (i, j) and abs(typed - scores[a, b]) <= 0.01:
                return f"That is query {a}'s score for key {b}. Take row {i} of Q and row {j} of K."
    return (
        f"Not quite. Multiply row {i} of Q and row {j} of K feature by feature and add: "
        f"{_products(variant, i, j)}."
    )


def _wrong_score(variant: Variant) -> str:
    q, k = variant.data["q"], variant.data["k"]
    i, j = variant.data["cell"]
    return number_text(float(np.sum(q[i] + k[j])))


def _explain_score(variant: Variant) -> str:
    i, j = variant.data["cell"]
    right = _scores(variant)[i, j]
    return (
        f"A score multiplies a query's features by a key's, one by one, and adds the products: "
        f"{_products(variant, i, j)} = {number_text(right)}. The chart shows every query's "
        "score for every key; the outlined cell is this one."
    )


def _reveal_scores(variant: Variant, answer) -> Reveal:
    i, j = variant.data.get("cell", (variant.data.get("query", 0), 0))
    return Reveal(
        "Scores q · k",
        _scores(variant),
        labels("query", TOKENS),
        labels("key", TOKENS),
        kind="scores",
        right=((i, j),),
    )


SCORE = Exercise(
    "1a",
    "compute",
    "One score by hand",
    _make_score,
    _check_score,
    lambda variant: number_text(_scores(variant)[variant.data["cell"]]),
    _explain_score,
    _reveal_scores,
    wrong=_wrong_score,
)


# ---- 1b: predict the best key --------------------------------------------------------------


def _make_best(seed: int) -> Variant:
    q, k = _draw("1b", seed)
    i = int(rng(seed, "1b-query").integers(0, TOKENS))
    return Variant(
        seed,
        f"Without computing every score: which key will **query {i}** score highest?",
        PickOne(f"Query {i} scores highest", labels("key", TOKENS)),
        {"q": q, "k": k, "query": i},
        _shown(q, k),
    )


def _best(variant: Variant) -> int:
    return int(np.argmax(_scores(variant)[variant.data["query"]]))


def _check_best(variant: Variant, answer) -> Verdict:
    options = labels("key", TOKENS)
    if answer not in options:
        return Verdict(False, f"Pick one of {', '.join(options)}.")
    i, best = variant.data["query"], _best(variant)
    row = _scores(variant)[i]
    said = ", ".join(f"key {j}: {number_text(s)}" for j, s in enumerate(row))
    if options.index(answer) == best:
        return Verdict(True, f"Right: key {best} has query {i}'s largest score ({said}).")
    return Verdict(False, f"Not this time: query {i}'s scores are {said}; key {best} is largest.")


def _explain_best(variant: Variant) -> str:
    i, best = variant.data["query"], _best(variant)
    return (
        f"A key scores high when its large features sit where query {i}'s are large and share "
        f"their sign. Row {i} of the chart holds query {i}'s scores; key {best}'s cell is the "
        "largest. (Step by step shows each product.)"
    )


def _reveal_best(variant: Variant, answer) -> Reveal:
    i = variant.data["query"]
    options = labels("key", TOKENS)
    guessed = ((i, options.index(answer)),) if answer in options else ()
    return Reveal(
        "Scores q · k: your guess and the largest" if guessed else "Scores q · k: the largest",
        _scores(variant),
        labels("query", TOKENS),
        options,
        kind="scores",
        guessed=guessed,
        right=((i, _best(variant)),),
    )


BEST_KEY = Exercise(
    "1b",
    "predict",
    "Which key wins?",
    _make_best,
    _check_best,
    lambda variant: f"key {_best(variant)}",
    _explain_best,
    _reveal_best,
    wrong=lambda variant: f"key {(_best(variant) + 1) % TOKENS}",
)

EXERCISES = (SCORE, BEST_KEY)
