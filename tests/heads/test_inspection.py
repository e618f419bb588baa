"""Tests for heads/inspection (and heads/capture): any Keras model's attention, unchanged model.

Every test checks `inspect` against the layers' own `return_attention_scores=True` output for
the same inputs, and that the model's outputs, weights and attributes are the same afterwards.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from attnviz.core.masks import build_mask
from attnviz.drawing.model_view import inspection_view
from attnviz.heads import inspect
from attnviz.transformer.decoder import DecoderConfig, build_decoder

RNG = np.random.default_rng(21)
PATCHED = ("call", "_compute_attention", "_flash_attention")  # what inspect may shadow


# ---------------------------------------------------------------- helpers


def _attention_layers(model) -> list:
    return [
        layer
        for layer in model._flatten_layers(include_self=True, recursive=True)
        if isinstance(layer, keras.layers.MultiHeadAttention)
    ]


def _numpy(tree):
    return keras.tree.map_structure(lambda x: np.asarray(keras.ops.convert_to_numpy(x)), tree)


def _snapshot(model, run) -> dict:
    """A plain run's outputs, every variable's value, and the attention layers' own attributes."""
    layers = _attention_layers(model)
    return dict(
        outputs=keras.tree.flatten(_numpy(run())),
        variables=[np.array(v.numpy()) for v in model.variables],
        attributes=[{k: vars(a).get(k, "absent") for k in PATCHED} for a in layers],
    )


def _assert_unchanged(model, run, before: dict) -> None:
    after = _snapshot(model, run)
    for old, new in zip(before["outputs"], after["outputs"], strict=True):
        np.testing.assert_array_equal(new, old)
    for old, new in zip(before["variables"], after["variables"], strict=True):
        np.testing.assert_array_equal(new, old)
    for old, new in zip(before["attributes"], after["attributes"], strict=True):
        assert all(new[k] is old[k] for k in PATCHED), (old, new)
    assert not tf.config.functions_run_eagerly()


def _own_weights(model, run) -> list[tuple[object, np.ndarray, dict]]:
    """Each attention call's (layer, weights, kwargs) from the layer itself: record every call's
    arguments during a plain run, then call the layer directly on them with
    `return_attention_scores=True`. Independent of inspect's `_compute_attention` patch."""
    recorded = []
    layers = _attention_layers(model)
    for layer in layers:

        def record(*args, _layer=layer, _call=layer.call, **kwargs):
            recorded.append((_layer, args, kwargs))
            return _call(*args, **kwargs)

        object.__setattr__(layer, "call", record)
    try:
        run()
    finally:
        for layer in layers:
            vars(layer).pop("call")
    own = []
    for layer, args, kwargs in recorded:
        output = layer(*args, **{**kwargs, "return_attention_scores": True, "training": False})
        own.append((layer, np.asarray(output[1]), kwargs))
    return own


def _assert_matches_own(result, own) -> None:
    assert len(result.calls) == len(own)
    for call, (layer, weights, _) in zip(result.calls, own, strict=True):
        assert call.name == layer.name
        np.testing.assert_allclose(call.weights, weights, rtol=0, atol=1e-6)
        np.testing.assert_allclose(call.weights.sum(axis=-1), 1.0, atol=1e-5)


# ---------------------------------------------------------------- models built here


@pytest.fixture(scope="module")
def encoder():
    """Input tokens -> Embedding (0 = padding) -> self-attention -> Dense."""
    keras.utils.set_random_seed(1)
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    embedded = keras.layers.Embedding(20, 8, mask_zero=True, name="embed")(tokens)
    attended = keras.layers.MultiHeadAttention(2, 4, name="mha")(embedded, embedded)
    model = keras.Model(tokens, keras.layers.Dense(3)(attended), name="encoder")
    return model, np.array([[3, 7, 9, 0], [4, 5, 6, 7]], dtype="int32")


def test_small_encoder_equals_the_layers_own_weights(encoder):
    model, tokens = encoder
    before = _snapshot(model, lambda: model(tokens))
    result = inspect(model, tokens)
    embedded = model.get_layer("embed")(tokens)  # carries the padding mask, as in the model
    _, own = model.get_layer("mha")(embedded, embedded, return_attention_scores=True)
    (call,) = result.calls
    np.testing.assert_array_equal(call.weights, np.asarray(own))
    assert (call.key, call.path, call.kind, call.call_index) == ("mha", "mha", "self", 0)
    assert call.weights.shape == (2, 2, 4, 4) and not call.weights.flags.writeable
    real = tokens != 0
    np.testing.assert_array_equal(call.mask, real[:, :, None] & real[:, None, :])
    assert dict(call.config) == model.get_layer("mha").get_config()
    assert call.class_name.endswith("MultiHeadAttention")
    assert result.keys() == ("mha",) and result.weights["mha"] is call.weights
    # Outputs equal a plain run's, but for the padding query (its row is fully masked, where
    # Keras's fused kernel and its explicit softmax disagree)
    np.testing.assert_allclose(result.outputs[real], before["outputs"][0][real], atol=1e-6)
    _assert_unchanged(model, lambda: model(tokens), before)


