"""Tests for heads/inspection: the public API on models built with Keras's MultiHeadAttention,
the model left unchanged, keys, stacks and errors.

Each test checks `inspect` against the layers' own `return_attention_scores=True` output for the
same inputs (in the rows where some key is allowed: in a fully masked row Keras's fused kernel,
which a plain run uses, spreads the weights evenly while `return_attention_scores` gives zeros),
and that the model's outputs, variables and attributes are exactly the same afterwards.
Keras's other attention layers: test_inspection_keras.py; keras-hub: test_inspection_hub.py.
"""

from __future__ import annotations

import re

import keras
import numpy as np
import pytest
import tensorflow as tf
from app_support import grid_blocks
from inspection_support import inspected

from attnviz.core.masks import build_mask
from attnviz.drawing.model_view import inspection_view
from attnviz.heads import AttentionCalls, InspectionWarning, inspect
from attnviz.heads.layouts import ProductAxes, Roles
from attnviz.transformer.decoder import DecoderConfig, build_decoder, run_decoder

RNG = np.random.default_rng(21)
KERAS_SETS = {"_return_attention_scores", "_called", "_parent_path"}  # Keras sets these in calls


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
    """A plain run's outputs, every variable's value, and every layer's own attributes."""
    outputs = keras.tree.flatten(_numpy(run()))  # builds the model if needed: before the list
    layers = model._flatten_layers(include_self=True, recursive=True)
    return dict(
        outputs=outputs,
        variables=[np.array(v.numpy()) for v in model.variables],
        attributes=[dict(vars(layer)) for layer in layers],
    )


def _assert_unchanged(model, run, before: dict) -> None:
    after = _snapshot(model, run)
    for old, new in zip(before["outputs"], after["outputs"], strict=True):
        np.testing.assert_array_equal(new, old)
    for old, new in zip(before["variables"], after["variables"], strict=True):
        np.testing.assert_array_equal(new, old)
    for old, new in zip(before["attributes"], after["attributes"], strict=True):
        assert old.keys() == new.keys()
        changed = [k for k in old if new[k] is not old[k] and k not in KERAS_SETS]
        assert not changed, changed
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
    """Each call's weights equal the layer's own in every row with an allowed key."""
    assert len(result.calls) == len(own)
    for call, (layer, weights, _) in zip(result.calls, own, strict=True):
        assert call.name == layer.name
        rows = call.head_masks.any(axis=-1)  # (B, H, T): rows with an allowed key
        np.testing.assert_allclose(call.weights[rows], weights[rows], rtol=0, atol=1e-6)
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
    result = inspected(model, tokens)
    embedded = model.get_layer("embed")(tokens)  # carries the padding mask, as in the model
    _, own = model.get_layer("mha")(embedded, embedded, return_attention_scores=True)
    (call,) = result.calls
    real = tokens != 0
    allowed = real[:, :, None] & real[:, None, :]  # (B, T, S): Keras masks padded queries too
    np.testing.assert_array_equal(call.mask, allowed)
    rows = allowed.any(axis=-1)  # (B, T): the real queries
    np.testing.assert_allclose(
        call.weights.transpose(0, 2, 1, 3)[rows],
        np.asarray(own).transpose(0, 2, 1, 3)[rows],
        rtol=0,
        atol=1e-6,
    )
    # The padded query row: every key masked; the fused kernel of the plain run spreads it evenly
    np.testing.assert_allclose(call.weights[0, :, 3], 0.25, atol=1e-7)
    assert (call.key, call.path, call.kind, call.call_index) == ("mha", "mha", "self", 0)
    assert call.weights.shape == (2, 2, 4, 4) and not call.weights.flags.writeable
    assert call.head_mask is None and call.kv_heads == (0, 1) and call.position.name == "none"
    assert dict(call.config) == model.get_layer("mha").get_config()
    assert call.class_name.endswith("MultiHeadAttention")
    assert result.keys() == ("mha",) and result.weights["mha"] is call.weights
    np.testing.assert_array_equal(result.outputs, before["outputs"][0])  # exactly a plain run
    assert result.warnings == ()
    _assert_unchanged(model, lambda: model(tokens), before)


