"""Tests for heads/capture (with owners and tracing): the general mechanism on attention written
by hand, as the decoder tutorial in the seed documents writes it.

The tutorial's `MultiHeadAttention` is a plain `Layer` with `W_q`, `W_k`, `W_v`, `W_o` that calls
a weightless `DotProductAttention` (softmax of `QKᵀ/√d_k - 1e9·mask`, 1 = masked); its padding
mask is `(B, 1, 1, S)` and its look-ahead mask `(T, T)`. It is reproduced here in Keras 3 (the
tutorial's TensorFlow calls spelt with `keras.ops`, `d_k` passed by name as Keras 3 requires),
and recorded by `inspect` with no adapter.
"""

from __future__ import annotations

import math

import keras
import numpy as np
import pytest
from inspection_support import inspected
from keras import ops

RNG = np.random.default_rng(41)


class DotProductAttention(keras.layers.Layer):
    """The tutorial's scaled dot-product attention (no weights)."""

    def call(self, queries, keys, values, d_k, mask=None):
        scores = ops.matmul(queries, ops.transpose(keys, (0, 1, 3, 2))) / math.sqrt(d_k)
        if mask is not None:
            scores += -1e9 * mask
        weights = ops.softmax(scores)
        return ops.matmul(weights, values)


class TutorialMultiHeadAttention(keras.layers.Layer):
    """The tutorial's multi-head attention: projections, heads, DotProductAttention, W_o."""

    def __init__(self, h, d_k, d_v, d_model, **kwargs):
        super().__init__(**kwargs)
        self.attention = DotProductAttention()
        self.heads, self.d_k, self.d_v = h, d_k, d_v
        self.W_q, self.W_k = keras.layers.Dense(d_k), keras.layers.Dense(d_k)
        self.W_v, self.W_o = keras.layers.Dense(d_v), keras.layers.Dense(d_model)

    def reshape_tensor(self, x, heads, flag):
        if flag:  # (B, T, d) -> (B, heads, T, d / heads)
            x = ops.reshape(x, (ops.shape(x)[0], ops.shape(x)[1], heads, -1))
            return ops.transpose(x, (0, 2, 1, 3))
        x = ops.transpose(x, (0, 2, 1, 3))  # (B, heads, T, d / heads) -> (B, T, d)
        return ops.reshape(x, (ops.shape(x)[0], ops.shape(x)[1], self.d_v))

    def call(self, queries, keys, values, mask=None):
        q = self.reshape_tensor(self.W_q(queries), self.heads, True)
        k = self.reshape_tensor(self.W_k(keys), self.heads, True)
        v = self.reshape_tensor(self.W_v(values), self.heads, True)
        o = self.attention(q, k, v, d_k=self.d_k, mask=mask)  # Keras 3: non-tensors by name
        return self.W_o(self.reshape_tensor(o, self.heads, False))


class TutorialDecoderBlock(keras.layers.Layer):
    """Masked self-attention, then cross-attention to the encoder, as the tutorial's decoder."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.multihead_attention1 = TutorialMultiHeadAttention(
            2, 8, 8, 8, name="multihead_attention1"
        )
        self.multihead_attention2 = TutorialMultiHeadAttention(
            2, 8, 8, 8, name="multihead_attention2"
        )

    def call(self, x, encoder_output, lookahead_mask, padding_mask):
        x = x + self.multihead_attention1(x, x, x, lookahead_mask)
        return x + self.multihead_attention2(x, encoder_output, encoder_output, padding_mask)


def _reference(layer: TutorialMultiHeadAttention, q, k, mask) -> np.ndarray:
    """The tutorial's weights `(B, H, T, S)` in float64 from W_q and W_k."""

    def heads(dense, x):
        kernel, bias = (np.asarray(w, dtype=np.float64) for w in (dense.kernel, dense.bias))
        projected = np.asarray(x, np.float64) @ kernel + bias  # (B, T, d_k)
        return projected.reshape(*projected.shape[:2], layer.heads, -1).transpose(0, 2, 1, 3)

    logits = heads(layer.W_q, q) @ heads(layer.W_k, k).transpose(0, 1, 3, 2) / np.sqrt(layer.d_k)
    logits = logits - 1e9 * mask
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)


