"""Tests for heads/readout: masks read right for every shape Keras broadcasts, per-head masks,
masks added as numbers, shared key/value heads, folded batches.

Each mask test gives `MultiHeadAttention` one mask shape, and checks the recorded mask against
the mask written out by hand, and the weights against a float64 recomputation from the kernels.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
from inspection_support import inspected

from attnviz.heads.readout import MASKED_LOGIT, _kv_heads, _split_mask

RNG = np.random.default_rng(51)
B, H, T, D = 2, 2, 4, 6
PAD = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], bool)  # (B, S): sequence 0 has a padded key
CAUSAL = np.tri(T, dtype=bool)  # (T, S)


def _weights(layer, x: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """`(B, H, T, T)` float64 softmax of a Keras MultiHeadAttention from its kernels."""
    x64 = x.astype(np.float64)
    part = lambda dense: [np.asarray(w, np.float64) for w in (dense.kernel, dense.bias)]  # noqa: E731
    (wq, bq), (wk, bk) = part(layer._query_dense), part(layer._key_dense)
    q = np.einsum("btd,dhk->bhtk", x64, wq) + bq[:, None]
    k = np.einsum("bsd,dhk->bhsk", x64, wk) + bk[:, None]
    logits = np.where(allowed, q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1]), -np.inf)
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)


BOTH = CAUSAL & PAD[:, None]  # (B, T, S): causal and padding
MASKS = {  # name -> the mask given to the layer; each means `np.broadcast_to(mask, (B, H, T, S))`
    "(T, S)": CAUSAL,
    "(B, T, S)": BOTH[:, None],  # given as (B, T, S): broadcast by the layer over heads
    "(B, 1, T, S)": BOTH[:, None],
    "(B, 1, 1, S)": PAD[:, None, None],
}
GIVEN = {"(B, T, S)": BOTH}  # the shapes given differently from what they mean


@pytest.fixture(scope="module")
def layer_and_x():
    keras.utils.set_random_seed(8)
    layer = keras.layers.MultiHeadAttention(H, 3, name="mha")
    x = RNG.normal(size=(B, T, D)).astype("float32")
    layer(x, x)
    return layer, x


@pytest.mark.parametrize("name", list(MASKS), ids=list(MASKS))
def test_every_mask_shape_keras_broadcasts_is_read(layer_and_x, name):
    layer, x = layer_and_x
    given = GIVEN.get(name, MASKS[name])
    meant = np.broadcast_to(MASKS[name], (B, H, T, T))

    class WithMask(keras.Model):
        def call(self, x):
            return layer(x, x, attention_mask=given)

    model = WithMask()
    model(x)
    (call,) = inspected(model, x).calls
    np.testing.assert_array_equal(call.mask, meant[:, 0])
    assert call.head_mask is None
    np.testing.assert_array_equal(call.head_masks, meant)
    rows = meant.any(-1)
    np.testing.assert_allclose(call.weights[rows], _weights(layer, x, meant)[rows], atol=1e-5)


def test_a_per_head_mask_is_kept_per_head(layer_and_x):
    layer, x = layer_and_x
    heads = [np.broadcast_to(CAUSAL, (B, T, T)), np.broadcast_to(PAD[:, None], (B, T, T))]
    per_head = np.stack(heads, axis=1)  # (B, H, T, S): head 0 causal, head 1 padding

    class WithMask(keras.Model):
        def call(self, x):
            return layer(x, x, attention_mask=per_head)

    model = WithMask()
    model(x)
    (call,) = inspected(model, x).calls
    np.testing.assert_array_equal(call.head_mask, per_head)
    np.testing.assert_array_equal(call.mask, per_head.any(axis=1))  # allowed in some head
    np.testing.assert_allclose(call.weights, _weights(layer, x, per_head), atol=1e-5)


def test_implicit_keras_masks_are_read(layer_and_x):
    layer, x = layer_and_x
    tokens = np.where(PAD, RNG.integers(1, 9, size=(B, T)), 0).astype("int32")
    t_in = keras.Input((T,), dtype="int32")
    embedded = keras.layers.Embedding(10, D, mask_zero=True)(t_in)  # carries the padding mask
    model = keras.Model(t_in, layer(embedded, embedded, use_causal_mask=True))
    (call,) = inspected(model, tokens).calls
    allowed = PAD[:, :, None] & PAD[:, None, :] & CAUSAL  # queries, keys and causal
    np.testing.assert_array_equal(call.mask, allowed)


def test_a_mask_added_as_minus_ten_thousand_is_a_mask_and_a_large_bias_is_not():
    class Biased(keras.layers.Layer):
        def call(self, x, bias):
            scores = keras.ops.einsum("btd,bsd->bts", x, x) + bias
            return keras.ops.einsum("bts,bsd->btd", keras.ops.softmax(scores), x)

    x = RNG.normal(size=(1, 3, 4)).astype("float32")
    bias = np.array([[0.0, -1e4, -3000.0]] * 3, "float32")  # old BERT's mask; a far penalty
    layer = Biased(name="biased")
    layer(x, bias=bias)
    (call,) = inspected(layer, x, bias=bias).calls
    np.testing.assert_array_equal(call.mask[0], np.array([[True, False, True]] * 3))
    assert -1e4 < MASKED_LOGIT < -3000 + 50


def test_key_value_heads_follow_the_declared_count_or_the_product():
    grouped = keras.layers.GroupQueryAttention(head_dim=2, num_query_heads=6,
                                               num_key_value_heads=2)  # fmt: skip
    assert _kv_heads(grouped, 6, made=6) == (0, 0, 0, 1, 1, 1)  # repeated before Q·Kᵀ
    plain = keras.layers.MultiHeadAttention(3, 2)
    assert _kv_heads(plain, 3, made=3) == (0, 1, 2)
    assert _kv_heads(plain, 3, made=1) == (0, 0, 0)  # one key head for all: multi-query


def test_masks_split_into_shared_and_per_head():
    shared = np.broadcast_to(CAUSAL, (1, 2, T, T))
    mask, per_head = _split_mask(shared, (1, 2, T, T))
    np.testing.assert_array_equal(mask[0], CAUSAL)
    assert per_head is None and _split_mask(None, (1, 2, T, T)) == (None, None)
