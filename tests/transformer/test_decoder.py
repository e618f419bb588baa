"""Tests for decoder: the tutorial's Transformer decoder, its shapes, masks and heads."""

import keras
import numpy as np
import pytest

from attnviz.core.ways import way_mask
from attnviz.inputs.text import positional_encoding
from attnviz.transformer.decoder import Decoder, DecoderConfig, build_decoder, run_decoder
from attnviz.transformer.decoder_forward import LAYER_KEYS, draw_weights, keras_weights
from attnviz.transformer.multihead import compute_multihead

RNG = np.random.default_rng(11)
SMALL = {"h": 2, "d_k": 4, "d_v": 3, "d_model": 8, "d_ff": 16, "n": 2, "vocab_size": 10}


@pytest.fixture(scope="module")
def seed_example():
    """The tutorial's test: batch 64, 5 tokens, vocabulary 20, d_model 512, d_ff 2048, 6 layers."""
    tokens = RNG.integers(0, 20, size=(64, 5))
    encoder_output = RNG.random((64, 5, 512))
    return tokens, encoder_output, run_decoder(tokens, encoder_output)


def test_seed_example_gives_the_tutorials_shapes(seed_example):
    _, _, result = seed_example
    assert result.output.shape == (64, 5, 512)
    assert len(result.self_attention) == len(result.cross_attention) == 6
    assert all(w.shape == (64, 8, 5, 5) for w in result.self_attention)
    assert all(w.shape == (64, 8, 5, 5) for w in result.cross_attention)
    assert result.config == DecoderConfig()  # the tutorial's sizes are the defaults
    assert not result.output.flags.writeable


def test_causal_self_attention_never_sees_the_future_in_any_layer_or_head(seed_example):
    _, _, result = seed_example
    weights = np.stack(result.self_attention)  # (N, B, H, T, T)
    np.testing.assert_array_equal(np.triu(weights, k=1), 0.0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.stack(result.cross_attention).sum(axis=-1), 1.0, atol=1e-5)


def test_same_seed_same_decoder_other_seed_other_decoder():
    tokens, encoder_output = RNG.integers(0, 10, size=(3, 4)), RNG.random((3, 5, 8))
    result = run_decoder(tokens, encoder_output, seed=5, **SMALL)
    again = run_decoder(tokens, encoder_output, seed=5, **SMALL)
    np.testing.assert_array_equal(again.output, result.output)
    np.testing.assert_array_equal(again.cross_attention[1], result.cross_attention[1])
    other = run_decoder(tokens, encoder_output, seed=6, **SMALL)
    assert not np.allclose(other.output, result.output)


def test_source_shorter_than_target_and_padding_masks():
    tokens = RNG.integers(0, 10, size=(2, 4))
    source_pad = [[True, True, False], [True, True, True]]
    target_pad = [[True, True, True, False], [True, True, True, True]]
    result = run_decoder(
        tokens, RNG.random((2, 3, 8)), source_padding_mask=source_pad,
        target_padding_mask=target_pad, **SMALL,
    )  # fmt: skip
    assert result.output.shape == (2, 4, 8)
    assert [w.shape for w in result.cross_attention] == [(2, 2, 4, 3)] * 2
    np.testing.assert_array_equal(
        result.self_mask, way_mask("causal", 3, 4, target_padding_mask=target_pad)
    )
    np.testing.assert_array_equal(
        result.cross_mask, way_mask("cross", 3, 4, source_padding_mask=source_pad)
    )
    for self_w, cross_w in zip(result.self_attention, result.cross_attention, strict=True):
        np.testing.assert_array_equal(cross_w[0, :, :, 2], 0.0)  # padded source key
        np.testing.assert_array_equal(self_w[0, :, :, 3], 0.0)  # padded target key
    unmasked = run_decoder(tokens, RNG.random((2, 3, 8)), causal=False, **SMALL)
    assert unmasked.self_mask.all() and np.triu(unmasked.self_attention[0], k=1).max() > 0
    assert [call.way for call in unmasked.attention] == ["bidirectional", "cross"] * 2


