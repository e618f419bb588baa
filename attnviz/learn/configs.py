"""The configs of Learn's models: one frozen dataclass per model for its sizes, one for how it
is trained. Plain Python (no TensorFlow), so the pages can read them before TensorFlow loads.

    train(task, NetworkConfig(score="general"), TrainConfig(epochs=4))
    train_transformer(task, TransformerConfig(layers=1), TRANSFORMER_TRAINING)
    train_lm("induction", LMConfig(heads=2), LM_TRAINING)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from attnviz.core.checks import check_choice, check_int, describe
from attnviz.core.limits import (
    MAX_EPOCHS,
    MAX_TRAIN_BATCH,
    MAX_TRAIN_PAIRS,
    MAX_TRAINED_D_MODEL,
    MAX_TRAINED_HEADS,
    MAX_TRAINED_LAYERS,
    MAX_UNITS,
)
from attnviz.core.positions import DEFAULT_ROPE_THETA, check_rope_theta
from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.core.seeding import check_seed

LM_POSITIONS = ("rope", "alibi", "none")  # where a language model's positions come from
NORMS = ("pre", "post")  # where a block's layer normalisation sits


@dataclass(frozen=True)
class NetworkConfig:
    """The sizes and the score of one network (everything but the weights)."""

    score: str = "dot"  # "dot", "general" or "concat"
    scale: bool = False  # divide the scores by sqrt(D)
    embed_dim: int = 32  # E, features of each character embedding
    units: int = 32  # U, GRU units per encoder direction; the decoder has D = 2U
    attention_units: int = 64  # A, the tanh layer after attention (and concat's hidden width)

    def __post_init__(self) -> None:
        check_choice(self.score, "score", SCORE_KINDS)
        if not isinstance(self.scale, (bool, np.bool_)):
            raise ValueError(f"`scale` must be True or False. Received: {describe(self.scale)}.")
        for name in ("embed_dim", "units", "attention_units"):
            check_int(getattr(self, name), name, low=1, high=MAX_UNITS)


@dataclass(frozen=True)
class TransformerConfig:
    """The sizes of a trained Transformer (the score is always the scaled dot product)."""

    layers: int = 2  # L, encoder layers and decoder layers
    heads: int = 4  # H per attention
    d_model: int = 64  # D
    d_ff: int = 128  # F, feed-forward hidden units
    rate: float = 0.0  # dropout while training (none: the tasks have plenty of fresh pairs)

    score: ClassVar[str] = "dot"  # what `TrainingStats` and the pages read as the score
    scale: ClassVar[bool] = True  # MultiHeadAttention divides by sqrt(Dk)

    def __post_init__(self) -> None:
        check_int(self.layers, "layers", low=1, high=MAX_TRAINED_LAYERS)
        check_int(self.heads, "heads", low=1, high=MAX_TRAINED_HEADS)
        check_int(self.d_model, "d_model", low=1, high=MAX_TRAINED_D_MODEL)
        if self.d_model % self.heads:
            raise ValueError(
                f"`d_model` must be divisible by `heads`, so each head gets d_model / heads "
                f"features. Received: d_model={self.d_model}, heads={self.heads}."
            )
        check_int(self.d_ff, "d_ff", low=1, high=4 * MAX_TRAINED_D_MODEL)
        rate = self.rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate < 1:
            raise ValueError(f"`rate` must be a number from 0 up to 1. Received: {describe(rate)}.")

    @property
    def d_k(self) -> int:
        """Query/key (and value) features per head."""
        return self.d_model // self.heads


@dataclass(frozen=True)
class LMConfig:
    """The sizes of a decoder-only language model: causal self-attention (scaled dot product)
    and optional MLP blocks, see `attnviz.learn.language.model`."""

    layers: int = 2  # L, blocks of causal self-attention (each with an MLP when d_ff > 0)
    heads: int = 4  # H, query heads per layer
    d_model: int = 32  # D, features of the residual stream; each head gets D / H
    d_ff: int = 128  # F, hidden units of each block's MLP; 0 = attention only
    kv_heads: int | None = None  # G, key/value heads per layer (dividing H); None = H
    position: str = "rope"  # "rope", "alibi" (inside attention) or "none"
    rope_theta: float = DEFAULT_ROPE_THETA  # RoPE's base θ
    norm: str = "pre"  # "pre": x + f(norm(x)), as GPT-2 on; "post": norm(x + f(x)), as Vaswani

    score: ClassVar[str] = "dot"  # attention is always the scaled dot product
    scale: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_int(self.layers, "layers", low=1, high=MAX_TRAINED_LAYERS)
        check_int(self.heads, "heads", low=1, high=MAX_TRAINED_HEADS)
        check_int(self.d_model, "d_model", low=1, high=MAX_TRAINED_D_MODEL)
        check_int(self.d_ff, "d_ff", low=0, high=4 * MAX_TRAINED_D_MODEL)
        if self.d_model % self.heads:
            raise ValueError(
                f"`d_model` must be divisible by `heads`, so each head gets d_model / heads "
                f"features. Received: d_model={self.d_model}, heads={self.heads}."
            )
        kv = self.heads if self.kv_heads is None else self.kv_heads
        if check_int(kv, "kv_heads", low=1, high=self.heads) and self.heads % kv:
            raise ValueError(
                f"`kv_heads` must divide `heads`: each key/value head serves heads / kv_heads "
                f"query heads. Received: heads={self.heads}, kv_heads={kv}. Use 1 (multi-query), "
                f"a divisor of {self.heads}, or None (one per query head)."
            )
        check_choice(self.position, "position", LM_POSITIONS)
        check_rope_theta(self.rope_theta)
        if self.position == "rope" and self.d_k % 2:
            raise ValueError(
                f'position="rope" rotates each head\'s features in pairs, so d_model / heads must '
                f"be even. Received: d_model={self.d_model}, heads={self.heads} "
                f'(d_k={self.d_k}). Choose an even d_k, or position="alibi" or "none".'
            )
        check_choice(self.norm, "norm", NORMS)

    @property
    def d_k(self) -> int:
        """Query/key (and value) features per head."""
        return self.d_model // self.heads

    @property
    def num_kv_heads(self) -> int:
        """G, the key/value heads per layer."""
        return self.heads if self.kv_heads is None else self.kv_heads


@dataclass(frozen=True)
class TrainConfig:
    """How one model is trained (the network's sizes are in `network`)."""

    epochs: int = 8  # most epochs
    n_pairs: int = 10_000  # training pairs drawn from the seed (a language model: sequences
    # per epoch, fresh every epoch)
    val_pairs: int = 256  # validation pairs (or sequences), from their own stream of the seed
    batch_size: int = 128  # pairs (or sequences) per gradient step
    learning_rate: float = 5e-3  # Adam's step size
    time_limit: float = 120.0  # seconds of training at most (checked after every batch)
    seed: int = 0  # seeds the pairs, the initial weights and the shuffling

    def __post_init__(self) -> None:
        check_int(self.epochs, "epochs", low=1, high=MAX_EPOCHS)
        check_int(self.n_pairs, "n_pairs", low=1, high=MAX_TRAIN_PAIRS)
        check_int(self.val_pairs, "val_pairs", low=1, high=MAX_TRAIN_PAIRS)
        check_int(self.batch_size, "batch_size", low=1, high=MAX_TRAIN_BATCH)
        check_seed(self.seed)
        for name, low, high in (("learning_rate", 0.0, 1.0), ("time_limit", 0.0, 86_400.0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"`{name}` must be a number. Received: {describe(value)}.")
            if not (low < value <= high and math.isfinite(value)):
                raise ValueError(
                    f"`{name}` must be above {low} and at most {high}. Received: {value}."
                )


TRANSFORMER_TRAINING = TrainConfig(epochs=20, batch_size=64, learning_rate=1e-3)  # Adam for a
# Transformer: smaller steps and batches than the GRU models'
LM_TRAINING = TrainConfig(
    epochs=30, n_pairs=4096, val_pairs=512, batch_size=64, learning_rate=5e-3
)  # a small language model on 4,096 fresh sequences an epoch: with this large step the
# induction circuit forms within about ten epochs (at 1e-3 it stays on the plateau for dozens)
