"""The Keras network of a seq2seq translator with attention (Luong style, seed 002's parts).

Shape letters: B batch, S source positions, T target positions (decoder steps), E embedding
features, U encoder units per direction, D = 2U decoder units (= encoder output features),
A attentional units, V target vocabulary size.

    source ids (B, S) -> Embedding -> bidirectional GRU -> keys/values enc (B, S, D)
                                          └─ final states [fwd; bwd] (B, D) ─┐
    decoder inputs (B, T) -> Embedding -> GRU (initial state) -> states dec (B, T, D)
    ScoredAttention(score layer)(query=dec, value=enc, mask=source padding) -> context (B, T, D)
    Dense tanh([context; dec]) (B, T, A) -> Dense -> logits (B, T, V)

Why Luong and not Bahdanau: seed 002 (the TensorFlow NMT tutorial) attends with the decoder
state *before* each GRU step and feeds the context into the GRU, which forces a Python loop over
target steps in training. Attending *after* the GRU step (Luong et al. 2015) needs no feedback
loop: the GRU runs over all teacher-forced steps at once, then one `ScoredAttention` call
scores all T decoder states against all S encoder states: training is a few large operations
per batch instead of a loop of small ones, and each weight row is read the same way. The
decoder starts from the encoder's final states (as in the tutorial). The dot score needs
Dq == Dk, hence D = 2U decoder units.

Attention is attnviz's own `ScoredAttention` with its score layers (`DotScore`,
`GeneralScore`, `ConcatScore`): the one implementation of masking, softmax and the weighted
sum. The source padding mask is always applied, so padding never gets attention weight.
"""

from __future__ import annotations

from dataclasses import dataclass

import keras
from keras import ops

from attnviz.core.attention import ScoredAttention
from attnviz.core.scoring import ConcatScore, DotScore, GeneralScore
from attnviz.learn.configs import NetworkConfig
from attnviz.learn.translation.vocab import PAD, Vocabulary


@dataclass(frozen=True)
class Networks:
    """The model to train and its two halves, which share its layers (and weights)."""

    trainer: keras.Model  # [source (B, S), decoder inputs (B, T)] -> logits (B, T, V)
    encoder: Encoder  # source (B, S) -> enc (B, S, D), state (B, D)
    decoder: Decoder  # (decoder inputs, enc, state, source) -> logits, weights, dec (B, T, D)


def _score_layer(config: NetworkConfig) -> keras.layers.Layer:
    """The attnviz score layer of `config.score` (concat with A hidden units, no bias)."""
    if config.score == "dot":
        return DotScore(scale=config.scale, name="score")
    if config.score == "general":
        return GeneralScore(scale=config.scale, name="score")
    return ConcatScore(config.attention_units, scale=config.scale, name="score")


class Encoder(keras.layers.Layer):
    """Source ids -> embeddings -> bidirectional GRU, padding skipped.

    Returns `enc (B, S, D)`, the keys and values of attention, and `[fwd; bwd] (B, D)`, the
    final states of both directions, which start the decoder. The padding mask is used inside
    and not passed on (attention gets its own, explicit mask).
    """

    def __init__(self, vocab_size: int, embed_dim: int, units: int, **kwargs):
        super().__init__(**kwargs)
        self.embedding = keras.layers.Embedding(vocab_size, embed_dim, name="embedding")
        gru = keras.layers.GRU(units, return_sequences=True, return_state=True, name="gru")
        self.rnn = keras.layers.Bidirectional(gru, name="bidirectional")

    def build(self, source_shape: tuple) -> None:
        """Every weight, in the order `call` first uses them (no trace of `call`)."""
        self.embedding.build(source_shape)
        self.rnn.build((*source_shape, self.embedding.output_dim))  # (B, S, E)

    def compute_output_shape(self, source_shape: tuple) -> tuple:
        """`enc (B, S, D)` and `state (B, D)`, D = 2U (both directions)."""
        d = 2 * self.rnn.forward_layer.units
        return (*source_shape, d), (source_shape[0], d)

    def call(self, source):
        real = ops.not_equal(source, PAD)  # (B, S)
        enc, fwd, bwd = self.rnn(self.embedding(source), mask=real)  # (B, S, D), (B, U) twice
        enc = ops.where(real[:, :, None], enc, 0.0)  # (B, S, D): zeros at padding, no mask kept
        return enc, ops.concatenate([fwd, bwd], axis=-1)  # (B, S, D), (B, D)


