"""The configs of Learn's models: one frozen dataclass per model for its sizes, one for how it
is trained. Plain Python (no TensorFlow), so the pages can read them before TensorFlow loads.

    train(task, NetworkConfig(score="general"), TrainConfig(epochs=4))
    train_transformer(task, TransformerConfig(layers=1), TRANSFORMER_TRAINING)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from attnviz.core.checks import check_choice, check_int, describe
from attnviz.core.limits import (
    MAX_EPOCHS,
    MAX_HEADS,
    MAX_TRAIN_BATCH,
    MAX_TRAIN_PAIRS,
    MAX_TRAINED_D_MODEL,
    MAX_TRAINED_LAYERS,
    MAX_UNITS,
)
from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.core.seeding import check_seed


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
        check_int(self.heads, "heads", low=1, high=MAX_HEADS)
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
class TrainConfig:
    """How one model is trained (the network's sizes are in `network`)."""

    epochs: int = 8  # most epochs
    n_pairs: int = 10_000  # training pairs drawn from the seed
    val_pairs: int = 256  # validation pairs, from their own stream of the seed
    batch_size: int = 128  # pairs per gradient step
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
