"""Tests for learn/language/layers.py: causal self-attention (masks, positions, grouped K/V heads),
decoding with a cache, heads switched off in the graph, and the block's two norm orders.

Checked against attnviz's own multi-head maths (`compute_multihead`) and by hand."""

import numpy as np
import pytest
from build_support import assert_same_weights, keras_default_builds, refusing

from attnviz.learn.configs import LMConfig
from attnviz.learn.language.layers import CausalSelfAttention, LMBlock, LMCore
from attnviz.learn.language.model import LanguageModel
from attnviz.transformer.multihead import compute_multihead

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 7, 16)).astype(np.float32)  # (B, T, D)


def _attention(**kwargs) -> CausalSelfAttention:
    layer = CausalSelfAttention(LMConfig(d_model=16, d_ff=0, **kwargs))
    layer(X)  # builds the kernels (glorot from Keras's global seed)
    return layer


def _params(layer: CausalSelfAttention) -> dict:
    kernels = (layer.query_kernel, layer.key_kernel, layer.value_kernel, layer.output_kernel)
    return {k: np.asarray(w) for k, w in zip(("W_Q", "W_K", "W_V", "W_O"), kernels, strict=True)}


@pytest.mark.parametrize(
    "kwargs",
    [dict(), dict(position="alibi"), dict(position="none"), dict(kv_heads=2), dict(kv_heads=1)],
    ids=["rope", "alibi", "none", "gqa", "mqa"],
)
def test_every_head_equals_compute_multihead_with_the_same_kernels(kwargs):
    layer = _attention(**kwargs)
    output, weights, heads, (keys, _) = layer(X)
    output, weights, heads, keys = (np.asarray(a) for a in (output, weights, heads, keys))
    config = layer.config
    expected = compute_multihead(
        X, X, X, num_heads=4, num_kv_heads=config.num_kv_heads, causal=True,
        position=config.position, params=_params(layer),
    )  # fmt: skip
    assert weights.shape == (2, 4, 7, 7) and keys.shape == (2, config.num_kv_heads, 7, 4)
    np.testing.assert_allclose(weights, expected.weights, atol=1e-6)
    np.testing.assert_allclose(heads, expected.head_outputs, atol=1e-5)
    np.testing.assert_allclose(output, expected.output, atol=1e-5)
    assert (np.triu(weights, k=1) == 0).all()  # exactly zero on every future key
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-6)


@pytest.mark.parametrize("position", ["rope", "alibi"])
def test_decoding_with_a_cache_gives_the_rows_of_the_full_pass(position):
    layer = _attention(position=position, kv_heads=2)
    full_out, full_w, _, _ = layer(X)
    _, _, _, past = layer(X[:, :4])  # the first 4 tokens, cached (keys rotated at 0 … 3)
    out, w, _, (keys, _) = layer(X[:, 4:], past=past, start=4)  # the last 3 read alone
    assert w.shape == (2, 4, 3, 7) and keys.shape == (2, 2, 7, 4)
    np.testing.assert_allclose(np.asarray(w), np.asarray(full_w)[:, :, 4:], atol=1e-6)
    np.testing.assert_allclose(np.asarray(out), np.asarray(full_out)[:, 4:], atol=1e-5)


def test_a_switched_off_head_outputs_its_fill_and_the_others_are_untouched():
    layer = _attention()
    _, weights, heads, _ = layer(X)
    keep = np.array([1, 0, 1, 1], np.float32)
    fill = np.zeros((4, 4), np.float32)
    fill[1] = [1.0, -2.0, 0.5, 3.0]
    output, w_off, heads_off, _ = layer(X, keep=keep, fill=fill)
    heads, heads_off = np.asarray(heads), np.asarray(heads_off)
    np.testing.assert_array_equal(np.asarray(w_off), np.asarray(weights))  # where it looks: same
    np.testing.assert_allclose(heads_off[:, 1], np.broadcast_to(fill[1], (2, 7, 4)))
    np.testing.assert_array_equal(heads_off[:, [0, 2, 3]], heads[:, [0, 2, 3]])
    w_o = _params(layer)["W_O"].reshape(4, 4, 16)  # (H, Dk, D)
    np.testing.assert_allclose(
        np.asarray(output), np.einsum("bhtk,hkd->btd", heads_off, w_o), atol=1e-5
    )


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_the_block_gives_attention_its_normalised_or_raw_input(norm):
    block = LMBlock(LMConfig(d_model=16, d_ff=8, norm=norm))
    x, weights, attention_input, heads, _ = block(X)
    attention_input = np.asarray(attention_input)
    if norm == "pre":  # layer norm (unit scale, zero shift at init) of each token
        mean = X.mean(axis=-1, keepdims=True)
        expected = (X - mean) / np.sqrt(X.var(axis=-1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(attention_input, expected, atol=1e-5)
    else:
        np.testing.assert_array_equal(attention_input, X)
        np.testing.assert_allclose(np.asarray(x).mean(axis=-1), 0.0, atol=1e-5)  # normed last
    assert np.asarray(x).shape == (2, 7, 16) and np.asarray(heads).shape == (2, 4, 7, 4)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_the_model_builds_the_seeded_weights_of_a_traced_build_without_running_call(
    norm, monkeypatch
):
    # Explicit builds, in the order `call` first uses each layer: a seed gives the weights
    # Keras drew while tracing `call` (the shipped checkpoints were trained from those).
    config = LMConfig(d_model=16, heads=2, d_ff=32, norm=norm)
    with monkeypatch.context() as patched:
        for cls in (LMCore, LMBlock):
            patched.setattr(cls, "call", refusing(cls.call))
        built = LanguageModel("induction", config, seed=7).get_weights()
    with monkeypatch.context() as patched:
        keras_default_builds(patched, LMCore, LMBlock)
        traced = LanguageModel("induction", config, seed=7)
    assert_same_weights(built, traced.get_weights())
    ids = np.array([[1, 2, 3, 4, 5]], dtype=np.int32)  # (B, T)
    logits, weights = traced.core(ids)
    assert traced.core.compute_output_shape(ids.shape) == (
        tuple(logits.shape),
        tuple(weights.shape),
    )
