"""The decoder's weights drawn from a seed, and its inference pass in arrays, no Keras layers.

Shape letters: B batch, T target tokens, S source tokens, D model features (`d_model`), H heads,
Dk/Dv query-key/value features per head, F feed-forward units, V vocabulary.

`run_decoder` computes with these; `build_decoder` hands the same weights to the Keras layers of
`decoder_layers`, and a test pins the two equal. A 12-layer, 16-head decoder at d_model 512 and
d_ff 2048 (50 M weights) took 1.3–1.5 s to build and run as Keras layers, for one sequence as
for 64, and 0.4–0.55 s / 0.95 s this way (2026-11-27, three seeds each, 2 cores): creating
~100 Keras sub-layers and their seeded variables was most of it. Each sub-layer computes what its
Keras layer does:

    self = MHA(x, x, x; look-ahead and target padding); x = LayerNorm(x + self)
    cross = MHA(x, memory, memory; source padding);    x = LayerNorm(x + cross)
    x = LayerNorm(x + relu(x W1 + b1) W2 + b2)

The attention is `multihead.compute_multihead`'s (the Multi-head page's): heads scored, masked and
softmaxed by the same code, with the layer's kernels. Weights are drawn as Keras's default
initialisers draw them (Glorot uniform kernels with Keras's fans, zero biases, LayerNorm's gamma
1 and beta 0), from `numpy.random.default_rng(seed)`, layer by layer in the order of `LAYER_KEYS`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.inputs.text import positional_encoding
from attnviz.transformer.multihead import compute_multihead

LAYER_NORM_EPSILON = 1e-3  # keras.layers.LayerNormalization's default
ATTENTIONS = ("self", "cross")  # each layer's two multi-head attentions, in order
HEAD_KERNELS = ("W_Q", "W_K", "W_V", "W_O")  # in `multihead`'s shapes: (H, D, Dk) ... (H·Dv, D)
LAYER_KEYS = (  # one layer's arrays, drawn (kernels) or set (biases, norms) in this order
    *(f"{a}_{w}" for a in ATTENTIONS for w in HEAD_KERNELS),
    "ff1_kernel", "ff1_bias", "ff2_kernel", "ff2_bias",
    *(f"norm{i}_{p}" for i in (1, 2, 3) for p in ("gamma", "beta")),
)  # fmt: skip


@dataclass(frozen=True)
class DecoderWeights:
    """Every weight of a decoder, float32; `layers[i]` maps `LAYER_KEYS` to layer i's arrays."""

    word_table: np.ndarray  # (V, D) fixed sinusoidal word embedding
    position_table: np.ndarray  # (T_max, D) fixed sinusoidal position embedding
    layers: tuple[Mapping[str, np.ndarray], ...]  # N layers, layer 0 first; H from W_Q's shape


def draw_weights(
    vocab_size: int, sequence_length: int, h: int, d_k: int, d_v: int, d_model: int, d_ff: int,
    n: int, seed: int,
) -> DecoderWeights:  # fmt: skip
    """The weights of a decoder of these sizes, drawn from `seed` (sizes already checked)."""
    rng = np.random.default_rng(seed)
    d = d_model
    head_shapes = {  # multihead's shapes and Keras's fans (of its kernels (D, H, Dk), (H, Dv, D))
        "W_Q": ((h, d, d_k), h * d, d_k * d),
        "W_K": ((h, d, d_k), h * d, d_k * d),
        "W_V": ((h, d, d_v), h * d, d_v * d),
        "W_O": ((h * d_v, d), d_v * h, d * h),
    }
    layers = []
    for _ in range(n):
        layer = {f"{a}_{w}": _glorot_uniform(rng, *head_shapes[w]) for a in ATTENTIONS
                 for w in HEAD_KERNELS}  # fmt: skip
        layer["ff1_kernel"] = _glorot_uniform(rng, (d, d_ff), d, d_ff)
        layer["ff1_bias"] = np.zeros(d_ff, np.float32)
        layer["ff2_kernel"] = _glorot_uniform(rng, (d_ff, d), d_ff, d)
        layer["ff2_bias"] = np.zeros(d, np.float32)
        for i in (1, 2, 3):
            layer[f"norm{i}_gamma"] = np.ones(d, np.float32)
            layer[f"norm{i}_beta"] = np.zeros(d, np.float32)
        layers.append(layer)
    return DecoderWeights(
        word_table=positional_encoding(vocab_size, d).astype(np.float32),
        position_table=positional_encoding(sequence_length, d).astype(np.float32),
        layers=tuple(layers),
    )