def test_each_call_keeps_its_inputs_so_a_head_can_be_recomputed(encoder):
    model, tokens = encoder
    call = inspect(model, tokens)["mha"]
    embedded = np.asarray(model.get_layer("embed")(tokens))  # (B, T, D)
    assert sorted(call.inputs) == ["key", "query", "value"]
    for name in ("query", "key", "value"):  # called as mha(x, x): key defaults to the value
        np.testing.assert_array_equal(call.inputs[name], embedded)
        assert not call.inputs[name].flags.writeable
    layer = model.get_layer("mha")
    q = np.einsum("btd,dhk->bhtk", call.inputs["query"], np.asarray(layer.query_dense.kernel))
    q += np.asarray(layer.query_dense.bias)[:, None]  # (H, Dk) per head
    k = np.einsum("bsd,dhk->bhsk", call.inputs["key"], np.asarray(layer.key_dense.kernel))
    k += np.asarray(layer.key_dense.bias)[:, None]
    scores = np.where(call.mask[:, None], q @ k.transpose(0, 1, 3, 2) / 2.0, -np.inf)  # /√4
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)  # (B, H, T, S); NaN rows for padding queries
    for b, real in enumerate(tokens != 0):  # the real query rows
        np.testing.assert_allclose(call.weights[b][:, real], weights[b][:, real], atol=1e-5)


def test_the_model_view_draws_an_inspection(encoder):
    model, tokens = encoder
    result = inspect(model, tokens)
    fig = inspection_view(result, item=0, row_labels=list("abcd"), col_labels=list("abcd"))
    values = [t for t in fig.data if t.coloraxis == "coloraxis"]
    assert len(values) == 2 and fig.layout.annotations[0].text == "mha"
    z = np.asarray(values[1].z, dtype=float)
    allowed = result["mha"].mask[0]
    np.testing.assert_allclose(z[allowed], result["mha"].weights[0, 1][allowed], atol=1e-7)
    assert np.isnan(z[~allowed]).all()  # masked and exactly 0: drawn grey


def test_attnviz_decoder_self_and_cross_attention():
    sizes = dict(vocab_size=10, sequence_length=4, h=2, d_k=4, d_v=3, d_model=8, d_ff=16, n=2)
    decoder = build_decoder(DecoderConfig(**sizes))
    tokens = RNG.integers(0, 10, size=(2, 4)).astype("int32")
    memory = RNG.random((2, 3, 8)).astype("float32")
    target_pad = np.array([[1, 1, 1, 0], [1, 1, 1, 1]]) == 1
    self_mask = build_mask(2, 4, 4, causal=True, key_padding_mask=target_pad)  # (B, T, T)
    cross_mask = build_mask(2, 4, 3, key_padding_mask=np.array([[1, 1, 0], [1, 1, 1]]) == 1)
    run = lambda: decoder(tokens, memory, self_mask, cross_mask, training=False)  # noqa: E731
    output, own_self, own_cross = run()  # the decoder returns its layers' own weights
    before = _snapshot(decoder, run)
    masks = dict(lookahead_mask=self_mask, padding_mask=cross_mask)
    result = inspect(decoder, tokens, encoder_output=memory, **masks)
    assert result.keys() == (
        "decoder_layer_0/self_attention",
        "decoder_layer_0/cross_attention",
        "decoder_layer_1/self_attention",
        "decoder_layer_1/cross_attention",
    )
    assert [c.kind for c in result.calls] == ["self", "cross", "self", "cross"]
    own = [own_self[0], own_cross[0], own_self[1], own_cross[1]]
    for call, weights in zip(result.calls, own, strict=True):
        np.testing.assert_array_equal(call.weights, np.asarray(weights))
        np.testing.assert_array_equal(call.mask, self_mask if call.kind == "self" else cross_mask)
    np.testing.assert_array_equal(result.outputs[0], np.asarray(output))
    stack = result.layer_stack("self", item=1)
    assert stack.keys == result.keys()[::2] and stack.weights.shape == (2, 2, 4, 4)
    np.testing.assert_array_equal(stack.weights[1], np.asarray(own_self[1])[1])
    _assert_unchanged(decoder, run, before)
    assert len(inspection_view(result, kind="cross").data) >= 4  # one grid per kind