@pytest.fixture(scope="module")
def block():
    keras.utils.set_random_seed(5)
    layer = TutorialDecoderBlock(name="decoder_layer")
    x, memory = RNG.normal(size=(2, 4, 8)), RNG.normal(size=(2, 5, 8))
    lookahead = 1.0 - np.tri(4)  # (T, T), 1 = masked: the future
    padding = np.zeros((2, 1, 1, 5))  # (B, 1, 1, S), 1 = masked: padded source tokens
    padding[0, ..., 3:] = 1.0
    args = [a.astype("float32") for a in (x, memory, lookahead, padding)]
    layer(*args)
    return layer, args


def test_hand_written_attention_is_recorded_under_the_layer_with_the_projections(block):
    layer, (x, memory, lookahead, padding) = block
    result = inspected(layer, x, encoder_output=memory, lookahead_mask=lookahead,
                     padding_mask=padding)  # fmt: skip
    assert result.keys() == ("multihead_attention1", "multihead_attention2")
    assert [c.kind for c in result.calls] == ["self", "cross"] and result.warnings == ()
    first, second = result.calls
    np.testing.assert_allclose(
        first.weights, _reference(layer.multihead_attention1, x, x, lookahead), atol=1e-5
    )
    np.testing.assert_array_equal(first.mask, np.broadcast_to(np.tri(4, dtype=bool), (2, 4, 4)))
    keys = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)  # the (B, 1, 1, S) padding
    np.testing.assert_array_equal(second.mask, np.broadcast_to(keys[:, None, :], (2, 4, 5)))
    assert second.weights.shape == (2, 2, 4, 5) and (second.weights[0, :, :, 3:] == 0).all()
    assert first.query_heads.shape == (2, 2, 4, 4) and second.key_heads.shape == (2, 2, 5, 4)
    np.testing.assert_array_equal(second.inputs["key"], memory)  # the call's own inputs
    assert first.class_name.endswith("TutorialMultiHeadAttention")


def test_cross_attention_queries_are_the_hidden_state(block):
    layer, (x, memory, lookahead, padding) = block
    result = inspected(layer, x, encoder_output=memory, lookahead_mask=lookahead,
                     padding_mask=padding)  # fmt: skip
    second = result["multihead_attention2"]
    hidden = second.inputs["query"]  # x + self-attention output, as the block computed it
    expected = _reference(layer.multihead_attention2, hidden, memory, padding)
    np.testing.assert_allclose(second.weights, expected, rtol=0, atol=1e-5)


def test_a_softmax_that_is_not_attention_is_not_recorded():
    keras.utils.set_random_seed(6)
    x_in = keras.Input((4, 8))
    attended = keras.layers.MultiHeadAttention(2, 4, name="mha")(x_in, x_in)
    probabilities = keras.layers.Dense(7, activation="softmax", name="classifier")(attended)
    model = keras.Model(x_in, probabilities)  # a (B, T, 7) softmax: class probabilities
    result = inspected(model, RNG.normal(size=(1, 4, 8)).astype("float32"))
    assert result.keys() == ("mha",) and result.warnings == ()


def test_attention_written_with_ops_in_a_subclassed_model():
    class Plain(keras.Model):
        def __init__(self):
            super().__init__(name="plain")
            self.project = keras.layers.Dense(6, name="project")

        def call(self, x):
            q = self.project(x)
            weights = ops.softmax(ops.einsum("btd,bsd->bts", q, x[..., :6]), axis=-1)
            return ops.einsum("bts,bsd->btd", weights, x)

    model, x = Plain(), RNG.normal(size=(2, 3, 6)).astype("float32")
    model(x)
    (call,) = inspected(model, x).calls
    q = np.asarray(model.project(x), np.float64)
    logits = np.einsum("btd,bsd->bts", q, x.astype(np.float64))
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    np.testing.assert_allclose(call.weights[:, 0], expected / expected.sum(-1, keepdims=True),
                               atol=1e-5)  # fmt: skip
    assert call.key == "plain" and call.kind == "self"  # Q and K both come from x
