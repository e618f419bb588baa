"""Tests for heads/rollout: attention rollout pinned on hand-computed 2-layer examples."""

import numpy as np
import pytest

from attnviz.heads.rollout import ROLLOUT_TEX, attention_rollout

RNG = np.random.default_rng(5)


def test_two_layers_by_hand_and_the_order_of_the_product():
    # Layer 1: head average [[.5, .5], [.5, .5]] -> Â1 = [[.75, .25], [.25, .75]]
    # Layer 2: head average [[1, 0], [1, 0]]     -> Â2 = [[1, 0], [.5, .5]]
    # R = Â2 Â1 = [[.75, .25], [.5, .5]]   (Â1 Â2 would be [[.875, .125], [.625, .375]])
    layer1 = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]])  # (H, T, T)
    layer2 = np.array([[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]]])
    result = attention_rollout([layer1, layer2])
    np.testing.assert_allclose(result.mixed[0], [[0.75, 0.25], [0.25, 0.75]], atol=1e-15)
    np.testing.assert_allclose(result.mixed[1], [[1.0, 0.0], [0.5, 0.5]], atol=1e-15)
    np.testing.assert_allclose(result.rollout, [[0.75, 0.25], [0.5, 0.5]], atol=1e-15)
    np.testing.assert_array_equal(result.per_layer[0], result.mixed[0])
    np.testing.assert_array_equal(result.per_layer[-1], result.rollout)
    assert result.residual_weight == 0.5


def test_causal_two_layers_by_hand():
    # Layer 1 heads [[1,0],[.5,.5]] and [[1,0],[.1,.9]]: average row 1 = [.3, .7]
    #   Â1 = [[1, 0], [.15, .85]]
    # Layer 2 heads [[1,0],[.8,.2]] and [[1,0],[.6,.4]]: average row 1 = [.7, .3]
    #   Â2 = [[1, 0], [.35, .65]]
    # R = Â2 Â1: row 1 = [.35 + .65 * .15, .65 * .85] = [.4475, .5525]
    layer1 = np.array([[[1.0, 0], [0.5, 0.5]], [[1.0, 0], [0.1, 0.9]]])
    layer2 = np.array([[[1.0, 0], [0.8, 0.2]], [[1.0, 0], [0.6, 0.4]]])
    result = attention_rollout(np.stack([layer1, layer2]))  # (L, H, T, T)
    np.testing.assert_allclose(result.rollout, [[1.0, 0.0], [0.4475, 0.5525]], atol=1e-15)


def test_rows_sum_to_one_and_causal_structure_survives_every_layer():
    w = RNG.dirichlet(np.ones(5), size=(3, 2, 5))  # (L, H, T, T)
    causal = np.tril(w)
    causal /= causal.sum(axis=-1, keepdims=True)
    for weights in (w, causal):
        result = attention_rollout(weights)
        np.testing.assert_allclose(result.per_layer.sum(axis=-1), 1.0, atol=1e-12)
        np.testing.assert_allclose(result.mixed.sum(axis=-1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(np.triu(result.per_layer, k=1), 0.0)


def test_matches_a_float64_reference_product():
    w = RNG.dirichlet(np.ones(4), size=(3, 2, 4))  # (L, H, T, T)
    mixed = [0.5 * layer.mean(axis=0) + 0.5 * np.eye(4) for layer in w]  # rows sum to 1
    expected = np.linalg.multi_dot(mixed[::-1])  # Â3 Â2 Â1
    np.testing.assert_allclose(attention_rollout(w).rollout, expected, atol=1e-13)
    plain = np.linalg.multi_dot([layer.mean(axis=0) for layer in w][::-1])
    np.testing.assert_allclose(attention_rollout(w, residual_weight=0).rollout, plain, atol=1e-13)


def test_a_fully_masked_row_keeps_its_token():
    layer = np.array([[[1.0, 0.0], [0.0, 0.0]]])  # row 1 has no allowed key: all zero
    for alpha in (0.5, 0.0):
        result = attention_rollout(layer, residual_weight=alpha)
        np.testing.assert_allclose(result.rollout, np.eye(2), atol=1e-15)


def test_the_formula_is_stated():
    assert r"\hat A_l" in ROLLOUT_TEX and "0.5" in ROLLOUT_TEX and r"\frac{1}{H}" in ROLLOUT_TEX


@pytest.mark.parametrize(
    ("weights", "kwargs", "message"),
    [
        (np.full((1, 2, 2, 3), 1 / 3), {}, "must be square"),
        (np.eye(2)[None], dict(residual_weight=1.5), "from 0 to 1"),
        (np.eye(2)[None], dict(residual_weight=True), "from 0 to 1"),
        (np.eye(2)[None] * 2, {}, "from 0 to 1"),
    ],
    ids=["cross-attention", "alpha-range", "alpha-bool", "not-weights"],
)
def test_bad_inputs_are_rejected(weights, kwargs, message):
    with pytest.raises(ValueError, match=message):
        attention_rollout(weights, **kwargs)