def test_the_run_s_attention_is_every_call_layer_by_layer_with_masks_and_labels():
    tokens = np.array([[3, 1, 4, 1], [5, 9, 2, 6]])
    source_pad = [[True, True, False], [True, True, True]]
    result = run_decoder(tokens, RNG.random((2, 3, 8)), source_padding_mask=source_pad, **SMALL)
    attention = result.attention
    assert attention.keys() == (
        "decoder_layer_0/self_attention", "decoder_layer_0/cross_attention",
        "decoder_layer_1/self_attention", "decoder_layer_1/cross_attention",
    )  # fmt: skip
    assert [(c.kind, c.way, c.layer) for c in attention] == [
        ("self", "causal", 0), ("cross", "cross", 0), ("self", "causal", 1), ("cross", "cross", 1),
    ]  # fmt: skip
    causal = way_mask("causal", 3, 4)  # (T, T), no target padding
    for layer in range(2):
        self_call, cross_call = attention.at("causal", layer), attention.at("cross", layer)
        assert self_call.weights is result.self_attention[layer]
        assert cross_call.weights.shape == (2, 2, 4, 3) and cross_call.query_heads is None
        np.testing.assert_array_equal(self_call.mask, np.broadcast_to(causal, (2, 4, 4)))
        np.testing.assert_array_equal(cross_call.mask[0], [[True, True, False]] * 4)
    assert attention.at("cross", 1).labels(1) == (
        ("t0=5", "t1=9", "t2=2", "t3=6"),
        ("s0", "s1", "s2"),
    )
    assert attention.at("causal", 0).labels(0)[1] == ("t0=3", "t1=1", "t2=4", "t3=1")
    stack = attention.layer_stack("cross", item=0)  # (L, H, T, S): the padded key grey
    assert stack.keys == attention.groups()["cross"] and stack.weights.shape == (2, 2, 4, 3)
    np.testing.assert_array_equal(stack.blocked[..., 2], True)
    assert not stack.blocked[..., :2].any()


@pytest.mark.parametrize(
    ("causal", "target_pad", "source_pad"),
    [
        (True, None, None),
        (True, [[True, True, True, False], [True, True, True, True]], [[True, False, True]] * 2),
        (False, [True, True, False, False], None),
    ],
    ids=["causal", "causal_and_padding", "look_ahead_off_and_target_padding"],
)
def test_run_decoder_gives_the_keras_layers_numbers(causal, target_pad, source_pad):
    # run_decoder computes in arrays; the tutorial's Keras layers, given the same drawn weights
    # by build_decoder, must give the same output and every layer's weights
    sizes = {"h": 2, "d_k": 4, "d_v": 3, "d_model": 8, "d_ff": 16, "n": 3, "vocab_size": 10}
    tokens, memory = RNG.integers(0, 10, size=(2, 4)), RNG.random((2, 3, 8)).astype(np.float32)
    result = run_decoder(
        tokens, memory, causal=causal, target_padding_mask=target_pad,
        source_padding_mask=source_pad, seed=7, **sizes,
    )  # fmt: skip
    decoder = build_decoder(DecoderConfig(sequence_length=4, seed=7, **sizes))
    output, self_weights, cross_weights = decoder(
        tokens, memory, np.array(result.self_mask), np.array(result.cross_mask)
    )
    np.testing.assert_allclose(result.output, np.asarray(output), atol=2e-5)
    for ours, theirs in zip(result.self_attention, self_weights, strict=True):
        np.testing.assert_allclose(ours, np.asarray(theirs), atol=1e-6)
    for ours, theirs in zip(result.cross_attention, cross_weights, strict=True):
        np.testing.assert_allclose(ours, np.asarray(theirs), atol=1e-6)


