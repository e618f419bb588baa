"""The layers of a decoder-only language model, in `keras.ops`: causal self-attention with every
head exposed, one block (attention and an optional MLP), and the whole stack.

Shape letters: B sequences, T new tokens (queries), S cached plus new tokens (keys; S = T
without a cache), D model features, H query heads, G key/value heads (G divides H; query head
h reads K/V head h // (H / G)), Dk features per head (query, key and value), L layers, V
vocabulary.

    head_h = softmax(rope(x W_Q[h]) rope(x W_K[g])ᵀ / sqrt(Dk) + bias_h + causal) x W_V[g]
    output = concat(head_1, ..., head_H) W_O

The kernels are stored exactly as `multihead.compute_multihead` takes them: W_Q `(H, D, Dk)`,
W_K and W_V `(G, D, Dk)`, W_O `(H·Dk, D)`, no biases. Positions live inside attention: RoPE
rotates queries and keys at their own position (`rotary.rotate`), ALiBi adds `−m_h·(i − j)`
(the paper's slopes), "none" adds nothing.

A head can be switched off inside the same graph: `keep (H,)` (1 = on, 0 = off) and `fill
(H, Dk)` replace an off head's output by `fill` (zeros, or its mean) before W_O, so ablation
runs in one `tf.function` with no patching. The same call decodes with a key/value cache:
`past` holds each layer's rotated keys and values of the tokens before, `start` the position of
the first new token.
"""

from __future__ import annotations

import math
from typing import Any

import keras
import numpy as np
from keras import ops

from attnviz.core.positions import alibi_slopes
from attnviz.learn.configs import LMConfig
from attnviz.transformer.rotary import rotate

MASKED = -1e9  # the logit of a future key: exp underflows to an exact 0 in float32


