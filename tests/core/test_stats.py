"""Row statistics and the step-by-step arithmetic, against hand-computed float64 numbers."""

import math

import numpy as np
import pytest

from attnviz import compute_attention
from attnviz.core.stats import explain_cell, format_number, row_stats

Q = [[1, 0, 0], [0, 1, 0]]
K = [[1, 2, 3], [4, 5, 6]]
V = [[0, 1, 0], [1, 0, 1]]


def test_row_stats_of_the_numpy_lab_causal_example():
    result = compute_attention(Q, K, V, causal=True)
    stats = row_stats(result.weights, result.mask)
    p = 1 / (1 + math.exp((5 - 2) / math.sqrt(3)))  # weight of key 0 in row 1
    entropy = -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
    assert stats.entropy_bits == pytest.approx([0.0, entropy], abs=1e-5)
    assert stats.max_weight == pytest.approx([1.0, 1 - p], abs=1e-6)
    assert stats.argmax.tolist() == [0, 1]
    assert stats.allowed_keys.tolist() == [1, 2]
    assert not stats.fully_masked.any()


def test_uniform_rows_have_log2_s_bits_and_fully_masked_rows_are_flagged():
    weights = np.array([[0.25] * 4, [0.0] * 4])
    mask = np.array([[True] * 4, [False] * 4])
    stats = row_stats(weights, mask)
    assert stats.entropy_bits == pytest.approx([2.0, 0.0])
    assert stats.fully_masked.tolist() == [False, True]
    assert stats.argmax.tolist() == [0, -1]


def test_explain_dot_cell_reproduces_the_weight():
    result = compute_attention(Q, K, V, causal=True)
    step = explain_cell(result, np.array(Q), np.array(K), 1, 0)
    assert step.terms == ((0.0, 1.0), (1.0, 2.0), (0.0, 3.0))
    assert step.raw_score == pytest.approx(2.0)
    assert step.score == pytest.approx(2 / math.sqrt(3), rel=1e-6)
    assert step.allowed and not step.fully_masked
    assert step.exp_value / step.row_sum == pytest.approx(0.150325, abs=1e-6)
    assert step.weight == pytest.approx(0.150325, abs=1e-6)


def test_explain_blocked_cell_under_both_mask_values():
    inf = explain_cell(compute_attention(Q, K, V, causal=True), np.array(Q), np.array(K), 0, 1)
    assert not inf.allowed and inf.logit == -math.inf and inf.exp_value == 0 and inf.weight == 0
    big = compute_attention(Q, K, V, causal=True, mask_value="-1e9")
    step = explain_cell(big, np.array(Q), np.array(K), 0, 1)
    assert step.logit == pytest.approx(4 / math.sqrt(3) - 1e9, abs=64)  # float32 spacing at 1e9
    assert step.weight == 0


def test_explain_general_and_concat_terms_sum_to_the_raw_score():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(3, 4)), rng.normal(size=(5, 2))
    for kind in ("general", "concat"):
        result = compute_attention(q, k, rng.normal(size=(5, 3)), score=kind, seed=4)
        step = explain_cell(result, q, k, 2, 3)
        total = sum(a * b for a, b in step.terms)
        assert total == pytest.approx(step.raw_score, rel=1e-4, abs=1e-5)


@pytest.mark.parametrize(
    ("x", "text"),
    [(-math.inf, "−∞"), (math.inf, "∞"), (-1e9, "−1e9"), (0.1503254, "0.150325"), (2.0, "2")],
)
def test_format_number(x, text):
    assert format_number(x) == text
