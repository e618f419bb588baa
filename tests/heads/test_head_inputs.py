"""Tests for heads/head_inputs.py: one inspected head as the explorer opens it.

The calls are made here from known Q and K (float64 numpy), with the logits a layer would have
computed: scaled before or after Q·Kᵀ, by another number, with a position bias, with padding.
The explorer's own maths (`compute_attention`) must then give the head's weights.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from attnviz.core.attention import compute_attention
from attnviz.heads.head_inputs import TOLERANCE, head_inputs
from attnviz.heads.positions import NONE, PositionScheme

T, D = 5, 4
RNG = np.random.default_rng(0)
Q, K, V = (RNG.normal(size=(T, D)) for _ in range(3))
CAUSAL = np.tri(T, dtype=bool)
ALIBI = PositionScheme("alibi", "scores", "ALiBi: each head adds −slope × distance.")


def softmax(logits: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    masked = np.where(allowed, logits, -np.inf)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def call(query, logits, allowed, position=NONE, notes=(), logits_known=True):
    """An `AttentionCall`'s fields for one sequence and one head, as `inspect` records them."""
    masked = np.where(allowed, logits, -1e9)
    head = lambda a: np.asarray(a, np.float32)[None, None]  # noqa: E731 - (1, 1, ·, ·)
    return SimpleNamespace(
        key="layer/attention", query_heads=head(query), key_heads=head(K), value_heads=head(V),
        weights=head(softmax(logits, allowed)), logits=head(masked) if logits_known else None,
        head_masks=np.asarray(allowed)[None, None], position=position, notes=notes,
    )  # fmt: skip


def explorer_weights(opened) -> np.ndarray:
    result = compute_attention(opened.query, opened.key, opened.value, scale=opened.scale,
                               causal=opened.causal)  # fmt: skip
    return np.asarray(result.weights)


@pytest.mark.parametrize(
    ("query", "logits", "scale", "factor"),
    [
        (Q / np.sqrt(D), Q / np.sqrt(D) @ K.T, False, 1.0),  # Keras MHA: Q scaled first
        (Q, Q @ K.T / np.sqrt(D), True, 0.5),  # Llama: the scores scaled after
        (Q, 0.3 * Q @ K.T, False, 0.3),  # another scale, folded into Q
    ],
    ids=["scaled-queries", "scaled-scores", "other-scale"],
)
def test_the_explorer_reproduces_a_head_whatever_its_scaling(query, logits, scale, factor):
    for allowed, causal in ((np.ones((T, T), bool), False), (CAUSAL, True)):
        opened = head_inputs(call(query, logits, allowed), 0)
        assert (opened.scale, opened.causal) == (scale, causal)
        assert opened.factor == pytest.approx(factor, rel=1e-6)
        assert opened.reproduced and opened.reasons == () and opened.difference <= 1e-6
        folded = query * (factor if factor not in (1.0, 0.5) else 1.0)
        assert np.allclose(opened.query, folded, atol=1e-6)
        weights = softmax(logits, allowed)
        assert np.allclose(explorer_weights(opened), weights, atol=TOLERANCE)


def test_without_logits_the_scaling_is_read_from_the_weights():
    opened = head_inputs(call(Q, Q @ K.T / np.sqrt(D), CAUSAL, logits_known=False), 0)
    assert opened.scale and opened.reproduced


def test_a_position_bias_in_the_logits_is_named_as_the_difference():
    distance = np.abs(np.arange(T)[:, None] - np.arange(T)[None])  # (T, T) |i − j|
    logits = Q @ K.T / np.sqrt(D) - 0.5 * distance
    opened = head_inputs(call(Q, logits, CAUSAL, position=ALIBI, notes=("Soft-capped.",)), 0)
    assert not opened.reproduced and opened.difference > 0.01
    assert opened.reasons == (f"the logits add the position scheme: {ALIBI.text}", "Soft-capped.")
    reached = explorer_weights(opened)
    assert np.abs(reached - softmax(logits, CAUSAL)).max() == pytest.approx(
        opened.difference, abs=1e-6
    )


def test_a_mask_the_explorer_cannot_draw_is_named():
    padded = CAUSAL & np.array([True, True, True, False, True])  # key 3 is padding
    opened = head_inputs(call(Q, Q @ K.T / np.sqrt(D), padded), 0)
    assert opened.causal and not opened.reproduced
    assert opened.reasons == (
        "the layer masks 2 more cells than the explorer's causal mask (padding, a sliding "
        "window or sinks: see the heatmap's grey cells)",
    )  # query 3 and query 4 may not see key 3


def test_heads_that_cannot_be_opened_are_refused():
    plain = call(Q, Q @ K.T, CAUSAL)
    with pytest.raises(ValueError, match="No head 1 of sequence 0: 'layer/attention' has 1"):
        head_inputs(plain, 1)
    plain.query_heads = None
    with pytest.raises(ValueError, match="has no recorded Q, K and V heads"):
        head_inputs(plain, 0)
