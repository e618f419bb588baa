"""Tests for heads/capture.py on its own: finding attention layers, recording one run's calls
(kind, weights, mask, inputs, config) and putting every layer back as it was, also after an
error. The weights are compared with the layer's own `return_attention_scores=True` output."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from attnviz.heads.capture import (
    PATCHED,
    CaptureError,
    FoundLayer,
    calls_without_weights,
    eager_functions,
    find_attention_layers,
    recording,
)

RNG = np.random.default_rng(3)
B, T, S, D, H = 2, 3, 4, 6, 2  # batch, queries, keys, features, heads


def _attention(name: str, **kwargs) -> keras.layers.MultiHeadAttention:
    layer = keras.layers.MultiHeadAttention(H, 3, name=name, **kwargs)
    layer.build((None, T, D), (None, S, D))
    return layer


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    return RNG.random((B, T, D)).astype("float32"), RNG.random((B, S, D)).astype("float32")


class Block(keras.layers.Layer):
    """Self-attention, then an inner block with cross-attention: two levels of nesting."""

    def __init__(self, inner: keras.layers.Layer | None = None, **kwargs):
        super().__init__(**kwargs)
        self.attention = keras.layers.MultiHeadAttention(H, 3, name="self_attention")
        self.inner = inner

    def call(self, x, memory):
        x = self.attention(x, x)
        return self.inner(x, memory) if self.inner is not None else x


class Cross(keras.layers.Layer):
    def __init__(self, shared: keras.layers.MultiHeadAttention, **kwargs):
        super().__init__(**kwargs)
        self.cross = shared

    def call(self, x, memory):
        return self.cross(x, memory)


# ---------------------------------------------------------------- finding


def test_an_attention_layer_is_found_as_itself():
    layer = _attention("solo")
    (found,) = find_attention_layers(layer)
    assert found == FoundLayer("solo", layer)


def test_layers_are_found_depth_first_with_their_paths_and_shared_ones_once():
    shared = keras.layers.MultiHeadAttention(H, 3, name="shared_cross")
    outer = Block(Block(Cross(shared, name="cross_block"), name="inner"), name="outer")
    also = Cross(shared, name="again")  # the same layer under a second parent

    class Model(keras.Model):
        def __init__(self):
            super().__init__(name="model")
            self.outer, self.again = outer, also

        def call(self, x, memory):
            return self.again(self.outer(x, memory), memory)

    found = find_attention_layers(Model())
    assert [f.path for f in found] == [
        "outer/self_attention",
        "outer/inner/self_attention",
        "outer/inner/cross_block/shared_cross",
    ]
    assert found[2].layer is shared


def test_a_model_without_attention_has_no_layers():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    assert find_attention_layers(model) == []


# ---------------------------------------------------------------- recording


def test_self_and_cross_calls_are_recorded_in_order_with_the_layers_own_weights():
    layer = _attention("attention")
    x, memory = _inputs()
    with recording(find_attention_layers(layer)) as calls:
        layer(x, x)  # self-attention: query is the value
        layer(x, memory)  # cross-attention
    own_self = np.asarray(layer(x, x, return_attention_scores=True)[1])
    own_cross = np.asarray(layer(x, memory, return_attention_scores=True)[1])
    assert [(c.kind, c.call_index) for c in calls] == [("self", 0), ("cross", 1)]
    assert calls[0].weights.shape == (B, H, T, T) and calls[1].weights.shape == (B, H, T, S)
    np.testing.assert_allclose(calls[0].weights, own_self, rtol=0, atol=1e-7)
    np.testing.assert_allclose(calls[1].weights, own_cross, rtol=0, atol=1e-7)
    assert calls[0].weights.dtype == np.float32 and not calls[0].weights.flags.writeable
    assert calls[0].mask is None and calls[0].config == layer.get_config()
    assert calls_without_weights(calls) == []


def test_each_call_keeps_read_only_copies_of_its_inputs_key_being_the_value():
    layer = _attention("attention")
    x, memory = _inputs()
    with recording(find_attention_layers(layer)) as calls:
        layer(x, memory)
    inputs = calls[0].inputs
    assert sorted(inputs) == ["key", "query", "value"]
    np.testing.assert_array_equal(inputs["query"], x)
    np.testing.assert_array_equal(inputs["key"], memory)  # no key given: the value
    np.testing.assert_array_equal(inputs["value"], memory)
    assert not any(a.flags.writeable for a in inputs.values())


def test_the_mask_is_the_one_the_layer_applied():
    layer = _attention("attention")
    x, memory = _inputs()
    given = np.ones((B, T, S), bool)
    given[0, :, -1] = False  # sequence 0's last key is padding
    with recording(find_attention_layers(layer)) as calls:
        layer(x, x, use_causal_mask=True)  # causal only
        layer(x, memory, attention_mask=given)  # a padding mask
        layer(x, memory, attention_mask=given, use_causal_mask=True)  # both
    np.testing.assert_array_equal(
        calls[0].mask, np.broadcast_to(np.tri(T, T, dtype=bool), (B, T, T))
    )
    np.testing.assert_array_equal(calls[1].mask, given)
    np.testing.assert_array_equal(calls[2].mask, given & np.tri(T, S, dtype=bool))
    for call in calls:  # a blocked key gets exactly no weight
        np.testing.assert_array_equal(np.where(call.mask[:, None], 0, call.weights), 0)


def test_a_direct_compute_call_is_recorded_as_an_unknown_call():
    layer = _attention("attention")
    q = RNG.random((1, T, H, 3)).astype("float32")  # projected (B, T, N, key_dim)
    k = RNG.random((1, S, H, 3)).astype("float32")
    with recording(find_attention_layers(layer)) as calls:
        layer._compute_attention(q, k, k)  # outside `call`: no query/value to classify
    (call,) = calls
    assert call.kind == "unknown" and call.weights.shape == (1, H, T, S) and call.inputs == {}


def test_layers_are_put_back_exactly_as_they_were_also_after_an_error():
    plain, preset = _attention("plain"), _attention("preset")
    own_call = preset.call  # an instance attribute set before the recording
    object.__setattr__(preset, "call", own_call)
    layers = find_attention_layers(plain) + find_attention_layers(preset)
    before = [{k: vars(f.layer)[k] for k in PATCHED if k in vars(f.layer)} for f in layers]
    assert "call" not in before[0] and before[1]["call"] is own_call
    with pytest.raises(RuntimeError, match="boom"), recording(layers):
        assert all(name in vars(plain) for name in ("call", "_compute_attention"))
        raise RuntimeError("boom")
    after = [{k: vars(f.layer)[k] for k in PATCHED if k in vars(f.layer)} for f in layers]
    assert [sorted(a) for a in after] == [sorted(b) for b in before]
    assert all(a[k] is b[k] for a, b in zip(after, before, strict=True) for k in a)
    assert type(plain).call is keras.layers.MultiHeadAttention.call  # the class untouched


def test_flash_attention_is_off_while_recording_and_back_after():
    layer = _attention("flash", flash_attention=True)
    assert vars(layer)["_flash_attention"] is True
    with recording(find_attention_layers(layer)):
        assert layer._flash_attention is False
    assert vars(layer)["_flash_attention"] is True


def test_a_layer_that_hands_over_no_weights_is_reported():
    class Hidden(keras.layers.MultiHeadAttention):
        def _compute_attention(self, query, key, value, attention_mask=None, training=None,
                               return_attention_scores=False):  # fmt: skip
            output, _ = super()._compute_attention(query, key, value, attention_mask, training)
            return output, None  # a custom kernel that never materialises the weights

    layer = Hidden(H, 3, name="hidden")
    x, _ = _inputs()
    with recording(find_attention_layers(layer)) as calls:
        layer(x, x)
    assert calls_without_weights(calls) == calls and calls[0].weights is None


def test_weights_inside_a_compiled_graph_cannot_be_read():
    layer = _attention("graph")
    x, _ = _inputs()
    compiled = tf.function(lambda q: layer(q, q))
    assert issubclass(CaptureError, ValueError)
    # TensorFlow's autograph re-raises it while tracing, as its own error with this message
    message = "'graph' ran inside a compiled graph, where its weights are symbolic"
    with recording(find_attention_layers(layer)), pytest.raises(Exception, match=message) as error:
        compiled(x)
    assert "call an uncompiled copy" in str(error.value)
    assert "call" not in vars(layer)


@pytest.mark.parametrize("before", [False, True])
def test_eager_functions_runs_tf_functions_eagerly_then_restores(before):
    tf.config.run_functions_eagerly(before)
    try:
        with eager_functions():
            assert tf.config.functions_run_eagerly()
        assert tf.config.functions_run_eagerly() is before
        with pytest.raises(KeyError), eager_functions():
            raise KeyError("inside")
        assert tf.config.functions_run_eagerly() is before
    finally:
        tf.config.run_functions_eagerly(False)