def test_each_call_keeps_its_inputs_so_a_head_can_be_recomputed(encoder):
    model, tokens = encoder
    call = inspected(model, tokens)["mha"]
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
    with np.errstate(invalid="ignore"):  # a padding query's row is all -inf: NaN, not compared
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)  # (B, H, T, S); NaN rows for padding queries
    for b, real in enumerate(tokens != 0):  # the real query rows
        np.testing.assert_allclose(call.weights[b][:, real], weights[b][:, real], atol=1e-5)


def test_the_model_view_draws_an_inspection(encoder):
    model, tokens = encoder
    result = inspected(model, tokens)
    fig = inspection_view(result, item=0, row_labels=list("abcd"), col_labels=list("abcd"))
    (values,) = [t for t in fig.data if t.coloraxis == "coloraxis"]  # every head, one heatmap
    said = r"checked against the layer's output: exact( to \de-\d+)?"
    assert re.fullmatch(f"mha · {said}", fig.layout.annotations[0].text)  # the layer's title
    x_in = keras.Input((3, 4))
    for heads, name in ((1, "one_head_is_too_narrow"), (8, "eight_heads_have_room")):
        mha = keras.layers.MultiHeadAttention(heads, 2, name=name)
        small = inspected(keras.Model(x_in, mha(x_in, x_in)), RNG.random((1, 3, 4)))
        title = inspection_view(small).layout.annotations[0]
        if heads == 1:  # the sentence would not fit: said in brief, whole in the hover
            assert re.fullmatch(rf"{name} · checked: exact( to \de-\d+)?", title.text)
            assert re.fullmatch(said, title.hovertext)
        else:
            assert re.fullmatch(f"{name} · {said}", title.text) and title.hovertext is None
    z = grid_blocks(values.z, 1, 2)[0, 1]  # (T, S) head 1
    allowed = result["mha"].mask[0]
    np.testing.assert_allclose(z[allowed], result["mha"].weights[0, 1][allowed], atol=1e-7)
    assert np.isnan(z[:3][~allowed[:3]]).all()  # real queries' masked keys: exactly 0, grey


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
    result = inspected(decoder, tokens, encoder_output=memory, **masks)
    assert result.keys() == (
        "decoder_layer_0/self_attention",
        "decoder_layer_0/cross_attention",
        "decoder_layer_1/self_attention",
        "decoder_layer_1/cross_attention",
    )
    assert [c.kind for c in result.calls] == ["self", "cross", "self", "cross"]
    assert [c.layer for c in result.calls] == [0, 0, 1, 1]  # the n-th call of its kind
    # one trace type: the seeded decoder's own run gives the same calls, keys and weights
    sizes.pop("sequence_length")
    ran = run_decoder(tokens, memory, target_padding_mask=target_pad,
                      source_padding_mask=cross_mask[:, 0], **sizes).attention  # fmt: skip
    assert isinstance(result, AttentionCalls) and ran.keys() == result.keys()
    for call, again in zip(result.calls, ran.calls, strict=True):
        assert (call.kind, call.layer, call.way) == (again.kind, again.layer, None)
        np.testing.assert_allclose(call.weights, again.weights, atol=1e-6)
    own = [own_self[0], own_cross[0], own_self[1], own_cross[1]]
    for call, weights in zip(result.calls, own, strict=True):  # the layers' explicit softmax
        np.testing.assert_array_equal(call.weights, np.asarray(weights))
        np.testing.assert_array_equal(call.mask, self_mask if call.kind == "self" else cross_mask)
        assert call.logits.shape == call.weights.shape and call.query_heads.shape[-1] == 4
    np.testing.assert_array_equal(result.outputs[0], np.asarray(output))
    stack = result.layer_stack("self", item=1)
    assert stack.keys == result.keys()[::2] and stack.weights.shape == (2, 2, 4, 4)
    np.testing.assert_array_equal(stack.weights[1], np.asarray(own_self[1])[1])
    _assert_unchanged(decoder, run, before)
    cross = inspection_view(result, kind="cross")
    (values,) = [t for t in cross.data if t.coloraxis == "coloraxis"]
    np.testing.assert_allclose(  # the cross calls only: 2 layers × 2 heads of 4 × 3
        np.nan_to_num(grid_blocks(values.z, 2, 2)),
        result.layer_stack("cross", item=0).weights,
        atol=1e-7,
    )


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
    result = inspected(model, [x, memory])
    h = keras.Model([x_in, m_in], hidden)([x, memory])  # block 2's query, computed separately
    own1 = mha1(x, x, use_causal_mask=True, return_attention_scores=True)[1]
    own2 = mha2(h, memory, return_attention_scores=True)[1]
    first, second = result.calls
    np.testing.assert_allclose(first.weights, np.asarray(own1), rtol=0, atol=1e-6)
    np.testing.assert_allclose(second.weights, np.asarray(own2), rtol=0, atol=1e-6)
    assert [(c.key, c.kind) for c in result.calls] == [
        ("block1_self", "self"), ("block2_cross", "cross"),
    ]  # fmt: skip
    np.testing.assert_array_equal(first.mask, np.broadcast_to(np.tri(5, dtype=bool), (2, 5, 5)))
    np.testing.assert_array_equal(np.triu(first.weights, k=1), 0.0)
    assert second.mask is None and second.weights.shape == (2, 3, 5, 3)
    np.testing.assert_array_equal(result.outputs, before["outputs"][0])
    _assert_unchanged(model, lambda: model([x, memory]), before)


