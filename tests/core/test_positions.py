"""Tests for attnviz.core.positions (RoPE and ALiBi) and for them inside compute_attention.

Shape letters: H heads, T queries, S keys, D features. Checked against keras_hub's
`RotaryEmbedding` and `AlibiBias` (an implementation nobody on attnviz wrote), against the
float64 cell-by-cell reference in `reference.py`, and against their defining properties.
"""

import math

import numpy as np
import pytest
from reference import reference_alibi, reference_attention, reference_rope, softmax_rows

from attnviz import compute_attention
from attnviz.core.positions import (
    alibi_bias,
    alibi_slope,
    alibi_slopes,
    apply_rope,
    check_rope_theta,
    linear_bias,
    rope_angles,
    rope_frequencies,
)
from attnviz.core.stats import explain_cell

TOL = {"rtol": 1e-5, "atol": 1e-5}
RNG = np.random.default_rng(19)


@pytest.fixture(scope="module")
def hub_layers():
    """keras_hub's layers, imported only by the tests that compare with them (~1 s)."""
    import keras_hub

    return keras_hub.layers


# --- RoPE ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("theta", [10_000.0, 500_000.0, 10.0], ids=["1e4", "5e5", "10"])
def test_rope_equals_keras_hub_rotary_embedding(theta, hub_layers):
    x = RNG.normal(size=(2, 9, 8)).astype(np.float32)  # (B, T, D)
    hub = hub_layers.RotaryEmbedding(max_wavelength=theta)(x)
    np.testing.assert_allclose(apply_rope(x, theta=theta), np.asarray(hub), **TOL)


def test_rope_equals_keras_hub_with_given_positions_and_a_heads_axis(hub_layers):
    x = RNG.normal(size=(1, 3, 6, 4)).astype(np.float32)  # (B, H, T, D)
    positions = np.array([5, 6, 7, 8, 9, 10])
    layer = hub_layers.RotaryEmbedding(sequence_axis=2)
    hub = layer(x, positions=positions.astype(np.float32))
    np.testing.assert_allclose(apply_rope(x, positions), np.asarray(hub), **TOL)


def test_rope_equals_the_rotation_matrix_reference():
    x = RNG.normal(size=(5, 6))
    positions = [0, 1, 2, 7, 100]
    np.testing.assert_allclose(
        apply_rope(x, positions, 50.0), reference_rope(x, positions, 50.0), atol=1e-12
    )


def test_rope_frequencies_and_angles_pinned():
    # ω_p = θ^(-2p/D): D = 4, θ = 10000 -> [10000^0, 10000^(-1/2)] = [1, 0.01]
    np.testing.assert_allclose(rope_frequencies(4), [1.0, 0.01])
    np.testing.assert_allclose(rope_angles([0, 3], 4, 100.0), [[0, 0], [3, 0.3]])


def test_rope_pins_a_quarter_turn():
    # D = 2: one pair, ω = 1. Position π/2 turns (1, 0) to (0, 1) and (0, 1) to (-1, 0).
    turned = apply_rope([[1.0, 0.0], [0.0, 1.0]], [math.pi / 2, math.pi / 2])
    np.testing.assert_allclose(turned, [[0, 1], [-1, 0]], atol=1e-12)


def test_rope_keeps_position_zero_and_every_pair_length():
    x = RNG.normal(size=(7, 10))
    turned = apply_rope(x)
    np.testing.assert_allclose(turned[0], x[0], atol=1e-12)
    pair_lengths = lambda a: np.hypot(a[:, :5], a[:, 5:])  # noqa: E731  (T, P)
    np.testing.assert_allclose(pair_lengths(turned), pair_lengths(x), atol=1e-12)


@pytest.mark.parametrize("shift", [1, 17, -3, 1000])
def test_rope_scores_depend_only_on_relative_positions(shift):
    q, k = RNG.normal(size=(6, 8)), RNG.normal(size=(6, 8))
    positions = np.arange(6)
    scores = apply_rope(q, positions) @ apply_rope(k, positions).T  # (T, D) x (D, S)
    shifted = apply_rope(q, positions + shift) @ apply_rope(k, positions + shift).T
    np.testing.assert_allclose(shifted, scores, atol=1e-9)


def test_rope_probe_scores_are_constant_along_every_diagonal():
    # every token the same content: the score matrix is the pure position pattern, i − j only
    x = np.tile(RNG.normal(size=(1, 8)), (7, 1))  # (T, D), identical rows
    result = compute_attention(x, x, x, position="rope")
    for offset in range(-6, 7):
        diagonal = np.diagonal(result.scores, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-5)
    assert not np.allclose(result.scores[0, 1], result.scores[0, 3], atol=1e-3)  # not flat


# --- ALiBi --------------------------------------------------------------------------------------


