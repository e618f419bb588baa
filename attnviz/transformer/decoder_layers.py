"""Keras 3 layers of the Transformer decoder: fixed sinusoidal embeddings, decoder layer, decoder.

Shape letters: B batch, T target tokens, S source tokens (rows of the encoder output), D model
features (`d_model`), H heads, Dk/Dv query-key/value features per head, F feed-forward units.
See `decoder` for the tutorial these follow, the deliberate differences from it, and the
checked, seeded front door `run_decoder`. These layers do not check their inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import keras
from keras import ops

from attnviz.inputs.text import positional_encoding


@keras.saving.register_keras_serializable(package="attnviz")
class PositionEmbeddingFixedWeights(keras.layers.Layer):
    """Fixed sinusoidal word embeddings plus fixed sinusoidal position embeddings.

    Call with int `tokens (B, T)`, T <= `sequence_length`; returns `(B, T, D)`.
    """

    def __init__(self, sequence_length: int, vocab_size: int, output_dim: int, **kwargs: Any):
        super().__init__(**kwargs)
        self.sequence_length = sequence_length
        self.vocab_size = vocab_size
        self.output_dim = output_dim
        self.word_embedding = keras.layers.Embedding(
            vocab_size, output_dim, weights=[positional_encoding(vocab_size, output_dim)],
            trainable=False, name="word_embedding",
        )  # fmt: skip
        self.position_embedding = keras.layers.Embedding(
            sequence_length, output_dim, weights=[positional_encoding(sequence_length, output_dim)],
            trainable=False, name="position_embedding",
        )  # fmt: skip

    def build(self, input_shape: tuple) -> None:
        """Nothing to create: both tables were built with their fixed weights."""

    def call(self, tokens: Any) -> Any:
        positions = ops.arange(ops.shape(tokens)[-1])  # (T,)
        return self.word_embedding(tokens) + self.position_embedding(positions)  # (B, T, D)

    def get_config(self) -> dict[str, Any]:
        sizes = {"vocab_size": self.vocab_size, "output_dim": self.output_dim}
        return {**super().get_config(), "sequence_length": self.sequence_length, **sizes}


@keras.saving.register_keras_serializable(package="attnviz")
class DecoderLayer(keras.layers.Layer):
    """One decoder layer: masked self-attention, cross-attention, feed-forward, each + Add & Norm.

    Args:
        h: heads H.  d_k: Dk.  d_v: Dv.  d_model: D.  d_ff: F.  rate: dropout rate (training only).
    """

    def __init__(self, h: int, d_k: int, d_v: int, d_model: int, d_ff: int, rate: float, **kwargs):
        super().__init__(**kwargs)
        self.sizes = {"h": h, "d_k": d_k, "d_v": d_v, "d_model": d_model, "d_ff": d_ff}
        self.rate = rate
        mha = {"num_heads": h, "key_dim": d_k, "value_dim": d_v, "use_bias": False}
        self.multihead_attention1 = keras.layers.MultiHeadAttention(**mha, name="self_attention")
        self.dropout1 = keras.layers.Dropout(rate)
        self.add_norm1 = keras.layers.LayerNormalization(name="add_norm1")
        self.multihead_attention2 = keras.layers.MultiHeadAttention(**mha, name="cross_attention")
        self.dropout2 = keras.layers.Dropout(rate)
        self.add_norm2 = keras.layers.LayerNormalization(name="add_norm2")
        self.feed_forward1 = keras.layers.Dense(d_ff, activation="relu", name="feed_forward1")
        self.feed_forward2 = keras.layers.Dense(d_model, name="feed_forward2")
        self.dropout3 = keras.layers.Dropout(rate)
        self.add_norm3 = keras.layers.LayerNormalization(name="add_norm3")

    def build(self, x_shape: tuple, encoder_output_shape: tuple) -> None:
        """Create the weights of every sub-layer for `x (B, T, D)` and `encoder_output (B, S, D)`.

        Building here spares the first call a symbolic trace of `call` by Keras.
        """
        self.multihead_attention1.build(x_shape, x_shape)
        self.multihead_attention2.build(x_shape, encoder_output_shape)
        for norm in (self.add_norm1, self.add_norm2, self.add_norm3):
            norm.build(x_shape)
        self.feed_forward1.build(x_shape)
        self.feed_forward2.build((*x_shape[:-1], self.sizes["d_ff"]))  # (B, T, F)

    def set_arrays(self, arrays: Mapping[str, Any]) -> None:
        """Assign every weight of the built layer from `arrays`, keyed as `LAYER_KEYS` of
        `decoder_forward`, in these variables' shapes (`decoder_forward.keras_weights`)."""
        for key, variable in self._variables_by_key().items():
            variable.assign(arrays[key])

    def _variables_by_key(self) -> dict[str, Any]:
        variables = {}
        attentions = {"self": self.multihead_attention1, "cross": self.multihead_attention2}
        for name, mha in attentions.items():
            variables[f"{name}_W_Q"] = mha.query_dense.kernel  # (D, H, Dk)
            variables[f"{name}_W_K"] = mha.key_dense.kernel  # (D, H, Dk)
            variables[f"{name}_W_V"] = mha.value_dense.kernel  # (D, H, Dv)
            variables[f"{name}_W_O"] = mha.output_dense.kernel  # (H, Dv, D)
        for i, dense in ((1, self.feed_forward1), (2, self.feed_forward2)):
            variables[f"ff{i}_kernel"], variables[f"ff{i}_bias"] = dense.kernel, dense.bias
        for i, norm in enumerate((self.add_norm1, self.add_norm2, self.add_norm3), start=1):
            variables[f"norm{i}_gamma"], variables[f"norm{i}_beta"] = norm.gamma, norm.beta
        return variables

    def call(
        self,
        x,
        encoder_output,
        lookahead_mask=None,
        padding_mask=None,
        training=False,
        return_cross_query=False,
    ):
        """`x (B, T, D)`, `encoder_output (B, S, D)`, bool masks `(B, T, T)` / `(B, T, S)`.

        Returns:
            `(output (B, T, D), self-attention (B, H, T, T), cross-attention (B, H, T, S))`,
            and with `return_cross_query` also the cross-attention's query input `(B, T, D)`
            (the first Add & Norm's output), so its heads can be recomputed.
        """
        attended1, self_weights = self.multihead_attention1(
            x, x, x, attention_mask=lookahead_mask, return_attention_scores=True, training=training
        )  # (B, T, D), (B, H, T, T)
        attended1 = self.dropout1(attended1, training=training)
        addnorm1 = self.add_norm1(x + attended1)  # (B, T, D)
        attended2, cross_weights = self.multihead_attention2(
            addnorm1,  # queries from the decoder
            encoder_output,  # values ...
            encoder_output,  # ... and keys from the encoder
            attention_mask=padding_mask,
            return_attention_scores=True,
            training=training,
        )  # (B, T, D), (B, H, T, S)
        attended2 = self.dropout2(attended2, training=training)
        addnorm2 = self.add_norm2(addnorm1 + attended2)  # the tutorial wrongly reuses add_norm1
        hidden = self.feed_forward2(self.feed_forward1(addnorm2))  # (B, T, F) -> (B, T, D)
        hidden = self.dropout3(hidden, training=training)
        output = self.add_norm3(addnorm2 + hidden)
        if return_cross_query:
            return output, self_weights, cross_weights, addnorm1
        return output, self_weights, cross_weights

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), **self.sizes, "rate": self.rate}