def test_a_layer_called_twice_appears_twice():
    keras.utils.set_random_seed(3)
    x_in = keras.Input((4, 6))
    shared = keras.layers.MultiHeadAttention(2, 3, name="shared")
    model = keras.Model(x_in, shared(shared(x_in, x_in), x_in))  # self, then cross
    x = RNG.random((1, 4, 6)).astype("float32")
    before = _snapshot(model, lambda: model(x))
    result = inspected(model, x)
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
    result = inspected(model, tokens, padding_mask=pad)
    assert result.keys() == ("block_0/attention", "block_1/attention")
    assert all(c.kind == "self" and c.config["temperature"] == 2.0 for c in result.calls)
    assert result.calls[0].class_name.endswith("TemperatureAttention")
    _assert_matches_own(result, _own_weights(model, run))
    causal = np.tri(5, dtype=bool)
    np.testing.assert_array_equal(result.calls[0].mask, pad[:, None, :] & causal)
    np.testing.assert_array_equal(result.calls[1].mask, np.broadcast_to(pad[:, None, :], (2, 5, 5)))
    _assert_unchanged(model, run, before)


def _padded_encoder(dropout: float):
    """A model as a user writes one: Embedding(mask_zero=True) -> MultiHeadAttention."""
    keras.utils.set_random_seed(5)
    tokens = keras.Input((None,), dtype="int32")
    embedded = keras.layers.Embedding(20, 8, mask_zero=True, name="embed")(tokens)
    mha = keras.layers.MultiHeadAttention(2, 4, dropout=dropout, name="mha")
    return keras.Model(tokens, mha(embedded, embedded)), mha