def test_functional_model_with_two_attention_blocks():
    keras.utils.set_random_seed(2)
    x_in, m_in = keras.Input((5, 8), name="x"), keras.Input((3, 8), name="memory")
    mha1 = keras.layers.MultiHeadAttention(2, 4, name="block1_self")
    mha2 = keras.layers.MultiHeadAttention(3, 2, name="block2_cross")
    hidden = keras.layers.LayerNormalization()(x_in + mha1(x_in, x_in, use_causal_mask=True))
    out = keras.layers.Dense(4)(mha2(hidden, m_in))
    model = keras.Model([x_in, m_in], out)
    x, memory = RNG.random((2, 5, 8)).astype("float32"), RNG.random((2, 3, 8)).astype("float32")
    before = _snapshot(model, lambda: model([x, memory]))
    result = inspect(model, [x, memory])
    h = keras.Model([x_in, m_in], hidden)([x, memory])  # block 2's query, computed separately
    own1 = mha1(x, x, use_causal_mask=True, return_attention_scores=True)[1]
    own2 = mha2(h, memory, return_attention_scores=True)[1]
    first, second = result.calls
    np.testing.assert_allclose(first.weights, np.asarray(own1), rtol=0, atol=1e-7)
    np.testing.assert_allclose(second.weights, np.asarray(own2), rtol=0, atol=1e-6)
    assert [(c.key, c.kind) for c in result.calls] == [
        ("block1_self", "self"), ("block2_cross", "cross"),
    ]  # fmt: skip
    np.testing.assert_array_equal(first.mask, np.broadcast_to(np.tri(5, dtype=bool), (2, 5, 5)))
    np.testing.assert_array_equal(np.triu(first.weights, k=1), 0.0)
    assert second.mask is None and second.weights.shape == (2, 3, 5, 3)
    np.testing.assert_allclose(result.outputs, before["outputs"][0], atol=1e-6)
    _assert_unchanged(model, lambda: model([x, memory]), before)


def test_a_layer_called_twice_appears_twice():
    keras.utils.set_random_seed(3)
    x_in = keras.Input((4, 6))
    shared = keras.layers.MultiHeadAttention(2, 3, name="shared")
    model = keras.Model(x_in, shared(shared(x_in, x_in), x_in))  # self, then cross
    x = RNG.random((1, 4, 6)).astype("float32")
    before = _snapshot(model, lambda: model(x))
    result = inspect(model, x)
    assert [(c.key, c.path, c.call_index, c.kind) for c in result.calls] == [
        ("shared", "shared", 0, "self"), ("shared#1", "shared", 1, "cross"),
    ]  # fmt: skip
    _assert_matches_own(result, _own_weights(model, lambda: model(x)))
    _assert_unchanged(model, lambda: model(x), before)


@keras.saving.register_keras_serializable(package="attnviz_tests")
class TemperatureAttention(keras.layers.MultiHeadAttention):
    """Softer attention: the queries are divided by a temperature before scoring."""

    def __init__(self, temperature: float = 2.0, **kwargs):
        super().__init__(**kwargs)
        self.temperature = temperature

    def _compute_attention(
        self, query, key, value, attention_mask=None, training=None, return_attention_scores=False
    ):
        return super()._compute_attention(
            query / self.temperature, key, value, attention_mask, training, return_attention_scores
        )

    def get_config(self):
        return {**super().get_config(), "temperature": self.temperature}


class Block(keras.layers.Layer):
    def __init__(self, causal: bool, **kwargs):
        super().__init__(**kwargs)
        self.causal = causal
        self.attention = TemperatureAttention(num_heads=2, key_dim=4, name="attention")
        self.norm = keras.layers.LayerNormalization()

    def call(self, x, attention_mask=None):
        attended = self.attention(x, x, attention_mask=attention_mask, use_causal_mask=self.causal)
        return self.norm(x + attended)


