"""Lesson 11's exercises: RoPE's rotation and scores worked out in float64 numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.lessons.exercises.rope import EXERCISES, ROTATE, SHIFT, THETA_CHOICES, WRAP


def _rope_by_hand(x: np.ndarray, position: int, theta: float) -> np.ndarray:
    """Rotate-half RoPE of one row of 4 features: pairs (0, 2) and (1, 3)."""
    out = np.empty(4)
    for p in range(2):
        angle = position * theta ** (-2 * p / 4)
        a, b = x[p], x[p + 2]
        out[p] = a * math.cos(angle) - b * math.sin(angle)
        out[p + 2] = b * math.cos(angle) + a * math.sin(angle)
    return out


def test_the_rotated_feature_is_worked_by_hand():
    for seed in range(8):
        variant = ROTATE.make(seed)
        data = variant.data
        right = _rope_by_hand(data["q"], data["position"], data["theta"])[data["feature"]]
        assert ROTATE.check(variant, f"{right:.4f}").solved, seed
        assert ROTATE.check(variant, f"{right + 0.009:.4f}").solved  # within 0.01
        assert not ROTATE.check(variant, f"{right + 0.05:.4f}").solved
        reveal = ROTATE.reveal(variant, f"{right:.4f}")
        assert reveal.matrix[data["position"], data["feature"]] == pytest.approx(right, abs=1e-9)
        np.testing.assert_allclose(reveal.matrix[0], data["q"])  # position 0 does not turn


def _first_with(feature_wanted: bool):
    """A variant whose asked feature is a pair's first (or second) and whose pair turns."""
    for seed in range(50):
        variant = ROTATE.make(seed)
        if (variant.data["feature"] < 2) == feature_wanted:
            return variant
    raise AssertionError("no such variant")


def test_the_usual_rotation_mistakes_are_named():
    variant = _first_with(True)
    data = variant.data
    f, m, theta, q = data["feature"], data["position"], data["theta"], data["q"]
    angle = m * theta ** (-2 * f / 4)
    x, y = q[f], q[f + 2]
    right = x * math.cos(angle) - y * math.sin(angle)
    flipped = x * math.cos(angle) + y * math.sin(angle)
    if abs(flipped - right) > 0.01:
        assert "sign of the sine" in ROTATE.check(variant, str(flipped)).message
    degrees = x * math.cos(math.radians(angle)) - y * math.sin(math.radians(angle))
    if abs(degrees - right) > 0.01:
        assert "in degrees" in ROTATE.check(variant, str(degrees)).message
    if abs(q[f] - right) > 0.01:
        assert "did not rotate" in ROTATE.check(variant, str(q[f])).message
    told = ROTATE.check(variant, "1e6").message
    assert told.startswith("Not quite.") and "The pair is" in told


def _scores_by_hand(x: np.ndarray, theta: float) -> np.ndarray:
    rotated = np.stack([_rope_by_hand(row, m, theta) for m, row in enumerate(x)])
    return rotated @ rotated.T


def test_a_score_after_rope_moves_with_i_minus_j_only_for_one_vector():
    cases = set()
    for seed in range(12):
        variant = SHIFT.make(seed)
        data = variant.data
        cases.add(data["case"])
        scores = _scores_by_hand(data["x"], data["theta"])
        (i, j), (k, m) = data["cells"]
        same = abs(scores[i, j] - scores[k, m]) < 1e-6
        assert same == (data["case"] == "both"), seed  # equal exactly when i − j is kept
        answer = "the same score" if same else "a different score"
        assert SHIFT.check(variant, answer).solved
        other = "a different score" if same else "the same score"
        assert "Not this time" in SHIFT.check(variant, other).message
        np.testing.assert_allclose(SHIFT.reveal(variant, answer).matrix, scores, atol=1e-4)
    assert cases == {"both", "one", "differ"}


def test_every_theta_that_brings_the_asked_key_round_is_accepted():
    asked = set()
    for seed in range(8):
        variant = WRAP.make(seed)
        wanted = variant.data["distance"]
        asked.add(wanted)
        for theta in THETA_CHOICES:
            back = np.arange(1, 12)  # keys 1 … 11 back from query 11
            best = int(back[np.argmax(np.cos(back * theta**-0.5))])  # |v|² cos(d·ω), by hand
            verdict = WRAP.check(variant, {"theta": theta})
            assert verdict.solved == (best == wanted), (seed, theta)
            if not verdict.solved:
                assert f"**{best} back** scores highest" in verdict.message
                assert 0 <= verdict.close < 1
        (control,) = variant.answer.controls
        assert not WRAP.check(variant, {"theta": control.default}).solved  # not solved at start
    assert asked == {1, 6, 9, 11}
    variant = WRAP.make(0)
    assert WRAP.check(variant, {"theta": 7}).message.startswith("Choose θ among 1, 2, 3")
    reveal = WRAP.reveal(variant, {"theta": 1})
    assert reveal.guessed == ((0, 11 - 6),)  # θ = 1: 6 back is nearest a full turn (6 rad)


def test_odd_answers_get_a_message_and_no_exception():
    odd = [np.array([1, 2]), [1], {"way": []}, {"theta": np.array([1, 2])}, {"theta": []},
           frozenset({("a", "b")}), b"x", object()]  # fmt: skip
    for exercise in EXERCISES:
        variant = exercise.make(5)
        for answer in odd:
            verdict = exercise.check(variant, answer)
            assert not verdict.solved and verdict.message, (exercise.id, answer)
            exercise.reveal(variant, answer)  # a chart or None, never an exception
