"""Tests for heads/inspection on Keras's other attention layers: `Attention` (Luong: dot, scaled,
concat), `AdditiveAttention` (Bahdanau), `GroupQueryAttention`, and a model mixing them with
`MultiHeadAttention`.

Each recorded call is checked against a float64 numpy recomputation written here from the
layer's own variables (independent of attnviz), to 1e-5, and against the layer's own
`return_attention_scores=True`.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
from inspection_support import inspected

RNG = np.random.default_rng(31)
B, T, S, D = 2, 4, 5, 6


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def _luong_logits(layer, q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Keras `Attention`'s scores `(B, T, S)` in float64, from its documented formulas."""
    scale = None if layer.scale is None else float(np.asarray(layer.scale))
    if layer.score_mode == "dot":
        scores = np.einsum("btd,bsd->bts", q, k)
        return scores if scale is None else scores * scale
    summed = q[:, :, None, :] + k[:, None, :, :]  # (B, T, 1, D) + (B, 1, S, D)
    summed = summed if scale is None else summed * scale
    return float(np.asarray(layer.concat_score_weight)) * np.tanh(summed).sum(-1)


def _numpy64(*arrays):
    return [np.asarray(a, dtype=np.float64) for a in arrays]


@pytest.fixture(scope="module")
def query_value():
    return RNG.normal(size=(B, T, D)).astype("float32"), RNG.normal(size=(B, S, D)).astype(
        "float32"
    )


@pytest.mark.parametrize(
    "options",
    [dict(), dict(use_scale=True), dict(score_mode="concat"),
     dict(score_mode="concat", use_scale=True)],
    ids=["dot", "dot-scaled", "concat", "concat-scaled"],
)  # fmt: skip
def test_luong_attention(query_value, options):
    keras.utils.set_random_seed(1)
    q_in, v_in = keras.Input((T, D)), keras.Input((S, D))
    layer = keras.layers.Attention(name="luong", **options)
    model = keras.Model([q_in, v_in], layer([q_in, v_in]))
    for weight in layer.weights:  # away from the initial 1.0 so that the scale matters
        weight.assign(np.full(weight.shape, 0.7, "float32"))
    q, v = query_value
    (call,) = inspected(model, [q, v]).calls
    weights = _softmax(_luong_logits(layer, *_numpy64(q, v)))  # key = value
    np.testing.assert_allclose(call.weights[:, 0], weights, rtol=0, atol=1e-5)
    _, own = layer([q, v], return_attention_scores=True)
    np.testing.assert_allclose(call.weights[:, 0], np.asarray(own), rtol=0, atol=1e-6)
    assert (call.key, call.kind, call.weights.shape, call.mask) == (
        "luong",
        "cross",
        (B, 1, T, S),
        None,
    )
    np.testing.assert_array_equal(call.inputs["query"], q)
    np.testing.assert_array_equal(call.value_heads[:, 0], v)
    if layer.score_mode == "dot":  # the product's operands: the query and key as given
        np.testing.assert_array_equal(call.query_heads[:, 0], q)
        np.testing.assert_array_equal(call.key_heads[:, 0], v)


def test_luong_attention_masks_and_causal_are_read(query_value):
    q, v = query_value
    layer = keras.layers.Attention(name="luong")
    q_mask = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], bool)
    v_mask = np.array([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]], bool)
    q_in, v_in = keras.Input((T, D)), keras.Input((S, D))
    m_in, n_in = keras.Input((T,), dtype="bool"), keras.Input((S,), dtype="bool")
    out = layer([q_in, v_in], mask=[m_in, n_in], use_causal_mask=True)
    model = keras.Model([q_in, v_in, m_in, n_in], out)
    (call,) = inspected(model, [q, v, q_mask, v_mask]).calls
    allowed = v_mask[:, None, :] & np.tri(T, S, dtype=bool)  # keys: padding and causal
    np.testing.assert_array_equal(call.mask, allowed)  # Keras leaves padded queries unmasked
    logits = np.where(allowed, np.einsum("btd,bsd->bts", *_numpy64(q, v)), -np.inf)
    np.testing.assert_allclose(call.weights[:, 0], _softmax(logits), rtol=0, atol=1e-5)
    assert (call.weights[:, 0][~allowed] == 0).all()


def test_luong_attention_with_every_key_masked_is_recorded_as_it_used_it(query_value):
    # Attention subtracts 1e9 from masked scores: in float32 a row with no allowed key becomes
    # equal logits, so its softmax spreads evenly; its output is the mean of the values
    q, v = query_value
    layer = keras.layers.Attention(name="luong")
    v_mask = np.array([[0, 0, 0, 0, 0], [1, 1, 1, 0, 0]], bool)  # item 0: no key at all
    q_in, v_in, n_in = keras.Input((T, D)), keras.Input((S, D)), keras.Input((S,), dtype="bool")
    model = keras.Model([q_in, v_in, n_in], layer([q_in, v_in], mask=[None, n_in]))
    (call,) = inspected(model, [q, v, v_mask]).calls
    assert not call.mask[0].any()
    np.testing.assert_allclose(call.weights[0, 0], np.full((T, S), 1 / S), rtol=0, atol=1e-7)
    output = np.asarray(model([q, v, v_mask]))
    np.testing.assert_allclose(output[0], np.broadcast_to(v[0].mean(0), (T, D)), atol=1e-6)
    assert call.verified.describe().startswith("checked against the layer's weighted values")