class TinyModel(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embed = keras.layers.Embedding(12, 8)
        self.blocks = [Block(True, name="block_0"), Block(False, name="block_1")]
        self.out = keras.layers.Dense(12)

    def call(self, tokens, padding_mask=None):
        x = self.embed(tokens)
        mask = None if padding_mask is None else padding_mask[:, None, :]  # (B, 1, S)
        for block in self.blocks:
            x = block(x, attention_mask=mask)
        return self.out(x)


def test_subclassed_attention_inside_a_subclassed_model():
    keras.utils.set_random_seed(4)
    model = TinyModel()
    tokens = RNG.integers(0, 12, size=(2, 5)).astype("int32")
    pad = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=bool)
    run = lambda: model(tokens, padding_mask=pad)  # noqa: E731
    before = _snapshot(model, run)
    result = inspect(model, tokens, padding_mask=pad)
    assert result.keys() == ("block_0/attention", "block_1/attention")
    assert all(c.kind == "self" and c.config["temperature"] == 2.0 for c in result.calls)
    assert result.calls[0].class_name.endswith("TemperatureAttention")
    _assert_matches_own(result, _own_weights(model, run))
    causal = np.tri(5, dtype=bool)
    np.testing.assert_array_equal(result.calls[0].mask, pad[:, None, :] & causal)
    np.testing.assert_array_equal(result.calls[1].mask, np.broadcast_to(pad[:, None, :], (2, 5, 5)))
    _assert_unchanged(model, run, before)


def test_flash_attention_is_turned_off_for_the_run_and_back_on_after():
    keras.utils.set_random_seed(7)
    x_in = keras.Input((4, 6))
    flash = keras.layers.MultiHeadAttention(2, 3, flash_attention=True, name="flash")
    model = keras.Model(x_in, flash(x_in, x_in))  # TensorFlow has no flash kernel to run it
    x = RNG.random((1, 4, 6)).astype("float32")
    result = inspect(model, x)
    twin = keras.layers.MultiHeadAttention(2, 3, name="twin")
    twin.build((None, 4, 6), (None, 4, 6))
    twin.set_weights(flash.get_weights())
    own = twin(x, x, return_attention_scores=True)[1]
    np.testing.assert_allclose(result["flash"].weights, np.asarray(own), rtol=0, atol=1e-7)
    assert vars(flash)["_flash_attention"] is True and "call" not in vars(flash)


def test_a_model_whose_call_is_a_tf_function_runs_the_recording_eagerly():
    class Compiled(keras.Model):
        def __init__(self):
            super().__init__()
            self.attention = keras.layers.MultiHeadAttention(2, 3, name="attention")

        @tf.function
        def call(self, x):
            return self.attention(x, x)

    model, x = Compiled(), RNG.random((1, 4, 6)).astype("float32")
    before = _snapshot(model, lambda: model(x))  # traces the graph, without the recording
    result = inspect(model, x)
    own = model.attention(x, x, return_attention_scores=True)[1]
    _assert_matches_own(result, [(model.attention, np.asarray(own), {})])
    assert model.call.experimental_get_tracing_count() == 1  # no graph traced with the patches
    _assert_unchanged(model, lambda: model(x), before)


# ---------------------------------------------------------------- keras-hub backbones


def _hub_inputs(with_segments: bool) -> dict:
    token_ids = RNG.integers(1, 30, size=(2, 6)).astype("int32")
    padding = np.array([[1, 1, 1, 1, 0, 0], [1] * 6], dtype="int32")
    inputs = {"token_ids": token_ids * padding, "padding_mask": padding}
    return inputs | ({"segment_ids": np.zeros((2, 6), "int32")} if with_segments else {})


def test_keras_hub_bert_backbone():
    keras_hub = pytest.importorskip("keras_hub")
    keras.utils.set_random_seed(5)
    sizes = dict(vocabulary_size=30, num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=16)
    bert = keras_hub.models.BertBackbone(**sizes, max_sequence_length=12)
    inputs = _hub_inputs(with_segments=True)
    before = _snapshot(bert, lambda: bert(inputs))
    result = inspect(bert, inputs)
    assert result.keys() == (
        "transformer_layer_0/self_attention_layer", "transformer_layer_1/self_attention_layer",
    )  # fmt: skip
    assert [c.kind for c in result.calls] == ["self", "self"]
    _assert_matches_own(result, _own_weights(bert, lambda: bert(inputs)))
    keys = inputs["padding_mask"].astype(bool)[:, None, :]  # (B, 1, S): padding keys masked
    for call in result.calls:
        np.testing.assert_array_equal(call.mask, np.broadcast_to(keys, (2, 6, 6)))
    np.testing.assert_allclose(
        result.outputs["sequence_output"], before["outputs"][1], atol=1e-5
    )  # flatten sorts the dict: pooled_output, sequence_output
    _assert_unchanged(bert, lambda: bert(inputs), before)