@pytest.mark.parametrize("dropout", [0.0, 0.1], ids=["fused-kernel", "masked-softmax"])
def test_a_fully_masked_query_row_is_recorded_as_the_layer_used_it(dropout):
    # Keras's MultiHeadAttention at inference without dropout calls ops.dot_product_attention,
    # whose softmax spreads a row with no allowed key evenly; with dropout it uses its masked
    # Softmax layer, which zeroes that row. The layer's own output at the padded query tells.
    model, mha = _padded_encoder(dropout)
    tokens = np.array([[3, 7, 9, 0], [4, 5, 6, 7]], dtype="int32")  # query 3 of item 0: padding
    call = inspected(model, tokens)["mha"]
    assert not call.mask[0, 3].any()  # its row: every key masked
    embedded = np.asarray(model.get_layer("embed")(tokens), dtype=np.float64)  # (B, T, D)
    kernel = lambda dense: np.asarray(dense.kernel, dtype=np.float64)  # noqa: E731
    values = np.einsum("sd,dhv->hsv", embedded[0], kernel(mha.value_dense))
    values += np.asarray(mha.value_dense.bias)[:, None]  # (H, S, Dv)
    used = np.full((2, 4), 0.25) if dropout == 0.0 else np.zeros((2, 4))  # (H, S) that row
    np.testing.assert_allclose(call.weights[0, :, 3], used, rtol=0, atol=1e-7)
    expected = np.einsum("hs,hsv,hvd->d", used, values, kernel(mha.output_dense))
    expected += np.asarray(mha.output_dense.bias)  # (D,) the layer's output at that query
    np.testing.assert_allclose(np.asarray(model(tokens))[0, 3], expected, rtol=0, atol=1e-6)
    assert call.verified.against == "the layer's output"


def test_a_capture_that_misreads_the_padded_row_would_say_so():
    # the check is not a tautology: the other softmax's row (zeros for the fused kernel's
    # even weights) recomputes an output that differs from the layer's
    from attnviz.heads.verification import Onward, verify

    model, mha = _padded_encoder(0.0)
    tokens = np.array([[3, 7, 9, 0]], dtype="int32")
    call = inspected(model, tokens)["mha"]
    misread = np.array(call.weights)
    misread[0, :, 3] = 0.0  # what Keras's masked Softmax would have used
    product = np.einsum("bhts,bhsv->bthv", call.weights, call.value_heads)  # as the layer laid it
    axes = ProductAxes(("bhts", "bshv"), "bthv")
    onward = Onward(product, axes, Roles(0, 1, "bh", "t", "s"), scope=None)
    assert verify(call.weights, call.value_heads, onward).difference < 1e-6
    wrong = verify(misread, call.value_heads, onward)
    assert wrong.checked and not wrong.agrees() and "DIFFERS" in wrong.describe()


def test_attention_over_an_images_rows_and_columns_is_recorded():
    # MultiHeadAttention(attention_axes=(1, 2)) computes its softmax over two axes with
    # exp(x − logsumexp(x)): no Softmax op. Queries and keys are the H·W pixels, row-major.
    keras.utils.set_random_seed(6)
    image = keras.Input((3, 4, 5))
    mha = keras.layers.MultiHeadAttention(2, 4, attention_axes=(1, 2), name="pixels")
    model = keras.Model(image, keras.layers.Dense(2)(mha(image, image)))
    x = RNG.random((2, 3, 4, 5)).astype("float32")
    before = _snapshot(model, lambda: model(x))
    call = inspected(model, x)["pixels"]
    _, own = mha(x, x, return_attention_scores=True)  # (B, N, H, W, H, W)
    assert call.weights.shape == (2, 2, 12, 12) and call.kind == "self"
    np.testing.assert_allclose(call.weights, np.reshape(own, (2, 2, 12, 12)), atol=1e-6)
    q = np.einsum("bhwc,cnk->bnhwk", x, np.asarray(mha.query_dense.kernel))
    q = (q + np.asarray(mha.query_dense.bias)[:, None, None]) / 2.0  # Keras scales Q by 1/√4
    np.testing.assert_allclose(call.query_heads, q.reshape(2, 2, 12, 4), atol=1e-6)
    assert call.verified.against == "the layer's output"
    _assert_unchanged(model, lambda: model(x), before)


