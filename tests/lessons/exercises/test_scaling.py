"""Lesson 3's exercises, against numbers worked out by hand and softmax in float64 numpy."""

from __future__ import annotations

import numpy as np

from attnviz.lessons.exercises.base import Estimate, PickOne, TypeNumber, Variant
from attnviz.lessons.exercises.scaling import CELL, SHARP_OPTIONS, SHARPER, UNSCALED


def _softmax(row):
    e = np.exp(np.asarray(row, dtype=np.float64) - np.max(row))
    return e / e.sum()


def _cell_variant() -> Variant:
    q = np.array([[1.0, 2, 3, 4], [0, 1, 0, -1]])
    k = np.array([[1.0, 0, 0, 0], [1, 1, 1, 1], [2, -1, 0, 3]])
    return Variant(0, "", TypeNumber("", 0.01), {"q": q, "k": k, "cell": (0, 1)})


def test_a_scaled_score_worked_by_hand():
    variant = _cell_variant()  # q0 · k1 = 1 + 2 + 3 + 4 = 10; / √4 = 5
    assert CELL.check(variant, "5").solved
    assert CELL.check(variant, "5.009").solved
    assert not CELL.check(variant, "5.02").solved
    assert "forgot to divide by √d_k" in CELL.check(variant, "10").message
    assert "not by its square root" in CELL.check(variant, "2.5").message
    # q0 · k2 = 2 - 2 + 0 + 12 = 12, scaled 6: the other cell is named
    assert "query 0's scaled score for key 2" in CELL.check(variant, "6").message


def test_every_drawn_cell_is_the_dot_product_over_two():
    for seed in range(6):
        variant = CELL.make(seed)
        q, k = variant.data["q"], variant.data["k"]
        i, j = variant.data["cell"]
        raw = sum(float(a) * float(b) for a, b in zip(q[i], k[j], strict=True))
        assert CELL.check(variant, str(raw / 2)).solved
        assert not CELL.check(variant, str(raw)).solved
        np.testing.assert_allclose(CELL.reveal(variant, "0").matrix, q @ k.T / 2)


def _unscaled_variant() -> Variant:
    # raw scores 4, 2, 0 with d_k = 4: scaled 2, 1, 0
    q = np.array([[1.0, 0, 0, 0]])
    k = np.array([[4.0, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 0]])
    return Variant(0, "", Estimate("", 0, 1, 0.01), {"q": q, "k": k, "key": 0, "d_k": 4})


def test_the_top_weight_without_scaling_by_hand():
    variant = _unscaled_variant()
    unscaled = np.exp(4) / (np.exp(4) + np.exp(2) + 1)  # 0.8668
    scaled = np.exp(2) / (np.exp(2) + np.exp(1) + 1)  # 0.6652
    assert abs(UNSCALED.solution(variant) - unscaled) < 1e-6
    assert UNSCALED.check(variant, 0.78).solved  # within 0.1 of 0.867
    told = UNSCALED.check(variant, round(float(scaled), 2))
    assert not told.solved and "with scaling" in told.message and "0.867" in told.message
    low = UNSCALED.check(variant, 0.2)
    assert not low.solved and "too low" in low.message
    reveal = UNSCALED.reveal(variant, 0.5)
    np.testing.assert_allclose(reveal.matrix[0], _softmax([2, 1, 0]), atol=1e-6)
    np.testing.assert_allclose(reveal.matrix[1], _softmax([4, 2, 0]), atol=1e-6)


def test_drawn_rows_get_sharper_without_scaling():
    for seed in range(6):
        variant = UNSCALED.make(seed)
        raw = variant.data["k"][:, 0]  # the query is e0: its scores are the keys' first column
        d_k, top = variant.data["d_k"], variant.data["key"]
        assert variant.data["k"].shape[1] == d_k
        assert abs(UNSCALED.solution(variant) - _softmax(raw)[top]) < 1e-6
        assert _softmax(raw)[top] >= _softmax(raw / np.sqrt(d_k))[top] + 0.2


def test_the_sharper_query_against_numpy():
    for seed in range(4):
        variant = SHARPER.make(seed)
        tops = [_softmax((q @ k.T)[0]).max() for q, k in variant.data["pairs"]]
        right = SHARP_OPTIONS[int(np.argmax(tops))]
        assert SHARPER.check(variant, right).solved
        other = SHARP_OPTIONS[1 - int(np.argmax(tops))]
        assert not SHARPER.check(variant, other).solved
        assert f"{max(tops):.3f}" in SHARPER.check(variant, other).message
    assert variant.data["pairs"][1][0].shape == (1, 64)
    assert isinstance(variant.answer, PickOne)