def test_additive_attention(query_value):
    keras.utils.set_random_seed(2)
    q, v = query_value
    layer = keras.layers.AdditiveAttention(name="bahdanau")
    model = keras.Model(inputs := [keras.Input((T, D)), keras.Input((S, D))], layer(inputs))
    layer.scale.assign(RNG.normal(size=(D,)).astype("float32"))
    (call,) = inspected(model, [q, v]).calls
    q64, v64 = _numpy64(q, v)
    scale = np.asarray(layer.scale, dtype=np.float64)  # (D,)
    logits = (scale * np.tanh(q64[:, :, None, :] + v64[:, None, :, :])).sum(-1)  # (B, T, S)
    np.testing.assert_allclose(call.weights[:, 0], _softmax(logits), rtol=0, atol=1e-5)
    np.testing.assert_allclose(call.logits[:, 0], logits, rtol=0, atol=1e-5)
    _, own = layer([q, v], return_attention_scores=True)
    np.testing.assert_allclose(call.weights[:, 0], np.asarray(own), rtol=0, atol=1e-6)
    assert call.kind == "cross" and call.class_name.endswith("AdditiveAttention")
    np.testing.assert_array_equal(call.inputs["query"], q)  # no product: read from the call
    np.testing.assert_array_equal(call.inputs["key"], v)


def test_additive_self_attention_is_self(query_value):
    q, _ = query_value
    layer = keras.layers.AdditiveAttention(name="bahdanau")
    x_in = keras.Input((T, D))
    model = keras.Model(x_in, layer([x_in, x_in]))
    (call,) = inspected(model, q).calls
    assert call.kind == "self" and call.weights.shape == (B, 1, T, T)


def _gqa_reference(layer, x: np.ndarray, causal: bool) -> np.ndarray:
    """GroupQueryAttention's weights `(B, H, T, T)` in float64 from its kernels."""
    x64 = np.asarray(x, dtype=np.float64)
    kernel = lambda dense: np.asarray(dense.kernel, dtype=np.float64)  # noqa: E731
    bias = lambda dense: np.asarray(dense.bias, dtype=np.float64)  # noqa: E731
    q = (
        np.einsum("btd,dhk->bhtk", x64, kernel(layer._query_dense))
        + bias(layer._query_dense)[:, None]
    )
    k = np.einsum("bsd,dgk->bgsk", x64, kernel(layer._key_dense)) + bias(layer._key_dense)[:, None]
    groups = layer.num_query_heads // layer.num_key_value_heads
    k = np.repeat(k, groups, axis=1)  # (B, G, S, Dk) -> (B, H, S, Dk): head h uses k[h // groups]
    logits = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])  # (B, H, T, T)
    if causal:
        logits = np.where(np.tri(x.shape[1], dtype=bool), logits, -np.inf)
    return _softmax(logits)


@pytest.mark.parametrize("causal", [False, True], ids=["bidirectional", "causal"])
def test_group_query_attention(query_value, causal):
    keras.utils.set_random_seed(3)
    x, _ = query_value
    layer = keras.layers.GroupQueryAttention(head_dim=3, num_query_heads=4,
                                             num_key_value_heads=2, name="gqa")  # fmt: skip
    x_in = keras.Input((T, D))
    model = keras.Model(x_in, layer(x_in, x_in, use_causal_mask=causal))
    (call,) = inspected(model, x).calls
    np.testing.assert_allclose(call.weights, _gqa_reference(layer, x, causal), rtol=0, atol=1e-5)
    _, own = layer(x, x, use_causal_mask=causal, return_attention_scores=True)
    np.testing.assert_allclose(call.weights, np.asarray(own), rtol=0, atol=1e-6)
    assert call.kv_heads == (0, 0, 1, 1)  # every query head, and which key/value head it shares
    assert call.kind == "self" and call.query_heads.shape == (B, 4, T, 3)
    np.testing.assert_array_equal(call.key_heads[:, 0], call.key_heads[:, 1])
    assert not np.array_equal(call.key_heads[:, 1], call.key_heads[:, 2])
    assert (call.mask is not None) == causal


def test_a_model_mixing_multi_head_and_luong_attention_records_both(query_value):
    keras.utils.set_random_seed(4)
    x, memory = query_value
    x_in, m_in = keras.Input((T, D)), keras.Input((S, D))
    mha = keras.layers.MultiHeadAttention(2, 3, name="mha")
    luong = keras.layers.Attention(name="luong")
    hidden = mha(x_in, x_in)
    model = keras.Model([x_in, m_in], luong([hidden, m_in]))
    result = inspected(model, [x, memory])
    assert result.keys() == ("mha", "luong") and result.warnings == ()
    assert [c.weights.shape for c in result.calls] == [(B, 2, T, T), (B, 1, T, S)]
    _, own = luong([np.asarray(mha(x, x)), memory], return_attention_scores=True)
    np.testing.assert_allclose(result["luong"].weights[:, 0], np.asarray(own), atol=1e-6)