def test_alibi_slopes_pinned_for_powers_of_two_and_others():
    np.testing.assert_allclose(alibi_slopes(8), [2.0**-k for k in range(1, 9)])
    np.testing.assert_allclose(alibi_slopes(2), [2.0**-4, 2.0**-8])
    # 6 heads: the 4-head slopes 2^-2, 2^-4, 2^-6, 2^-8, then every other 8-head slope: 2^-1, 2^-3
    np.testing.assert_allclose(alibi_slopes(6), [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8, 0.5, 0.125])
    assert alibi_slope(8, 2) == 0.125


def _paper_slopes(n: int) -> np.ndarray:
    """Press et al. 2022, written out in float64: for n a power of two 2^(-8i/n), i = 1 … n;
    otherwise, with m the largest power of two below n, 2^(-8i/m) for i = 1 … m, then every
    other slope of the 2m sequence, 2^(-8(2j - 1)/(2m)) for j = 1 … n - m."""
    m = 2 ** math.floor(math.log2(n))
    first = [2.0 ** (-8.0 * i / m) for i in range(1, m + 1)]
    extra = [2.0 ** (-8.0 * (2 * j - 1) / (2 * m)) for j in range(1, n - m + 1)]
    return np.array(first + extra, dtype=np.float64)


@pytest.mark.parametrize("heads", [32, 40, 64, 112, 128])
def test_alibi_slopes_of_real_models_follow_the_paper(heads):
    # MPT-7B and BLOOM-7B have 32 heads, BLOOM-176B 112; 40 is not a power of two
    slopes = alibi_slopes(heads)
    assert slopes.dtype == np.float64 and slopes.shape == (heads,)
    np.testing.assert_allclose(slopes, _paper_slopes(heads), rtol=1e-13, atol=0)
    assert slopes[0] == pytest.approx(2.0 ** (-8 / 2 ** math.floor(math.log2(heads))), rel=1e-14)
    assert alibi_slope(heads, heads - 1) == slopes[-1]


def test_alibi_slopes_for_40_heads_by_hand():
    slopes = alibi_slopes(40)  # 32 heads' 2^(-i/4), then 2^(-1/8), 2^(-3/8), …, 2^(-15/8)
    np.testing.assert_allclose(slopes[:32], [2.0 ** (-i / 4) for i in range(1, 33)], rtol=1e-14)
    np.testing.assert_allclose(slopes[32:], [2.0 ** (-k / 8) for k in range(1, 16, 2)], rtol=1e-14)


def test_alibi_heads_stop_only_at_the_memory_limit():
    result = compute_attention(
        RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)), np.eye(3), position="alibi",
        alibi_heads=64, alibi_head=63,
    )  # fmt: skip
    assert result.alibi_slope == pytest.approx(_paper_slopes(64)[63], rel=1e-13)
    with pytest.raises(ValueError, match=r"`num_heads` is too large: every head scores at least "
                       r"one attention cell and the limit is 268,435,456 cells \(the memory the "
                       r"weights take\)\. Received: 268,435,457\. Use fewer heads\."):  # fmt: skip
        alibi_slopes(2**28 + 1)
    with pytest.raises(ValueError, match=r"Too many attention cells: 128 heads × 2,048 queries × "
                       r"1,025 keys = 268,697,600; the limit is 268,435,456 \(the memory limit"
                       r"[^)]*\)\. Use fewer heads or positions\."):  # fmt: skip
        alibi_bias(128, 2048, 1025)  # refused before any bias is built
    assert alibi_bias(2, 5000, 3).shape == (2, 5000, 3)  # more positions than a page takes


@pytest.mark.parametrize("heads", [*range(1, 17), 32, 40, 64, 128])
def test_alibi_slopes_equal_keras_hub(heads, hub_layers):
    key_length = 5
    hub = hub_layers.AlibiBias()(np.zeros((1, heads, 1, key_length), np.float32))
    # keras_hub's bias is slope · (j − (S − 1)): the first key holds −slope · (S − 1)
    slopes = -np.asarray(hub)[0, :, 0, 0] / (key_length - 1)
    np.testing.assert_allclose(alibi_slopes(heads), slopes, rtol=1e-6)


def test_alibi_bias_pinned_and_equal_to_the_cell_reference():
    bias = alibi_bias(2, 3, 4)
    np.testing.assert_allclose(bias[0], -np.array([[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1]]) / 16)
    np.testing.assert_allclose(bias[1], reference_alibi(2.0**-8, 3, 4))
    np.testing.assert_allclose(linear_bias([0.5], [4], [0, 2, 4]), [[[-2, -1, 0]]])