def test_one_layer_against_float64_numpy():
    # the whole layer written out once more in float64: attention, Add & Norm, feed-forward
    sizes = {"h": 2, "d_k": 3, "d_v": 2, "d_model": 6, "d_ff": 5, "n": 1, "vocab_size": 7}
    tokens, memory = np.array([[3, 0, 6]]), RNG.random((1, 2, 6))
    result = run_decoder(tokens, memory, seed=4, **sizes)
    layer = keras_weights(draw_weights(7, 3, 2, 3, 2, 6, 5, 1, seed=4), 0)
    x = positional_encoding(7, 6)[tokens[0]] + positional_encoding(3, 6)  # (T, D)

    def attend(xq, xkv, name, causal):
        wq, wk, wv = (layer[f"{name}_W_{w}"].astype(float) for w in "QKV")  # (D, H, ·)
        q, k, v = (np.einsum("td,dhk->htk", a, w) for a, w in ((xq, wq), (xkv, wk), (xkv, wv)))
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(3)  # (H, T, S)
        if causal:
            scores = np.where(np.tril(np.ones(scores.shape[1:], bool)), scores, -np.inf)
        w = np.exp(scores - scores.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        heads = w @ v  # (H, T, Dv)
        return np.einsum("htv,hvd->td", heads, layer[f"{name}_W_O"].astype(float)), w

    def norm(a):
        return (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-3)

    attended, self_w = attend(x, x, "self", True)
    x = norm(x + attended)
    attended, cross_w = attend(x, memory[0], "cross", False)
    x = norm(x + attended)
    x = norm(x + np.maximum(x @ layer["ff1_kernel"], 0) @ layer["ff2_kernel"])
    np.testing.assert_allclose(result.self_attention[0][0], self_w, atol=1e-6)
    np.testing.assert_allclose(result.cross_attention[0][0], cross_w, atol=1e-6)
    np.testing.assert_allclose(result.output[0], x, atol=1e-5)


def test_weights_are_drawn_as_keras_default_initialisers_draw_them():
    weights = draw_weights(20, 5, 8, 64, 64, 512, 2048, 2, seed=0)
    layer = weights.layers[1]
    # Glorot uniform with Keras's fans: query kernel (D, H, Dk) -> fan_in H·D, fan_out Dk·D
    limit = np.sqrt(6 / (8 * 512 + 64 * 512))
    assert limit * 0.99 < np.abs(layer["cross_W_Q"]).max() < limit
    assert abs(float(layer["cross_W_Q"].mean())) < 1e-4
    limit = np.sqrt(6 / (512 + 2048))  # Dense (D, F)
    assert limit * 0.99 < np.abs(layer["ff1_kernel"]).max() < limit
    assert not layer["ff1_bias"].any() and (layer["norm3_gamma"] == 1).all()
    assert all(w.dtype == np.float32 for w in layer.values())
    assert tuple(layer) == LAYER_KEYS  # the names DecoderLayer.set_arrays assigns
    again = draw_weights(20, 5, 8, 64, 64, 512, 2048, 2, seed=0).layers[1]["self_W_V"]
    np.testing.assert_array_equal(again, weights.layers[1]["self_W_V"])
    assert not np.array_equal(weights.layers[0]["self_W_V"], again)  # each layer its own


def test_dropout_is_off_at_inference_and_on_in_training():
    config = DecoderConfig(vocab_size=10, sequence_length=4, h=2, d_k=4, d_v=4, d_model=8,
                           d_ff=16, n=2, rate=0.5)  # fmt: skip
    decoder = build_decoder(config)
    tokens, memory = RNG.integers(0, 10, size=(3, 4)), RNG.random((3, 5, 8)).astype(np.float32)
    first, _, _ = decoder(tokens, memory, training=False)
    second, _, _ = decoder(tokens, memory, training=False)
    trained, _, _ = decoder(tokens, memory, training=True)
    np.testing.assert_array_equal(np.asarray(first), np.asarray(second))
    assert not np.allclose(np.asarray(first), np.asarray(trained))


def test_layer_zero_heads_equal_compute_multihead_with_the_layers_kernels():
    config = DecoderConfig(vocab_size=10, sequence_length=4, h=2, d_k=4, d_v=3, d_model=8,
                           d_ff=16, n=1, seed=3)  # fmt: skip
    decoder = build_decoder(config)
    tokens, memory = RNG.integers(0, 10, size=(2, 4)), RNG.random((2, 5, 8)).astype(np.float32)
    mask = way_mask("causal", 5, 4)  # (1, T, T)
    _, self_weights, _ = decoder(tokens, memory, np.repeat(mask, 2, axis=0))
    mha = decoder.decoder_layer[0].multihead_attention1
    params = {
        "W_Q": np.asarray(mha.query_dense.kernel).transpose(1, 0, 2),  # (D, H, Dk) -> (H, D, Dk)
        "W_K": np.asarray(mha.key_dense.kernel).transpose(1, 0, 2),
        "W_V": np.asarray(mha.value_dense.kernel).transpose(1, 0, 2),
        "W_O": np.asarray(mha.output_dense.kernel).reshape(2 * 3, 8),  # (H, Dv, D) -> (H·Dv, D)
    }
    x = np.asarray(decoder.pos_encoding(tokens))  # (B, T, D)
    ours = compute_multihead(x, x, x, num_heads=2, d_k=4, d_v=3, causal=True, params=params)
    np.testing.assert_allclose(ours.weights, np.asarray(self_weights[0]), atol=1e-5)


def test_each_sublayer_has_its_own_add_and_norm():
    # The tutorial calls add_norm1 twice; here add_norm2 is separate and used.
    config = DecoderConfig(vocab_size=10, sequence_length=3, h=2, d_k=4, d_v=4, d_model=8,
                           d_ff=16, n=1)  # fmt: skip
    decoder = build_decoder(config)
    tokens, memory = RNG.integers(0, 10, size=(1, 3)), RNG.random((1, 3, 8)).astype(np.float32)
    before = np.asarray(decoder(tokens, memory)[0])
    layer = decoder.decoder_layer[0]
    assert len({id(layer.add_norm1), id(layer.add_norm2), id(layer.add_norm3)}) == 3
    layer.add_norm2.gamma.assign(np.full(8, 2.0, dtype=np.float32))
    assert not np.allclose(np.asarray(decoder(tokens, memory)[0]), before)


def test_fixed_sinusoidal_word_and_position_embeddings():
    decoder = build_decoder(DecoderConfig(vocab_size=6, sequence_length=3, **_tiny_sizes()))
    tokens = np.array([[5, 0, 2]])
    embedded = np.asarray(decoder.pos_encoding(tokens))
    expected = positional_encoding(6, 8)[[5, 0, 2]] + positional_encoding(3, 8)
    np.testing.assert_allclose(embedded[0], expected, atol=1e-6)
    assert not decoder.pos_encoding.trainable_weights


def test_layers_round_trip_through_their_config():
    decoder = build_decoder(DecoderConfig(vocab_size=6, sequence_length=3, **_tiny_sizes()))
    clone = Decoder.from_config(decoder.get_config())
    assert clone.get_config() == decoder.get_config()
    assert keras.saving.get_registered_name(Decoder) == "attnviz>Decoder"


def _tiny_sizes():
    return {"h": 2, "d_k": 4, "d_v": 4, "d_model": 8, "d_ff": 16, "n": 1}


TOKENS = np.zeros((2, 3), dtype=int)
MEMORY = np.zeros((2, 4, 8))
ERROR_CASES = [
    pytest.param(
        {"target_tokens": RNG.random((2, 3))},
        r"`target_tokens` must hold whole-number token ids from 0 to 9\. Received: array of "
        r"shape \(2, 3\) and dtype float64\. Draw them with np\.random\.default_rng\(\)",
        id="float_tokens_as_in_the_tutorial",
    ),
    pytest.param(
        {"target_tokens": [[1, 2, 10]]},
        r"`target_tokens` must be from 0 to 9 \(vocab_size=10\)\. Received a token id 10\.",
        id="token_out_of_range",
    ),
    pytest.param(
        {"target_tokens": [1, 2, 3]},
        r"`target_tokens` must be 2-D \(B, T\).*Received shape \(3,\)",
        id="tokens_1d",
    ),
    pytest.param(
        {"encoder_output": np.zeros((2, 4, 6))},
        r"`encoder_output` must have shape \(B, S, d_model\) = \(2, S, 8\).*Received shape "
        r"\(2, 4, 6\)\.",
        id="encoder_d_model",
    ),
    pytest.param(
        {"encoder_output": np.zeros((4, 8))},
        r"`encoder_output` must be 3-D",
        id="encoder_2d",
    ),
    pytest.param({"n": 13}, r"`n` must be from 1 to 12\. Received: 13\.", id="n_13"),
    pytest.param({"h": 0}, r"`h` must be 1 or more\. Received: 0\.", id="h_0"),
    pytest.param(
        {"h": 8192, "d_k": 1024, "d_v": 1024},  # any number of heads, but not past memory
        r"the attention weights of all layers \(layers × 2 attentions × weights each\) would "
        r"have 2 × 2 × 268,435,456 = 1,073,741,824 numbers; the limit is 268,435,456 per array",
        id="too_many_weights",
    ),
    pytest.param(
        {"d_model": 2**28 + 1},
        r"`d_model` is too large to hold in memory: .* Received: "
        r"268,435,457\. Use fewer features\.",
        id="d_model",
    ),
    pytest.param({"vocab_size": 0}, r"`vocab_size` must be from 1 to 4096", id="vocab_0"),
    pytest.param({"causal": "yes"}, r"`causal` must be True or False", id="causal_str"),
    pytest.param(
        {"source_padding_mask": [True, False]},
        r"`source_padding_mask` must have shape \(4,\) or \(2, 4\)",
        id="source_padding_length",
    ),
    pytest.param(
        {"target_tokens": np.zeros((64, 100), dtype=int), "encoder_output": np.zeros((64, 4, 8))},
        r"Too many tokens for the decoder: 64 sequences × 100 tokens; the limit is 4096",
        id="too_many_tokens",
    ),
]


@pytest.mark.parametrize(("kwargs", "message"), ERROR_CASES)
def test_invalid_input_is_rejected_with_a_helpful_message(kwargs, message):
    arguments = {"target_tokens": TOKENS, "encoder_output": MEMORY, **SMALL, **kwargs}
    with pytest.raises(ValueError, match=message):
        run_decoder(**arguments)