@keras.saving.register_keras_serializable(package="attnviz")
class Decoder(keras.layers.Layer):
    """Embedding + positional encoding, dropout, then N `DecoderLayer`s.

    Call with int `target_tokens (B, T)`, `encoder_output (B, S, D)`, and optional bool masks
    `lookahead_mask (B, T, T)` (look-ahead AND target padding) and `padding_mask (B, T, S)`
    (source padding), True = may attend. Returns `(output (B, T, D), self-attention per layer,
    cross-attention per layer)`, the last two tuples of N tensors `(B, H, T, T)` and
    `(B, H, T, S)`.
    """

    def __init__(
        self,
        vocab_size: int,
        sequence_length: int,
        h: int,
        d_k: int,
        d_v: int,
        d_model: int,
        d_ff: int,
        n: int,
        rate: float,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.sizes = {"vocab_size": vocab_size, "sequence_length": sequence_length, "n": n}
        self.layer_sizes = {"h": h, "d_k": d_k, "d_v": d_v, "d_model": d_model, "d_ff": d_ff}
        self.rate = rate
        self.pos_encoding = PositionEmbeddingFixedWeights(sequence_length, vocab_size, d_model)
        self.dropout = keras.layers.Dropout(rate)
        self.decoder_layer = [
            DecoderLayer(h, d_k, d_v, d_model, d_ff, rate, name=f"decoder_layer_{i}")
            for i in range(n)
        ]

    def build(self, target_tokens_shape: tuple, encoder_output_shape: tuple) -> None:
        """Create every layer's weights for `target_tokens (B, T)`, `encoder_output (B, S, D)`."""
        x_shape = (*target_tokens_shape, self.layer_sizes["d_model"])  # (B, T, D)
        for layer in self.decoder_layer:
            layer.build(x_shape, encoder_output_shape)

    def call(
        self, target_tokens, encoder_output, lookahead_mask=None, padding_mask=None, training=False
    ):
        x = self.pos_encoding(target_tokens)  # (B, T) -> (B, T, D)
        x = self.dropout(x, training=training)
        self_weights, cross_weights = [], []
        for layer in self.decoder_layer:
            x, self_w, cross_w = layer(
                x, encoder_output, lookahead_mask, padding_mask, training=training
            )  # (B, T, D), (B, H, T, T), (B, H, T, S)
            self_weights.append(self_w)
            cross_weights.append(cross_w)
        return x, tuple(self_weights), tuple(cross_weights)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), **self.sizes, **self.layer_sizes, "rate": self.rate}