@pytest.mark.parametrize("heads", [1, 3, 4, 8, 12])
def test_alibi_causal_weights_equal_keras_hub(heads, hub_layers):
    t = 6
    scores = RNG.normal(size=(1, heads, t, t)).astype(np.float32)  # (B, H, T, S)
    hub = np.asarray(hub_layers.AlibiBias()(scores))[0]  # (H, T, S)
    causal = np.tri(t, dtype=bool)
    ours = scores[0] + alibi_bias(heads, t, t)
    # on the allowed cells of each row the two biases differ by one constant per row
    for h in range(heads):
        for i in range(t):
            np.testing.assert_allclose(np.ptp((ours - hub)[h, i, : i + 1]), 0, atol=1e-5)
    expected = softmax_rows(np.where(causal, hub.astype(np.float64), -np.inf))
    np.testing.assert_allclose(softmax_rows(np.where(causal, ours, -np.inf)), expected, **TOL)
    for h in range(heads):  # and compute_attention with head h's slope
        q, k = np.eye(t, 4), RNG.normal(size=(t, 4))
        result = compute_attention(
            q, k, np.eye(t), causal=True, position="alibi", alibi_heads=heads, alibi_head=h
        )
        hub_h = hub_layers.AlibiBias()(np.asarray(result.scores)[None, None].repeat(heads, 1))
        logits = np.where(causal, np.asarray(hub_h)[0, h], -np.inf)
        np.testing.assert_allclose(result.weights, softmax_rows(logits), **TOL)


# --- inside compute_attention -------------------------------------------------------------------

Q, K, V = RNG.normal(size=(5, 4)), RNG.normal(size=(6, 4)), RNG.normal(size=(6, 3))


@pytest.mark.parametrize("mask_value", ["-inf", "-1e9"])
@pytest.mark.parametrize("masks", [{}, {"causal": True}, {"causal": True, "window": 1}])
@pytest.mark.parametrize("score", ["dot", "general"])
def test_rope_attention_equals_the_reference(score, masks, mask_value):
    params = {"W": RNG.normal(size=(4, 4))} if score == "general" else None
    result = compute_attention(
        Q, K, V, score=score, params=params, position="rope", rope_theta=100.0,
        mask_value=mask_value, **masks,
    )  # fmt: skip
    q_rot, k_rot = reference_rope(Q, range(5), 100.0), reference_rope(K, range(6), 100.0)
    expected = reference_attention(
        q_rot, k_rot, V, score=score, params=params, mask_value=mask_value, **masks
    )
    np.testing.assert_allclose(result.rotated_query, q_rot, **TOL)
    np.testing.assert_allclose(result.rotated_key, k_rot, **TOL)
    for name in ("scores", "masked_scores", "weights", "output"):
        np.testing.assert_allclose(getattr(result, name), getattr(expected, name), **TOL)
    assert result.position_bias is None and result.alibi_slope is None


@pytest.mark.parametrize("mask_value", ["-inf", "-1e9"])
@pytest.mark.parametrize("masks", [{}, {"causal": True}, {"key_padding_mask": [0, 0, 1, 1, 1, 1]}])
@pytest.mark.parametrize("score", ["dot", "concat"])
def test_alibi_attention_equals_the_reference(score, masks, mask_value):
    params = {"W_q": np.eye(4), "W_k": np.eye(4), "v": np.ones(4)} if score == "concat" else None
    result = compute_attention(
        Q, K, V, score=score, params=params, position="alibi", alibi_heads=4, alibi_head=1,
        mask_value=mask_value, **masks,
    )  # fmt: skip
    bias = reference_alibi(1 / 16, 5, 6)  # 4 heads: slopes 1/4, 1/16, 1/64, 1/256
    padding = masks.pop("key_padding_mask", None)
    expected = reference_attention(
        Q, K, V, score=score, params=params, mask_value=mask_value, bias=bias, padding=padding,
        **masks,
    )  # fmt: skip
    np.testing.assert_allclose(result.position_bias, bias, **TOL)
    assert result.alibi_slope == 1 / 16
    for name in ("scores", "masked_scores", "weights", "output"):
        np.testing.assert_allclose(getattr(result, name), getattr(expected, name), **TOL)


def test_position_none_leaves_every_number_unchanged():
    plain = compute_attention(Q, K, V, causal=True)
    none = compute_attention(Q, K, V, causal=True, position="none", rope_theta=5.0)
    for name in ("scores", "masked_scores", "weights", "output"):
        np.testing.assert_array_equal(getattr(none, name), getattr(plain, name))
    assert none.rotated_query is none.rotated_key is none.position_bias is None


def test_batched_rope_result_keeps_and_drops_the_batch_axis():
    q = RNG.normal(size=(2, 3, 4))
    result = compute_attention(q, q, q, position="rope")
    assert result.rotated_query.shape == result.rotated_key.shape == (2, 3, 4)
    one = result.item(1)
    np.testing.assert_array_equal(one.rotated_query, result.rotated_query[1])
    assert not one.rotated_query.flags.writeable


