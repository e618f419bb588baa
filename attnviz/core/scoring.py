"""Scoring functions as Keras 3 layers: how much each query matches each key.

Shape letters: B batch, T queries, S keys, Dq query features, Dk key features, U concat units.
Every layer maps `query (B, T, Dq)` and `key (B, S, Dk)` to `scores (B, T, S)`, optionally divided
by sqrt(Dk). A new scoring function is a small subclass that overrides `_calculate_scores`, as
Keras's `AdditiveAttention` does with `Attention`. The layers are serialisable through
`get_config` and can be dropped into any Keras model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import keras
import numpy as np
from keras import ops

from attnviz.core.checks import check_array_cells, check_choice
from attnviz.core.score_kinds import (
    CONCAT,
    DOT,
    GENERAL,
    SCORE_KINDS,
    SCORE_KINDS_BY_NAME,
    ScoreKind,
)
from attnviz.core.seeding import seeded_rng
from attnviz.core.weights import check_weight_names, resolve_weights

CONCAT_BLOCK_CELLS = 1 << 22  # most B*t*S*U floats one concat block holds (16 MB in float32)


@keras.saving.register_keras_serializable(package="attnviz")
class AttentionScore(keras.layers.Layer):
    """Base scoring layer: `scores = f(query, key)`, then optionally `/ sqrt(Dk)`.

    Args:
        scale: divide the scores by sqrt(Dk), the number of key features.
    """

    kind: ScoreKind | None = None  # name, formulas and weights of the score (see score_kinds)

    def __init__(self, scale: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scale = bool(scale)

    def build(self, query_shape: tuple, key_shape: tuple) -> None:
        """Create the learned weights (none for the base and dot scores)."""

    def call(self, query: Any, key: Any) -> Any:
        scores = self._calculate_scores(query, key)  # (B, T, S)
        if self.scale:
            d_k = key.shape[-1]
            if d_k is None:  # traced for any width (see attention.dot_attention): the same
                # float32 divisor, sqrt being correctly rounded in float32 and in float64
                d_k_float = ops.cast(ops.shape(key)[-1], scores.dtype)
                return scores / ops.sqrt(d_k_float)
            scores = scores / math.sqrt(d_k)
        return scores

    def _calculate_scores(self, query: Any, key: Any) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "scale": self.scale}


@keras.saving.register_keras_serializable(package="attnviz")
class DotScore(AttentionScore):
    """Dot-product score `q · k` (Vaswani et al.); needs Dq == Dk."""

    kind = DOT

    def _calculate_scores(self, query: Any, key: Any) -> Any:
        return ops.matmul(query, ops.swapaxes(key, -1, -2))  # (B, T, D) x (B, D, S) -> (B, T, S)


@keras.saving.register_keras_serializable(package="attnviz")
class GeneralScore(AttentionScore):
    """Luong's general score `q W kᵀ` with a learned `W (Dq, Dk)`."""

    kind = GENERAL

    def build(self, query_shape: tuple, key_shape: tuple) -> None:
        self.W = self.add_weight(name="W", shape=(query_shape[-1], key_shape[-1]))

    def _calculate_scores(self, query: Any, key: Any) -> Any:
        projected = ops.matmul(query, self.W)  # (B, T, Dq) x (Dq, Dk) -> (B, T, Dk)
        return ops.matmul(projected, ops.swapaxes(key, -1, -2))  # (B, T, Dk) x (B, Dk, S)


