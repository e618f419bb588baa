"""Lesson 5's exercises, against general scores q W kᵀ worked out by hand and in numpy."""

from __future__ import annotations

import numpy as np

from attnviz.lessons.exercises.base import EditMatrices, TypeNumber, Variant
from attnviz.lessons.exercises.score_functions import GENERAL_SCORE, STEER, WINNER


def test_a_general_score_worked_by_hand():
    q = np.array([[1.0, 2], [0, 1]])
    w = np.array([[1.0, 0], [2, 1]])
    k = np.array([[1.0, 1], [0, 1], [2, 0]])
    variant = Variant(0, "", TypeNumber("", 0.01), {"q": q, "k": k, "w": w, "cell": (0, 0)})
    # q0 W = (1·1 + 2·2, 1·0 + 2·1) = (5, 2); (5, 2) · (1, 1) = 7
    assert GENERAL_SCORE.check(variant, "7").solved
    assert "(5, 2)" in GENERAL_SCORE.check(variant, "7").message
    assert "you left W out" in GENERAL_SCORE.check(variant, "3").message  # q0 · k0 = 3
    # q0 Wᵀ = (1, 4); (1, 4) · (1, 1) = 5
    assert "rows instead of its columns" in GENERAL_SCORE.check(variant, "5").message
    # q1 W = (2, 1); (2, 1) · (2, 0) = 4: another cell
    assert "query 1's general score for key 2" in GENERAL_SCORE.check(variant, "4.001").message
    np.testing.assert_allclose(GENERAL_SCORE.reveal(variant, "7").matrix, q @ w @ k.T)


def test_drawn_general_scores_against_numpy():
    for seed in range(6):
        variant = GENERAL_SCORE.make(seed)
        q, k, w = variant.data["q"], variant.data["k"], variant.data["w"]
        i, j = variant.data["cell"]
        assert GENERAL_SCORE.check(variant, str(float(q[i] @ w @ k[j]))).solved
        assert not GENERAL_SCORE.check(variant, str(float(q[i] @ k[j]))).solved


def test_the_general_winner_against_numpy_and_it_sometimes_changes():
    changes = []
    for seed in range(12):
        variant = WINNER.make(seed)
        q, k, w = variant.data["q"], variant.data["k"], variant.data["w"]
        dot, general = int(np.argmax(q @ k.T)), int(np.argmax(q @ w @ k.T))
        assert WINNER.check(variant, f"key {general}").solved
        assert f"key {dot}" in variant.prompt
        changes.append(dot != general)
        if dot != general:
            told = WINNER.check(variant, f"key {dot}")
            assert not told.solved and "wins the dot product" in told.message
    assert any(changes) and not all(changes)


def test_any_w_that_makes_the_key_win_is_accepted():
    q, k = np.array([[1.0, 0]]), np.array([[1.0, 0], [0, 1], [-1, 0]])
    variant = Variant(0, "", EditMatrices((("W", "1 0\n0 1"),)), {"q": q, "k": k, "target": 1})
    # W sends q = (1, 0) to (0, 1): scores 0, 1, 0, a lead of exactly 1
    assert STEER.check(variant, {"W": "0 1\n0 0"}).solved
    told = STEER.check(variant, {"W": "1 0\n0 1"})  # scores 1, 0, -1
    assert not told.solved and "leads by -1" in told.message and told.close == 0.0
    half = STEER.check(variant, {"W": "0 0.5\n0 0"})  # scores 0, 0.5, 0: lead 0.5
    assert not half.solved and half.close == 0.75
    wrong_shape = STEER.check(variant, {"W": "1 2"})
    assert not wrong_shape.solved and "W must have 2 rows of 2 numbers" in wrong_shape.message


def test_drawn_targets_are_reached_by_the_solution_in_numpy():
    for seed in range(6):
        variant = STEER.make(seed)
        q, k, target = variant.data["q"], variant.data["k"], variant.data["target"]
        assert int(np.argmax(q @ k.T)) != target  # the identity does not already do it
        w = np.array(
            [[float(x) for x in line.split()] for line in STEER.solution(variant)["W"].splitlines()]
        )
        scores = (q @ w @ k.T)[0]
        assert all(scores[target] - s >= 1 for j, s in enumerate(scores) if j != target)