class Decoder(keras.layers.Layer):
    """Teacher-forced decoder: embeddings -> GRU -> attention over `enc` -> logits.

    Call with `decoder_inputs (B, T)` ids, `enc (B, S, D)`, `state (B, D)` (the GRU's initial
    state) and `source (B, S)` ids (for the padding mask); returns `logits (B, T, V)`,
    `weights (B, T, S)` and the decoder states `dec (B, T, D)`, the queries of attention.
    """

    def __init__(self, config: NetworkConfig, vocab_size: int, **kwargs):
        super().__init__(**kwargs)
        self.embedding = keras.layers.Embedding(vocab_size, config.embed_dim, name="embedding")
        self.gru = keras.layers.GRU(2 * config.units, return_sequences=True, name="gru")
        self.attention = ScoredAttention(_score_layer(config), name="attention")
        self.combine = keras.layers.Dense(config.attention_units, "tanh", name="combine")
        self.logits = keras.layers.Dense(vocab_size, name="logits")

    def build(self, decoder_inputs_shape: tuple, enc_shape: tuple, state_shape: tuple,
              source_shape: tuple) -> None:  # fmt: skip
        """Every weight, in the order `call` first uses them (no trace of `call`)."""
        self.embedding.build(decoder_inputs_shape)
        self.gru.build((*decoder_inputs_shape, self.embedding.output_dim))  # (B, T, E)
        dec_shape = (*decoder_inputs_shape, self.gru.units)  # (B, T, D)
        self.attention.build(dec_shape, enc_shape)
        self.combine.build((*decoder_inputs_shape, self.gru.units + enc_shape[-1]))  # (B, T, 2D)
        self.logits.build((*decoder_inputs_shape, self.combine.units))  # (B, T, A)

    def compute_output_shape(self, decoder_inputs_shape, enc_shape, state_shape, source_shape):
        """`logits (B, T, V)`, `weights (B, T, S)` and `dec (B, T, D)`."""
        return (
            (*decoder_inputs_shape, self.logits.units),
            (*decoder_inputs_shape, enc_shape[1]),
            (*decoder_inputs_shape, self.gru.units),
        )

    def call(self, decoder_inputs, enc, state, source):
        dec = self.gru(self.embedding(decoder_inputs), initial_state=state)  # (B, T, D)
        real = ops.not_equal(source, PAD)  # (B, S)
        rows = ops.ones_like(decoder_inputs, dtype="bool")  # (B, T)
        mask = ops.logical_and(rows[:, :, None], real[:, None, :])  # (B, T, 1) & (B, 1, S)
        # query, value, key, mask: the mask goes by position, as `mask=` would make Keras take
        # it for a propagated Keras mask and warn that ScoredAttention "destroys" it
        context, weights = self.attention(
            dec, enc, enc, mask, return_attention_scores=True
        )  # (B, T, D), (B, T, S)
        both = ops.concatenate([context, dec], axis=-1)  # (B, T, 2D)
        return self.logits(self.combine(both)), weights, dec  # (B, T, V), (B, T, S), (B, T, D)

    def step(self, token, state, dec, t, enc, mask):
        """One step of greedy decoding: the GRU's step `t` on `token (B,)` ids from `state (B, D)`
        makes row `t` of the decoder states `dec (B, T, D)`; then attention and the logits of
        every row, as `call` computes them (the same shapes, hence the same arithmetic: row `t`
        is bit for bit what `call` gives on the same inputs; the rows after `t` are not read).

        `mask (B, T, S)`: True where a key may be attended (the source's real characters).
        Returns the new state `(B, D)`, `dec`, `logits (B, T, V)` and `weights (B, T, S)`.
        """
        state, _ = self.gru.cell(self.embedding(token), [state], training=False)  # (B, D)
        row = ops.one_hot(t, ops.shape(dec)[1], dtype="bool")  # (T,)
        dec = ops.where(row[None, :, None], state[:, None, :], dec)  # row t is the new state
        context, weights = self.attention(dec, enc, enc, mask, return_attention_scores=True)
        both = ops.concatenate([context, dec], axis=-1)  # (B, T, 2D)
        return state, dec, self.logits(self.combine(both)), weights


def build_networks(config: NetworkConfig, vocab: Vocabulary) -> Networks:
    """Build the (untrained) networks; weights are drawn from Keras's global seed."""
    source = keras.Input((vocab.max_source_len,), dtype="int32", name="source")  # (B, S)
    dec_in = keras.Input((vocab.target_steps,), dtype="int32", name="decoder_inputs")  # (B, T)
    encoder = Encoder(vocab.source_size, config.embed_dim, config.units, name="encoder")
    decoder = Decoder(config, vocab.target_size, name="decoder")
    enc, state = encoder(source)  # (B, S, D), (B, D)
    logits, _, _ = decoder(dec_in, enc, state, source)  # (B, T, V)
    trainer = keras.Model([source, dec_in], logits, name="seq2seq")
    return Networks(trainer, encoder, decoder)