def test_a_flash_attention_layer_is_reported_as_tensorflow_reports_it():
    # TensorFlow has no flash kernel: a plain call fails, and so does inspect, saying what to do
    keras.utils.set_random_seed(7)
    x_in = keras.Input((4, 6))
    flash = keras.layers.MultiHeadAttention(2, 3, flash_attention=True, name="flash")
    model = keras.Model(x_in, flash(x_in, x_in))
    with pytest.raises(ValueError, match="Flash attention is not supported.*flash_attention=False"):
        inspect(model, RNG.random((1, 4, 6)).astype("float32"))
    assert vars(flash)["_flash_attention"] is True


def test_a_model_whose_call_is_a_tf_function_runs_the_recording_eagerly():
    class Compiled(keras.Model):
        def __init__(self):
            super().__init__()
            self.attention = keras.layers.MultiHeadAttention(2, 3, name="attention")

        @tf.function
        def call(self, x):
            return self.attention(x, x)

    model, x = Compiled(), RNG.random((1, 4, 6)).astype("float32")
    before = _snapshot(model, lambda: model(x))  # traces the graph once
    result = inspected(model, x)  # the graph hides its ops: rerun once with functions eager
    own = model.attention(x, x, return_attention_scores=True)[1]
    _assert_matches_own(result, [(model.attention, np.asarray(own), {})])
    assert model.call.experimental_get_tracing_count() == 1  # no graph traced for inspect
    _assert_unchanged(model, lambda: model(x), before)


# ---------------------------------------------------------------- errors


def test_not_a_keras_model_or_no_attention_is_rejected():
    with pytest.raises(ValueError, match="must be a Keras 3 model or layer.*Received: 'bert'"):
        inspect("bert", np.zeros((1, 3)))
    dense = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="computed no attention on these inputs: no softmax"):
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


class ScoresOnly(keras.layers.MultiHeadAttention):
    """Overrides `call`: a softmax over keys that never weighs values (not attention)."""

    def call(self, query, value, key=None, **kwargs):
        scores = keras.ops.einsum("btd,bsd->bts", query, value)
        return keras.ops.softmax(scores, axis=-1)


def test_layers_that_hide_their_weights_or_never_run_are_reported():
    x_in = keras.Input((3, 4))
    hidden = ScoresOnly(1, 2, name="hand")
    hidden.build((None, 3, 4), (None, 3, 4))
    model = keras.Model(x_in, hidden(x_in, x_in))
    with pytest.raises(ValueError, match="no softmax over keys weighed.*'hand'.*never weighed"):
        inspect(model, np.zeros((1, 3, 4), "float32"))

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
    with pytest.raises(ValueError, match="Its attention layers \\(unused\\) did not run"):
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
    result = inspected(model, tokens)
    with pytest.raises(KeyError, match="No attention call 'nope'. The calls are: mha"):
        result["nope"]
    with pytest.raises(ValueError, match="No attention call matches kind='cross'.*mha \\(self\\)"):
        result.layer_stack("cross")
    with pytest.raises(ValueError, match="`item` must be from 0 to 1"):
        result.layer_stack(item=2)
    assert len(result) == 1 and result.layer_stack(keys="mha").keys == ("mha",)


class LinearAttention(keras.layers.Layer):
    """Linear attention: keys and values summed with a feature map, no softmax over keys."""

    def call(self, x):
        features = keras.ops.elu(x) + 1.0
        context = keras.ops.einsum("bsd,bse->bde", features, x)  # (B, D, D)
        return keras.ops.einsum("btd,bde->bte", features, context)


def test_attention_that_cannot_be_read_is_named_in_a_warning():
    keras.utils.set_random_seed(10)
    x_in = keras.Input((4, 6))
    hidden = keras.layers.MultiHeadAttention(2, 3, name="mha")(x_in, x_in)
    model = keras.Model(x_in, LinearAttention(name="linear")(hidden))
    x = RNG.random((1, 4, 6)).astype("float32")
    said = "'linear' \\(LinearAttention\\) ran, but no softmax"
    with pytest.warns(InspectionWarning, match=said):
        result = inspected(model, x)
    assert result.keys() == ("mha",) and len(result.warnings) == 1
