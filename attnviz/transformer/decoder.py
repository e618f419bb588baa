"""The Transformer decoder of "Attention Is All You Need", built from Keras layers, heads exposed.

Shape letters: B batch, T target tokens, S source tokens (rows of the encoder output), D model
features (`d_model`), H heads, Dk/Dv query-key/value features per head, F feed-forward units.

Follows the Machine Learning Mastery tutorial "Implementing the Transformer Decoder From Scratch
in TensorFlow and Keras". Each of the N decoder layers runs

    x -> masked multi-head self-attention -> dropout -> Add & Norm
      -> encoder-decoder multi-head attention (keys/values: encoder output) -> dropout -> Add & Norm
      -> feed-forward (Dense F, ReLU; Dense D) -> dropout -> Add & Norm

Differences from the tutorial, all deliberate:
- Attention is `keras.layers.MultiHeadAttention` with `return_attention_scores=True`, so every
  layer's self-attention `(B, H, T, T)` and cross-attention `(B, H, T, S)` weights come out.
  Its projections have no biases (`use_bias=False`), as in the paper's equations, so a head can be
  recomputed exactly by `multihead.compute_multihead` from the layer's kernels.
- Masks follow Keras: bool `(B, T, S)`, True = may attend (the tutorial's masks are 1 = blocked).
- The second Add & Norm uses its own LayerNormalization (`add_norm2`); the tutorial calls
  `add_norm1` twice, sharing one set of gamma/beta between two sub-layers.
- Token ids must be integers in [0, vocab_size); the tutorial's test feeds random floats.
Embeddings are the tutorial's `PositionEmbeddingFixedWeights`: fixed (non-trainable) sinusoidal
tables for both the words and the positions, added together.

The Keras layers live in `decoder_layers`; this module checks inputs and runs a seeded decoder
(`run_decoder`) or builds it as Keras layers (`build_decoder`). Both take their weights from
`decoder_forward.draw_weights`; `run_decoder` computes with `decoder_forward` (the same sub-layers
in arrays, attention by `multihead`), which gives the Keras layers' numbers (tested) without
creating ~100 Keras layers and their variables on every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import (
    as_float_array,
    check_array_cells,
    check_heads,
    check_int,
    check_size,
    describe,
    read_only,
)
from attnviz.core.limits import (
    MAX_BATCH,
    MAX_D_FF,
    MAX_DECODER_TOKENS,
    MAX_LAYERS,
    MAX_SCORE_CELLS,
    MAX_VOCAB,
)
from attnviz.core.masks import build_mask, check_padding_mask
from attnviz.core.seeding import check_seed
from attnviz.core.ways import way_mask
from attnviz.heads.calls import AttentionCall, AttentionCalls, frozen_labels
from attnviz.transformer.decoder_forward import (
    DecoderWeights,
    decoder_forward,
    draw_weights,
    keras_weights,
)
from attnviz.transformer.decoder_layers import Decoder, DecoderLayer, PositionEmbeddingFixedWeights
from attnviz.transformer.head_weights import head_costs
from attnviz.transformer.multihead import _check_head_sizes

__all__ = [
    "Decoder",
    "DecoderConfig",
    "DecoderLayer",
    "DecoderResult",
    "PositionEmbeddingFixedWeights",
    "build_decoder",
    "run_decoder",
]


@dataclass(frozen=True)
class DecoderConfig:
    """The sizes of a decoder; the defaults are the tutorial's (and the paper's base model)."""

    vocab_size: int = 20  # V, token ids run from 0 to V - 1
    sequence_length: int = 5  # most target tokens T (rows of the position table)
    h: int = 8  # heads H
    d_k: int = 64  # query/key features per head
    d_v: int = 64  # value features per head
    d_model: int = 512  # D, features per token
    d_ff: int = 2048  # F, hidden units of the feed-forward sub-layer
    n: int = 6  # decoder layers N
    rate: float = 0.1  # dropout rate; used only when training, never by `run_decoder`
    seed: int = 0  # seeds the weights (`decoder_forward.draw_weights`)

    def __post_init__(self) -> None:
        check_int(self.vocab_size, "vocab_size", low=1, high=MAX_VOCAB)
        check_size(self.sequence_length, "sequence_length")
        check_heads(self.h, "h")
        check_size(self.d_model, "d_model", unit="features")
        _check_head_sizes(self.d_model, self.h, self.d_k, self.d_v)
        check_int(self.d_ff, "d_ff", low=1, high=MAX_D_FF)
        hint = "Use fewer features (d_model), positions, feed-forward units or token ids."
        rows = {"position table": self.sequence_length, "embedding": self.vocab_size}
        for what, count in {**rows, "feed-forward weight": self.d_ff}.items():
            check_array_cells((count, self.d_model), f"the {what} (rows × d_model)", hint)
        check_int(self.n, "n", low=1, high=MAX_LAYERS)
        attention = head_costs(self.d_model, self.h, self.h, self.d_k, self.d_v).param_count
        check_array_cells(
            (self.n, 2, attention),
            "the attention weights of all layers (layers × 2 attentions × weights each)",
            "Use fewer layers, fewer heads or fewer features per head.",
        )
        check_seed(self.seed)
        rate = self.rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate < 1:
            raise ValueError(
                f"`rate` (dropout) must be a number from 0 up to (not including) 1. "
                f"Received: {describe(rate)}."
            )


@dataclass(frozen=True)
class DecoderResult:
    """One inference run of the decoder, as read-only numpy arrays (float32 / bool)."""

    output: np.ndarray  # (B, T, D) the last layer's output
    # every attention, layer by layer, self then cross: "decoder_layer_<i>/self_attention" (way
    # "causal", or "bidirectional" with the look-ahead mask off) and ".../cross_attention", each
    # with its weights (B, H, T, S), its mask (B, T, S) and labels "t<j>=<id>" (rows, the target
    # tokens) and "s<j>" (the source positions)
    attention: AttentionCalls
    config: DecoderConfig  # the sizes and seed of the decoder that ran

    @property
    def self_attention(self) -> tuple[np.ndarray, ...]:
        """N arrays `(B, H, T, T)`, layer 0 first: every layer's self-attention weights."""
        return tuple(call.weights for call in self.attention if call.kind == "self")

    @property
    def cross_attention(self) -> tuple[np.ndarray, ...]:
        """N arrays `(B, H, T, S)`, layer 0 first: every layer's cross-attention weights."""
        return tuple(call.weights for call in self.attention if call.kind == "cross")

    @property
    def self_mask(self) -> np.ndarray:
        """`(B, T, T)` bool given to self-attention, True = may attend."""
        return self.attention.calls[0].mask

    @property
    def cross_mask(self) -> np.ndarray:
        """`(B, T, S)` bool given to cross-attention, True = may attend."""
        return self.attention.calls[1].mask


