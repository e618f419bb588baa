"""Lesson 2's exercises, against softmax in float64 numpy."""

from __future__ import annotations

import numpy as np

from attnviz.lessons.exercises.softmax import ESTIMATE, HALVES, SURE_OF_ONE


def _softmax(row):
    e = np.exp(np.asarray(row, dtype=np.float64) - np.max(row))
    return e / e.sum()


def test_the_estimated_weight_is_softmax_of_the_scores():
    variant = ESTIMATE.make(4)
    right = _softmax(variant.data["scores"])[variant.data["key"]]
    step = -1 if right > 0.5 else 1  # stay between 0 and 1
    assert ESTIMATE.check(variant, float(right) + step * 0.09).solved
    told = ESTIMATE.check(variant, float(right) + step * 0.11)
    assert not told.solved and ("too high" if step > 0 else "too low") in told.message


def test_any_query_that_does_it_is_accepted():
    variant = SURE_OF_ONE.make(2)
    k, target = variant.data["k"], variant.data["target"]
    # not the computed solution: the target key itself, scaled up until it wins
    for scale in (1, 2, 4, 8, 16, 32):
        q = scale * (k[target] - k.mean(axis=0))
        if _softmax(k @ q)[target] >= 0.9:
            break
    text = " ".join(str(x) for x in q)
    assert SURE_OF_ONE.check(variant, {"Q": text}).solved
    low = SURE_OF_ONE.check(variant, {"Q": "0 0 0"})
    assert not low.solved and "0.333" in low.message  # three equal scores: a third each


def test_two_halves_are_checked_against_numpy():
    variant = HALVES.make(9)
    a, b = variant.data["pair"]
    q = np.array([float(x) for x in HALVES.solution(variant)["Q"].split()])
    w = _softmax(variant.data["k"] @ q)
    assert abs(w[a] - 0.5) <= 0.02 and abs(w[b] - 0.5) <= 0.02
    told = HALVES.check(variant, {"Q": "1 2"}).message
    assert told.startswith("Q must have 1 row of 3 numbers; it has 1 × 2"), told