@keras.saving.register_keras_serializable(package="attnviz")
class ConcatScore(AttentionScore):
    """Bahdanau's additive (concat) score `v · tanh(q W_q + k W_k [+ b])`.

    Args:
        units: U, the width of the hidden tanh layer.
        use_bias: add the learned bias `b (U,)` inside the tanh.
    """

    kind = CONCAT

    def __init__(self, units: int, use_bias: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.units = int(units)
        self.use_bias = bool(use_bias)

    def build(self, query_shape: tuple, key_shape: tuple) -> None:
        self.W_q = self.add_weight(name="W_q", shape=(query_shape[-1], self.units))
        self.W_k = self.add_weight(name="W_k", shape=(key_shape[-1], self.units))
        self.v = self.add_weight(name="v", shape=(self.units,))
        self.b = (
            self.add_weight(name="b", shape=(self.units,), initializer="zeros")
            if (self.use_bias)
            else None
        )

    def _calculate_scores(self, query: Any, key: Any) -> Any:
        q_proj = ops.matmul(query, self.W_q)  # (B, T, Dq) x (Dq, U) -> (B, T, U)
        k_proj = ops.matmul(key, self.W_k)  # (B, S, Dk) x (Dk, U) -> (B, S, U)
        if self.b is not None:
            k_proj = k_proj + self.b  # (B, S, U)
        # The (B, t, S, U) tanh tensor is the memory peak: score a block of queries at a time.
        batch, t, s = q_proj.shape[0] or 1, q_proj.shape[1], k_proj.shape[1]
        if t is None or s is None:  # symbolic lengths inside a Keras model: no blocking
            return self._score_block(q_proj, k_proj)
        rows = max(1, CONCAT_BLOCK_CELLS // max(1, batch * s * self.units))
        if rows >= t:
            return self._score_block(q_proj, k_proj)
        blocks = [self._score_block(q_proj[:, i : i + rows], k_proj) for i in range(0, t, rows)]
        return ops.concatenate(blocks, axis=1)  # (B, T, S)

    def _score_block(self, q_proj: Any, k_proj: Any) -> Any:
        hidden = ops.tanh(q_proj[:, :, None, :] + k_proj[:, None, :, :])  # (B, t, S, U)
        return ops.einsum("btsu,u->bts", hidden, self.v)  # (B, t, S)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "units": self.units, "use_bias": self.use_bias}


def draw_param(name: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Draw one weight reproducibly from `seed` (Glorot-uniform; biases start at zero).

    Each name has its own random stream (`seeding.seeded_rng`), so giving one weight never
    changes the others.
    """
    if name == "b":
        return np.zeros(shape, dtype=np.float32)
    fan_in = shape[0]
    fan_out = shape[1] if len(shape) > 1 else 1
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return seeded_rng(seed, f"score\0{name}").uniform(-limit, limit, size=shape).astype(np.float32)


def resolve_params(
    kind: str, dq: int, dk: int, params: Mapping[str, Any] | None, seed: int
) -> dict[str, np.ndarray]:
    """Check the user's weights and draw the missing ones from `seed`.

    Returns:
        The float32 weights the score layer will use, by name ("b" only when given).
    """
    given = check_weight_names(params, None, f'score="{kind}"')  # names: by resolve_weights
    units = _concat_units(given, dk) if kind == "concat" else 0
    shapes = SCORE_KINDS_BY_NAME[kind].param_shapes(dq, dk, units)
    hint = "Use fewer query or key features (or fewer concat units)."
    for name, shape in shapes.items():
        check_array_cells(shape, f'the weight {name} of score="{kind}"', hint)
    return resolve_weights(
        params,
        shapes,
        lambda: {name: draw_param(name, shape, seed) for name, shape in shapes.items()},
        f'score="{kind}"',
        optional=("b",),  # the concat bias is used only when given
    )


def _concat_units(given: Mapping[str, Any], dk: int) -> int:
    """U for concat scoring: from a given weight's shape, else Dk."""
    for name, axis in (("W_q", 1), ("W_k", 1), ("v", 0), ("b", 0)):
        if name in given:
            shape = np.shape(given[name])
            if len(shape) > axis and shape[axis] >= 1:
                return int(shape[axis])
    return dk


def make_score_layer(
    kind: str, dq: int, dk: int, *, scale: bool, params: Mapping[str, np.ndarray]
) -> AttentionScore:
    """Build the scoring layer for `kind`, with its weights set to `params`."""
    check_choice(kind, "score", SCORE_KINDS)
    if kind == "dot":
        layer: AttentionScore = DotScore(scale=scale)
    elif kind == "general":
        layer = GeneralScore(scale=scale)
    else:
        layer = ConcatScore(units=params["W_q"].shape[1], use_bias="b" in params, scale=scale)
    layer.build((None, None, dq), (None, None, dk))
    for weight in layer.weights:
        weight.assign(params[weight.name])
    return layer