def build_decoder(config: DecoderConfig) -> Decoder:
    """The Keras `Decoder` of `config`, built, holding the weights `run_decoder` computes with.

    Its weights are `decoder_forward.draw_weights` of the config (drawn from `config.seed` as
    Keras's default initialisers draw them), so the same config gives the same decoder, and its
    call gives `run_decoder`'s numbers. Dropout (`config.rate`) acts only with `training=True`.
    """
    decoder = Decoder(
        config.vocab_size, config.sequence_length, config.h, config.d_k, config.d_v,
        config.d_model, config.d_ff, config.n, config.rate,
    )  # fmt: skip
    decoder.build((1, config.sequence_length), (1, 1, config.d_model))
    weights = _draw(config)
    for index, layer in enumerate(decoder.decoder_layer):
        layer.set_arrays(keras_weights(weights, index))
    return decoder


def _draw(config: DecoderConfig) -> DecoderWeights:
    return draw_weights(
        config.vocab_size, config.sequence_length, config.h, config.d_k, config.d_v,
        config.d_model, config.d_ff, config.n, config.seed,
    )  # fmt: skip


def run_decoder(
    target_tokens: Any,
    encoder_output: Any,
    *,
    h: int = 8,
    d_k: int = 64,
    d_v: int = 64,
    d_model: int = 512,
    d_ff: int = 2048,
    n: int = 6,
    vocab_size: int = 20,
    causal: bool = True,
    source_padding_mask: Any = None,
    target_padding_mask: Any = None,
    seed: int = 0,
) -> DecoderResult:
    """Run a seeded decoder at inference (dropout off); `build_decoder` gives it as Keras layers.

    Args:
        target_tokens: int `(B, T)` token ids in [0, vocab_size).
        encoder_output: `(B, S, d_model)` the encoder's output (keys and values of cross-attention).
        h, d_k, d_v, d_model, d_ff, n, vocab_size: sizes, as in `DecoderConfig`.
        causal: apply the look-ahead mask in self-attention.
        source_padding_mask: bool `(S,)` or `(B, S)`, True = real source token; masks the keys of
            cross-attention.
        target_padding_mask: bool `(T,)` or `(B, T)`, True = real target token; masks the keys
            of self-attention (together with the look-ahead mask).
        seed: seeds the weights; the same seed and sizes give the same decoder.

    Raises:
        ValueError: with what is wrong, what is allowed and what was received.
    """
    tokens = _check_tokens(target_tokens, vocab_size)
    batch, t = tokens.shape
    config = DecoderConfig(vocab_size, t, h, d_k, d_v, d_model, d_ff, n, 0.1, seed)
    memory = _check_encoder_output(encoder_output, batch, d_model)
    _check_run_size(config, batch, t, memory.shape[1])
    paddings = _check_paddings(batch, t, memory.shape[1], target_padding_mask, source_padding_mask)
    self_mask, cross_mask = _decoder_masks(batch, t, memory.shape[1], causal, *paddings)
    output, self_weights, cross_weights = decoder_forward(
        _draw(config), tokens, memory, causal, *paddings
    )
    rows = frozen_labels([[f"t{j}={token}" for j, token in enumerate(row)] for row in tokens])
    sources = frozen_labels([[f"s{j}" for j in range(memory.shape[1])]] * batch)
    masks = {"self": read_only(self_mask), "cross": read_only(cross_mask)}
    ways = {"self": "causal" if causal else "bidirectional", "cross": "cross"}
    calls = [
        AttentionCall(
            key=f"decoder_layer_{layer}/{kind}_attention", kind=kind, way=ways[kind],
            layer=layer, weights=read_only(np.asarray(weights)), mask=masks[kind],
            row_labels=rows, col_labels=rows if kind == "self" else sources,
        )
        for layer, pair in enumerate(zip(self_weights, cross_weights, strict=True))
        for kind, weights in zip(("self", "cross"), pair, strict=True)
    ]  # fmt: skip
    return DecoderResult(read_only(np.asarray(output)), AttentionCalls(tuple(calls)), config)