def test_keras_hub_gpt2_backbone():
    keras_hub = pytest.importorskip("keras_hub")
    keras.utils.set_random_seed(6)
    sizes = dict(vocabulary_size=30, num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=16)
    gpt2 = keras_hub.models.GPT2Backbone(**sizes, max_sequence_length=12)
    inputs = _hub_inputs(with_segments=False)
    before = _snapshot(gpt2, lambda: gpt2(inputs))
    result = inspect(gpt2, inputs)
    assert result.keys() == (
        "transformer_layer_0/self_attention", "transformer_layer_1/self_attention",
    )  # fmt: skip
    assert all(c.class_name.endswith("CachedMultiHeadAttention") for c in result.calls)
    own = _own_weights(gpt2, lambda: gpt2(inputs))
    _assert_matches_own(result, own)
    causal_and_padding = np.tri(6, dtype=bool) & inputs["padding_mask"].astype(bool)[:, None, :]
    for call, (_, _, kwargs) in zip(result.calls, own, strict=True):
        np.testing.assert_array_equal(call.mask, causal_and_padding)
        np.testing.assert_array_equal(call.mask, np.asarray(kwargs["attention_mask"]) == 1)
        np.testing.assert_array_equal(np.triu(call.weights, k=1), 0.0)
    np.testing.assert_allclose(result.outputs, before["outputs"][0], atol=1e-5)
    _assert_unchanged(gpt2, lambda: gpt2(inputs), before)


# ---------------------------------------------------------------- errors


def test_not_a_keras_model_or_no_attention_is_rejected():
    with pytest.raises(ValueError, match="must be a Keras 3 model or layer.*Received: 'bert'"):
        inspect("bert", np.zeros((1, 3)))
    dense = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="holds no keras.layers.MultiHeadAttention"):
        inspect(dense, np.zeros((1, 3)))


def test_unbuilt_models_and_training_mode_are_rejected(encoder):
    with pytest.raises(ValueError, match="is not built: .* Call it once on example inputs"):
        inspect(TinyModel(), np.zeros((1, 3), "int32"))
    model, tokens = encoder
    with pytest.raises(ValueError, match="`training` may only be False"):
        inspect(model, tokens, training=True)


def test_inputs_the_model_rejects_are_reported_and_the_model_restored(encoder):
    model, tokens = encoder
    before = _snapshot(model, lambda: model(tokens))
    with pytest.raises(ValueError, match="could not run on `inputs`. Keras said: .*tokens") as info:
        inspect(model, {"wrong_name": tokens})
    assert "Received inputs: {'wrong_name': '(2, 4) int32'}" in str(info.value)
    _assert_unchanged(model, lambda: model(tokens), before)


class HandRolledAttention(keras.layers.MultiHeadAttention):
    """Overrides `call` and never reaches `_compute_attention`."""

    def call(self, query, value, key=None, **kwargs):
        return query


def test_layers_that_hide_their_weights_or_never_run_are_reported():
    x_in = keras.Input((3, 4))
    hidden = HandRolledAttention(1, 2, name="hand")
    hidden.build((None, 3, 4), (None, 3, 4))
    model = keras.Model(x_in, hidden(x_in, x_in))
    with pytest.raises(ValueError, match="ran without handing their weights .*hand"):
        inspect(model, np.zeros((1, 3, 4), "float32"))
    assert "call" not in vars(hidden) and "_compute_attention" not in vars(hidden)

    class Bypass(keras.Model):
        def __init__(self):
            super().__init__()
            self.attention = keras.layers.MultiHeadAttention(1, 2, name="unused")
            self.dense = keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    bypass = Bypass()
    bypass.attention.build((None, 3, 4), (None, 3, 4))
    bypass(np.zeros((1, 3, 4), "float32"))
    with pytest.raises(ValueError, match="None of the model's attention layers \\(unused\\) ran"):
        inspect(bypass, np.zeros((1, 3, 4), "float32"))


def test_the_package_exports_resolve():
    import attnviz.heads

    for name in attnviz.heads.__all__:
        assert getattr(attnviz.heads, name) is not None
    assert attnviz.heads.inspect is inspect and callable(inspect)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        attnviz.heads.nope  # noqa: B018


def test_result_lookups_and_stacks_explain_their_errors(encoder):
    model, tokens = encoder
    result = inspect(model, tokens)
    with pytest.raises(KeyError, match="No attention call 'nope'. The calls are: mha"):
        result["nope"]
    with pytest.raises(ValueError, match="No attention call matches kind='cross'.*mha \\(self\\)"):
        result.layer_stack("cross")
    with pytest.raises(ValueError, match="`item` must be from 0 to 1"):
        result.layer_stack(item=2)
    assert len(result) == 1 and result.layer_stack(keys="mha").keys == ("mha",)
