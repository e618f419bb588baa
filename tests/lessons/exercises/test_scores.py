"""Lesson 1's exercises, their numbers worked out by hand."""

from __future__ import annotations

import numpy as np

from attnviz.lessons.exercises.scores import BEST_KEY, SCORE


def test_the_score_is_the_dot_product_worked_by_hand():
    variant = SCORE.make(11)
    q, k = variant.data["q"], variant.data["k"]
    i, j = variant.data["cell"]
    by_hand = sum(float(a) * float(b) for a, b in zip(q[i], k[j], strict=True))
    assert SCORE.check(variant, str(by_hand)).solved
    assert SCORE.check(variant, f" {by_hand + 0.005} ").solved  # within the tolerance
    assert not SCORE.check(variant, str(by_hand + 0.5)).solved


def test_each_usual_mistake_is_named():
    variant = SCORE.make(11)
    q, k = variant.data["q"], variant.data["k"]
    i, j = variant.data["cell"]
    added = SCORE.check(variant, str(float(np.sum(q[i] + k[j]))))
    assert "Multiply them pairwise" in added.message
    scaled = float(q[i] @ k[j]) / np.sqrt(3)
    if abs(scaled - float(q[i] @ k[j])) > 0.02:
        assert "√d_k" in SCORE.check(variant, str(scaled)).message
    other = next((a, b) for a in range(3) for b in range(3)
                 if abs(q[a] @ k[b] - q[i] @ k[j]) > 0.02)  # fmt: skip
    told = SCORE.check(variant, str(float(q[other[0]] @ k[other[1]]))).message
    assert f"row {i} of Q and row {j} of K" in told


def test_the_best_key_is_the_largest_dot_product():
    for seed in range(5):
        variant = BEST_KEY.make(seed)
        q, k, i = variant.data["q"], variant.data["k"], variant.data["query"]
        best = int(np.argmax([float(q[i] @ row) for row in k]))
        assert BEST_KEY.check(variant, f"key {best}").solved
        reveal = BEST_KEY.reveal(variant, f"key {(best + 1) % 3}")
        assert reveal.right == ((i, best),) and reveal.guessed == ((i, (best + 1) % 3),)
        np.testing.assert_allclose(reveal.matrix, q @ k.T)


def test_the_reveal_names_a_guess_only_when_there_is_one():
    variant = BEST_KEY.make(3)
    assert BEST_KEY.reveal(variant, "key 0").title == "Scores q · k: your guess and the largest"
    assert BEST_KEY.reveal(variant, None).title == "Scores q · k: the largest"  # a projector's