def _check_paddings(
    batch: int, t: int, s: int, target_padding: Any, source_padding: Any
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The padding masks as bool `(B, T)` and `(B, S)`, True = real token, or None."""
    if target_padding is not None:
        target_padding = check_padding_mask(target_padding, batch, t, name="target_padding_mask")
    if source_padding is not None:
        source_padding = check_padding_mask(source_padding, batch, s, name="source_padding_mask")
    return target_padding, source_padding


def _decoder_masks(
    batch: int, t: int, s: int, causal: bool, target_padding: Any, source_padding: Any
) -> tuple[np.ndarray, np.ndarray]:
    """The self-attention `(B, T, T)` and cross-attention `(B, T, S)` masks, True = attend."""
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"`causal` must be True or False. Received: {describe(causal)}.")
    # the decoder's two attentions are two of the three ways (see `core.ways`)
    if causal:
        self_mask = way_mask("causal", s, t, target_padding_mask=target_padding)
    else:  # look-ahead off: the target attends itself both ways
        self_mask = build_mask(batch, t, t, key_padding_mask=target_padding)
    cross_mask = way_mask("cross", s, t, source_padding_mask=source_padding)
    return np.broadcast_to(self_mask, (batch, t, t)), np.broadcast_to(cross_mask, (batch, t, s))


def _check_tokens(target_tokens: Any, vocab_size: Any) -> np.ndarray:
    """Token ids as int32 `(B, T)`, each in [0, vocab_size)."""
    vocab_size = check_int(vocab_size, "vocab_size", low=1, high=MAX_VOCAB)
    try:
        tokens = np.asarray(target_tokens)
    except (TypeError, ValueError) as err:
        raise ValueError(
            "`target_tokens` could not be read as a matrix of token ids: rows of equal length "
            f"are needed. Received: {describe(target_tokens)}."
        ) from err
    if tokens.dtype == bool or tokens.dtype.kind not in "iu":
        raise ValueError(
            f"`target_tokens` must hold whole-number token ids from 0 to {vocab_size - 1}. "
            f"Received: {describe(target_tokens)}. Draw them with "
            f"np.random.default_rng().integers(0, {vocab_size}, size=(B, T))."
        )
    if tokens.ndim != 2 or 0 in tokens.shape:
        raise ValueError(
            "`target_tokens` must be 2-D (B, T): one row of token ids per sentence. "
            f"Received shape {tokens.shape}. For one sentence, wrap it in a list: [[...]]."
        )
    if tokens.min() < 0 or tokens.max() >= vocab_size:
        bad = int(tokens.min()) if tokens.min() < 0 else int(tokens.max())
        raise ValueError(
            f"`target_tokens` must be from 0 to {vocab_size - 1} (vocab_size={vocab_size}). "
            f"Received a token id {bad}. Raise `vocab_size` or fix the ids."
        )
    return tokens.astype(np.int32)


def _check_encoder_output(encoder_output: Any, batch: int, d_model: Any) -> np.ndarray:
    """The encoder output as float32 `(B, S, D)`, matching the tokens' batch and `d_model`."""
    memory = as_float_array(encoder_output, "encoder_output", ndim=(3,))
    if memory.shape[0] != batch or memory.shape[2] != d_model:
        raise ValueError(
            f"`encoder_output` must have shape (B, S, d_model) = ({batch}, S, {d_model}): one "
            f"matrix per row of `target_tokens`, d_model columns. Received shape {memory.shape}."
        )
    return memory.astype(np.float32)


def _check_run_size(config: DecoderConfig, batch: int, t: int, s: int) -> None:
    """Keep the tokens and the stored attention weights within the limits."""
    if batch > MAX_BATCH or batch * max(t, s) > MAX_DECODER_TOKENS:
        raise ValueError(
            f"Too many tokens for the decoder: {batch} sequences × {max(t, s)} tokens; the limit "
            f"is {MAX_DECODER_TOKENS} tokens in all (and {MAX_BATCH} sequences). Use fewer or "
            "shorter sequences."
        )
    cells = config.n * batch * config.h * t * (t + s)
    if cells > MAX_SCORE_CELLS:
        raise ValueError(
            f"Too many attention weights to keep: {config.n} layers × {batch} sequences × "
            f"{config.h} heads × {t} × ({t} + {s}) = {cells:,}; the limit is "
            f"{MAX_SCORE_CELLS:,}. Use fewer layers, heads or tokens."
        )