def decoder_forward(
    weights: DecoderWeights,
    tokens: np.ndarray,
    memory: np.ndarray,
    causal: bool,
    target_padding: Any,
    source_padding: Any,
) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """Run the decoder at inference (dropout off) on checked inputs.

    Args:
        tokens: int `(B, T)`; memory: float32 `(B, S, D)` the encoder output.
        causal: the look-ahead mask in self-attention.
        target_padding, source_padding: bool `(B, T)` / `(B, S)`, True = real token, or None.

    Returns:
        `(output (B, T, D), N self-attention weights (B, H, T, T), N cross (B, H, T, S))`.
    """
    t = tokens.shape[1]
    x = weights.word_table[tokens] + weights.position_table[:t]  # (B, T, D)
    self_weights, cross_weights = [], []
    for layer in weights.layers:
        attended, self_w = _attend(layer, "self", x, x, causal, target_padding)
        x = _layer_norm(x + attended, layer, 1)  # (B, T, D)
        attended, cross_w = _attend(layer, "cross", x, memory, False, source_padding)
        x = _layer_norm(x + attended, layer, 2)
        x = _layer_norm(x + _feed_forward(x, layer), layer, 3)
        self_weights.append(self_w)
        cross_weights.append(cross_w)
    return x, self_weights, cross_weights


def keras_weights(weights: DecoderWeights, index: int) -> dict[str, np.ndarray]:
    """Layer `index`'s arrays in the shapes of `decoder_layers.DecoderLayer`'s variables, keyed
    as `LAYER_KEYS` (attention kernels: query/key/value `(D, H, Dk)`, output `(H, Dv, D)`)."""
    layer = weights.layers[index]
    arrays = dict(layer)
    for a in ATTENTIONS:
        for w in ("W_Q", "W_K", "W_V"):
            arrays[f"{a}_{w}"] = layer[f"{a}_{w}"].transpose(1, 0, 2)  # (H, D, Dk) -> (D, H, Dk)
        heads = layer[f"{a}_W_Q"].shape[0]  # H
        out = layer[f"{a}_W_O"]
        arrays[f"{a}_W_O"] = out.reshape(heads, -1, out.shape[1])  # (H·Dv, D) -> (H, Dv, D)
    return arrays


def _attend(layer, attention, queries, keys, causal, padding):
    """One multi-head attention sub-layer: `(B, T, D)` output and `(B, H, T, ·)` weights."""
    params = {w: layer[f"{attention}_{w}"] for w in HEAD_KERNELS}
    heads, _, d_k = params["W_Q"].shape  # (H, D, Dk)
    d_v = params["W_V"].shape[2]
    result = compute_multihead(
        queries, keys, keys, num_heads=heads, d_k=d_k, d_v=d_v, causal=causal,
        key_padding_mask=padding, params=params,
    )  # fmt: skip
    return np.asarray(result.output), result.weights


def _feed_forward(x: np.ndarray, layer: Mapping[str, np.ndarray]) -> np.ndarray:
    """relu(x W1 + b1) W2 + b2 on every token, `(B, T, D) -> (B, T, D)`."""
    rows = x.reshape(-1, x.shape[-1])  # (B·T, D): one matrix product per weight, not B of them
    hidden = np.maximum(rows @ layer["ff1_kernel"] + layer["ff1_bias"], 0)  # (B·T, F)
    return (hidden @ layer["ff2_kernel"] + layer["ff2_bias"]).reshape(x.shape)  # (B, T, D)


def _layer_norm(x: np.ndarray, layer: Mapping[str, np.ndarray], i: int) -> np.ndarray:
    """LayerNormalization over the features of `(B, T, D)`, as Keras computes it."""
    mean = x.mean(axis=-1, keepdims=True)  # (B, T, 1)
    variance = x.var(axis=-1, keepdims=True)
    normed = (x - mean) / np.sqrt(variance + np.float32(LAYER_NORM_EPSILON))
    return normed * layer[f"norm{i}_gamma"] + layer[f"norm{i}_beta"]


def _glorot_uniform(
    rng: np.random.Generator, shape: tuple[int, ...], fan_in: int, fan_out: int
) -> np.ndarray:
    """Uniform on ±sqrt(6 / (fan_in + fan_out)), float32, as keras.initializers.GlorotUniform."""
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    w = rng.random(shape, dtype=np.float32)  # [0, 1)
    w *= np.float32(2 * limit)
    w -= np.float32(limit)
    return w