def test_explain_cell_shows_the_rope_rotation_of_q_and_k():
    result = compute_attention(Q, K, V, position="rope", rope_theta=10.0)
    step = explain_cell(result, Q, K, 3, 1)
    rope = step.rope
    np.testing.assert_allclose(rope.frequencies, [1.0, 10.0**-0.5])
    np.testing.assert_allclose(rope.query_angles, 3 * rope.frequencies)
    np.testing.assert_allclose(rope.key_angles, 1 * rope.frequencies)
    np.testing.assert_allclose(rope.rotated_query, reference_rope(Q, range(5), 10.0)[3], atol=1e-12)
    np.testing.assert_allclose(rope.rotated_key, reference_rope(K, range(6), 10.0)[1], atol=1e-12)
    assert rope.pair_products.sum() == pytest.approx(step.raw_score, abs=1e-5)
    assert sum(a * b for a, b in step.terms) == pytest.approx(step.raw_score, abs=1e-5)
    # each pair: |q_p| |k_p| cos(angle between them + (i − j) ω_p), i − j = 2
    q_p, k_p = Q[3].reshape(2, 2).T, K[1].reshape(2, 2).T  # (P, 2): (x_p, x_{p+P})
    between = np.arctan2(q_p[:, 1], q_p[:, 0]) - np.arctan2(k_p[:, 1], k_p[:, 0])
    lengths = np.hypot(*q_p.T) * np.hypot(*k_p.T)
    np.testing.assert_allclose(rope.pair_products, lengths * np.cos(between + 2 * rope.frequencies))


def test_explain_cell_shows_the_alibi_bias_in_the_logit():
    result = compute_attention(Q, K, V, position="alibi", alibi_heads=1)  # slope 1/256
    step = explain_cell(result, Q, K, 4, 0)
    assert step.bias == pytest.approx(-4 / 256)
    assert step.logit == pytest.approx(step.score + step.bias, abs=1e-6)
    assert step.rope is None


# --- bad values ---------------------------------------------------------------------------------

ERRORS = [
    ("theta-zero", {"position": "rope", "rope_theta": 0}, r"`rope_theta` \(the RoPE base θ\) must "
     r"be greater than 0 and at most 1e\+09\. Received: 0\."),
    ("theta-negative", {"position": "rope", "rope_theta": -5.0}, r"Received: -5\.0\."),
    ("theta-nan", {"rope_theta": float("nan")}, r"`rope_theta` .* Received: nan\."),
    ("theta-text", {"rope_theta": "big"}, r"`rope_theta` must be a number\. Received: 'big'\."),
    ("unknown-position", {"position": "sinusoidal"},
     r'`position` must be one of "none", "rope", "alibi"\. Received: \'sinusoidal\'\.'),
    ("alibi-heads-0", {"alibi_heads": 0}, r"`alibi_heads` must be 1 or more\. Received: 0\."),
    ("alibi-head-out", {"alibi_heads": 4, "alibi_head": 4},
     r"`alibi_head` must be one of the 4 ALiBi heads, from 0 to 3\. Received: 4\."),
]  # fmt: skip


@pytest.mark.parametrize(
    ("overrides", "match"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS]
)
def test_bad_position_settings_are_explained(overrides, match):
    with pytest.raises(ValueError, match=match):
        compute_attention(Q, K, V, **overrides)


@pytest.mark.parametrize(
    ("q", "k"), [(np.ones((2, 3)), np.ones((2, 3))), (np.ones((2, 4)), np.ones((2, 2)))],
    ids=["odd", "different"],
)  # fmt: skip
def test_rope_needs_the_same_even_query_and_key_width(q, k):
    with pytest.raises(ValueError, match=r'position="rope" rotates pairs .* Received: Dq \d, Dk'):
        compute_attention(q, k, np.ones((2, 1)), score="general", position="rope")


def test_direct_calls_reject_bad_values():
    with pytest.raises(ValueError, match=r"RoPE rotates features in pairs.*Received: 5\."):
        apply_rope(np.ones((2, 5)))
    with pytest.raises(ValueError, match=r"one position per row: 2 rows\. Received 3 positions"):
        apply_rope(np.ones((2, 4)), [0, 1, 2])
    with pytest.raises(ValueError, match=r"`positions` must hold finite positions"):
        apply_rope(np.ones((2, 4)), [0, np.inf])
    with pytest.raises(ValueError, match=r"`num_heads` must be 1 or more\. Received: 0\."):
        alibi_slopes(0)
    with pytest.raises(ValueError, match=r"`rope_theta` must be a number\. Received: True\."):
        check_rope_theta(True)