class CausalSelfAttention(keras.layers.Layer):
    """Causal multi-head self-attention returning every head's weights and outputs."""

    def __init__(self, config: LMConfig, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.heads, self.kv_heads, self.d_k = config.heads, config.num_kv_heads, config.d_k
        slopes = alibi_slopes(self.heads) if config.position == "alibi" else np.zeros(self.heads)
        self.slopes = slopes.astype(np.float32)  # (H,) ALiBi's, or zeros

    def build(self, input_shape: tuple) -> None:
        d, h, g, dk = input_shape[-1], self.heads, self.kv_heads, self.d_k
        self.query_kernel = self.add_weight((h, d, dk), "glorot_uniform", name="query_kernel")
        self.key_kernel = self.add_weight((g, d, dk), "glorot_uniform", name="key_kernel")
        self.value_kernel = self.add_weight((g, d, dk), "glorot_uniform", name="value_kernel")
        self.output_kernel = self.add_weight((h * dk, d), "glorot_uniform", name="output_kernel")

    def call(self, x, keep=None, fill=None, past=None, start=0):
        """`x (B, T, D)` -> `(output (B, T, D), weights (B, H, T, S), heads (B, H, T, Dk),
        (keys (B, G, S, Dk), values (B, G, S, Dk)))`; the keys rotated, ready to cache.

        `keep (H,)` and `fill (H, Dk)` switch heads off (see the module doc); `past` is the
        `(keys, values)` of the `start` tokens before (None: none)."""
        t = ops.shape(x)[1]
        positions = ops.arange(t) + start  # (T,) the new tokens' positions
        q = ops.einsum("btd,hdk->bhtk", x, self.query_kernel)  # (B, H, T, Dk)
        k = ops.einsum("btd,gdk->bgtk", x, self.key_kernel)  # (B, G, T, Dk)
        v = ops.einsum("btd,gdk->bgtk", x, self.value_kernel)  # (B, G, T, Dk)
        if self.config.position == "rope":
            q = rotate(q, positions, self.config.rope_theta)
            k = rotate(k, positions, self.config.rope_theta)
        if past is not None:
            k = ops.concatenate([past[0], k], axis=2)  # (B, G, S, Dk)
            v = ops.concatenate([past[1], v], axis=2)
        weights = self._weights(q, k, positions)  # (B, H, T, S)
        per_group = self.heads // self.kv_heads
        v_heads = ops.repeat(v, per_group, axis=1) if per_group > 1 else v  # (B, H, S, Dk)
        heads = ops.einsum("bhts,bhsk->bhtk", weights, v_heads)  # (B, H, T, Dk)
        if keep is not None:
            on = ops.reshape(keep, (1, self.heads, 1, 1))  # (1, H, 1, 1)
            heads = heads * on + ops.reshape(fill, (1, self.heads, 1, self.d_k)) * (1.0 - on)
        w_o = ops.reshape(self.output_kernel, (self.heads, self.d_k, -1))  # (H·Dk, D) -> (H, Dk, D)
        output = ops.einsum("bhtk,hkd->btd", heads, w_o)  # concat(heads) W_O: (B, T, D)
        return output, weights, heads, (k, v)

    def _weights(self, q, k, positions):
        """Softmax of the scaled, biased, causally masked scores: `(B, H, T, S)`."""
        per_group = self.heads // self.kv_heads
        k_heads = ops.repeat(k, per_group, axis=1) if per_group > 1 else k  # (B, H, S, Dk)
        scores = ops.einsum("bhtk,bhsk->bhts", q, k_heads) / math.sqrt(self.d_k)  # (B, H, T, S)
        s = ops.shape(k)[2]
        distance = ops.cast(positions[:, None] - ops.arange(s)[None, :], "float32")  # (T, S) i − j
        if self.config.position == "alibi":  # (H, 1, 1) * (1, T, S) -> (H, T, S)
            scores = scores - ops.reshape(self.slopes, (-1, 1, 1)) * distance[None]
        return ops.softmax(ops.where(distance >= 0, scores, MASKED), axis=-1)


class LMBlock(keras.layers.Layer):
    """Causal self-attention and an optional MLP, each with a residual connection and layer
    normalisation before (pre-norm) or after (post-norm)."""

    def __init__(self, config: LMConfig, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.attention = CausalSelfAttention(config, name="attention")
        self.norm1 = keras.layers.LayerNormalization(epsilon=1e-5, name="norm1")
        self.mlp = None
        if config.d_ff:
            self.norm2 = keras.layers.LayerNormalization(epsilon=1e-5, name="norm2")
            self.mlp = keras.Sequential(
                [
                    keras.layers.Dense(config.d_ff, activation="gelu", name="mlp_in"),
                    keras.layers.Dense(config.d_model, name="mlp_out"),
                ],
                name="mlp",
            )

    def build(self, input_shape: tuple) -> None:
        """Every sublayer's weights, in the order the call first uses them (the seeded draws
        match a build by tracing the call)."""
        pre = self.config.norm == "pre"
        order = [self.norm1, self.attention] if pre else [self.attention, self.norm1]
        if self.mlp is not None:
            order += [self.norm2, self.mlp] if pre else [self.mlp, self.norm2]
        for layer in order:
            layer.build(input_shape)  # every sublayer takes and gives (B, T, D)

    def call(self, x, keep=None, fill=None, past=None, start=0):
        """`x (B, T, D)` -> `(x (B, T, D), weights (B, H, T, S), attention input (B, T, D),
        heads (B, H, T, Dk), cache)`: the attention input is its Q = K = V input."""
        pre = self.config.norm == "pre"
        attention_input = self.norm1(x) if pre else x  # (B, T, D)
        out, weights, heads, cache = self.attention(
            attention_input, keep=keep, fill=fill, past=past, start=start
        )
        x = x + out if pre else self.norm1(x + out)
        if self.mlp is not None:
            x = x + self.mlp(self.norm2(x)) if pre else self.norm2(x + self.mlp(x))
        return x, weights, attention_input, heads, cache


class LMCore(keras.layers.Layer):
    """Token embedding, L blocks, (pre-norm: a final layer normalisation) and the logits."""

    def __init__(self, config: LMConfig, vocab_size: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.embedding = keras.layers.Embedding(vocab_size, config.d_model, name="embedding")
        self.blocks = [LMBlock(config, name=f"block_{i}") for i in range(config.layers)]
        self.final_norm = None
        if config.norm == "pre":
            self.final_norm = keras.layers.LayerNormalization(epsilon=1e-5, name="final_norm")
        self.logits = keras.layers.Dense(vocab_size, name="logits")

    def build(self, ids_shape: tuple) -> None:
        """Every weight, without tracing the call (as `call` first uses the sublayers)."""
        self.embedding.build(ids_shape)
        x_shape = (*ids_shape, self.config.d_model)  # (B, T, D)
        for block in self.blocks:
            block.build(x_shape)
        if self.final_norm is not None:
            self.final_norm.build(x_shape)
        self.logits.build(x_shape)

    def compute_output_shape(self, ids_shape: tuple) -> tuple:
        """`(logits (B, T, V), weights (B, L, H, T, T))`: the shapes of `call` without `trace`
        (a Keras `Input` gives this layer symbolic tensors without tracing the call)."""
        b, t = ids_shape
        c = self.config
        return (b, t, self.logits.units), (b, c.layers, c.heads, t, t)

    def call(self, ids, keep=None, fill=None, past=None, start=0, trace=False):
        """`ids (B, T)` -> `logits (B, T, V)` and `weights (B, L, H, T, S)`; with `trace`, also
        `attention inputs (B, L, T, D)`, `heads (B, L, H, T, Dk)` and the caches (L pairs of
        `(B, G, S, Dk)`).

        `keep (L, H)` and `fill (L, H, Dk)` switch heads off; `past`: L `(keys, values)` pairs
        of the `start` tokens before (None: none)."""
        x = self.embedding(ids)  # (B, T, D)
        weights, inputs, heads, caches = [], [], [], []
        for i, block in enumerate(self.blocks):
            x, w, a_in, h, cache = block(
                x,
                keep=None if keep is None else keep[i],
                fill=None if fill is None else fill[i],
                past=None if past is None else past[i],
                start=start,
            )
            weights.append(w)  # (B, H, T, S)
            inputs.append(a_in)  # (B, T, D)
            heads.append(h)  # (B, H, T, Dk)
            caches.append(cache)
        if self.final_norm is not None:
            x = self.final_norm(x)
        logits = self.logits(x)  # (B, T, V)
        stacked = ops.stack(weights, axis=1)  # L × (B, H, T, S) -> (B, L, H, T, S)
        if not trace:
            return logits, stacked
        return logits, stacked, ops.stack(inputs, axis=1), ops.stack(heads, axis=1), caches
