"""Keras 3 layers of the Transformer encoder, the decoder's match, and a learned token embedding.

Shape letters: B batch, S source tokens, T target tokens, D model features (`d_model`), H heads,
Dk/Dv query-key/value features per head, F feed-forward units, V vocabulary size.

`EncoderLayer` is `decoder_layers.DecoderLayer` without the cross-attention: unmasked-by-position
multi-head self-attention (keys masked where the source is padding), dropout, Add & Norm, then
feed-forward, dropout, Add & Norm (post-norm, as in "Attention Is All You Need" and the seed's
decoder). Attention is `keras.layers.MultiHeadAttention` without biases, as in the decoder, so
every head can be recomputed from the layer's kernels (`multihead.compute_multihead`).

`TokenAndPositionEmbedding` learns its token table and adds the fixed sinusoidal positions. The
seed's `PositionEmbeddingFixedWeights` fixes both tables to the same sinusoid, so token i at
position p gets exactly the vector of token p at position i (PE(i) + PE(p)): a model that must
tell "12" from "21" cannot use it. A trained model needs a learned token table.
"""

from __future__ import annotations

import math
from typing import Any

import keras

from attnviz.inputs.text import positional_encoding


@keras.saving.register_keras_serializable(package="attnviz")
class TokenAndPositionEmbedding(keras.layers.Layer):
    """Learned token embeddings, times √D, plus fixed sinusoidal position embeddings.

    Call with int `tokens (B, T)`, T <= `sequence_length`; returns `(B, T, D)`.
    """

    def __init__(self, sequence_length: int, vocab_size: int, output_dim: int, **kwargs: Any):
        super().__init__(**kwargs)
        self.sequence_length = sequence_length
        self.vocab_size = vocab_size
        self.output_dim = output_dim
        self.token_embedding = keras.layers.Embedding(vocab_size, output_dim, name="token")
        self.position_embedding = keras.layers.Embedding(
            sequence_length, output_dim, weights=[positional_encoding(sequence_length, output_dim)],
            trainable=False, name="position",
        )  # fmt: skip

    def build(self, input_shape: tuple) -> None:
        self.token_embedding.build(input_shape)

    def call(self, tokens: Any) -> Any:
        positions = keras.ops.arange(keras.ops.shape(tokens)[-1])  # (T,)
        scaled = self.token_embedding(tokens) * math.sqrt(self.output_dim)  # (B, T, D)
        return scaled + self.position_embedding(positions)  # (B, T, D) + (T, D)

    def get_config(self) -> dict[str, Any]:
        sizes = {"vocab_size": self.vocab_size, "output_dim": self.output_dim}
        return {**super().get_config(), "sequence_length": self.sequence_length, **sizes}


@keras.saving.register_keras_serializable(package="attnviz")
class EncoderLayer(keras.layers.Layer):
    """One encoder layer: multi-head self-attention and feed-forward, each + Add & Norm.

    Args:
        h: heads H.  d_k: Dk.  d_v: Dv.  d_model: D.  d_ff: F.  rate: dropout rate (training only).
    """

    def __init__(self, h: int, d_k: int, d_v: int, d_model: int, d_ff: int, rate: float, **kwargs):
        super().__init__(**kwargs)
        self.sizes = {"h": h, "d_k": d_k, "d_v": d_v, "d_model": d_model, "d_ff": d_ff}
        self.rate = rate
        mha = {"num_heads": h, "key_dim": d_k, "value_dim": d_v, "use_bias": False}
        self.multihead_attention = keras.layers.MultiHeadAttention(**mha, name="self_attention")
        self.dropout1 = keras.layers.Dropout(rate)
        self.add_norm1 = keras.layers.LayerNormalization(name="add_norm1")
        self.feed_forward1 = keras.layers.Dense(d_ff, activation="relu", name="feed_forward1")
        self.feed_forward2 = keras.layers.Dense(d_model, name="feed_forward2")
        self.dropout2 = keras.layers.Dropout(rate)
        self.add_norm2 = keras.layers.LayerNormalization(name="add_norm2")

    def build(self, x_shape: tuple) -> None:
        """Create the weights of every sub-layer for `x (B, S, D)`."""
        self.multihead_attention.build(x_shape, x_shape)
        self.add_norm1.build(x_shape)
        self.add_norm2.build(x_shape)
        self.feed_forward1.build(x_shape)
        self.feed_forward2.build((*x_shape[:-1], self.sizes["d_ff"]))  # (B, S, F)

    def call(self, x, padding_mask=None, training=False):
        """`x (B, S, D)`, bool `padding_mask (B, S, S)` (True = may attend).

        Returns:
            `(output (B, S, D), self-attention (B, H, S, S))`.
        """
        attended, weights = self.multihead_attention(
            x, x, x, attention_mask=padding_mask, return_attention_scores=True, training=training
        )  # (B, S, D), (B, H, S, S)
        addnorm1 = self.add_norm1(x + self.dropout1(attended, training=training))  # (B, S, D)
        hidden = self.feed_forward2(self.feed_forward1(addnorm1))  # (B, S, F) -> (B, S, D)
        hidden = self.dropout2(hidden, training=training)
        return self.add_norm2(addnorm1 + hidden), weights

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), **self.sizes, "rate": self.rate}
