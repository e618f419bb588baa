"""Rotary position embeddings (RoPE) in `keras.ops`, for models that train with them.

Shape letters: B batch, H heads, T tokens, D features per head (even), P = D / 2 pairs.
The same rotation as `attnviz.core.positions.apply_rope` (the numpy one the explorer draws;
tested equal): feature p pairs with feature p + D/2 and turns by `position · θ^(-2p/D)`.

    x = [x1, x2]  ->  [x1·cos − x2·sin,  x2·cos + x1·sin]

Use it on the projected queries and keys of each head, before the dot product:

    q = rotary(q_heads)           # (B, H, T, D), positions 0 … T − 1
    k = rotary(k_heads)
    q = rotary(q_step, positions=ops.arange(t, t + 1))  # one decoding step at position t
"""

from __future__ import annotations

from typing import Any

import keras
from keras import ops

from attnviz.core.positions import DEFAULT_ROPE_THETA, check_rope_theta


def rotate(x: Any, positions: Any = None, theta: float = DEFAULT_ROPE_THETA) -> Any:
    """Rotate the feature pairs of each row of `x` by its position, with `keras.ops`.

    Args:
        x: `(..., T, D)` float tensor, D even and known.
        positions: `(T,)` position of each row; defaults to 0 … T − 1.
        theta: the base θ.

    Returns:
        `(..., T, D)` tensor of `x`'s dtype.
    """
    d = x.shape[-1]
    if d is None or d % 2:
        raise ValueError(
            f"RoPE rotates features in pairs: the last axis must have a known, even size. "
            f"Received shape {tuple(x.shape)}."
        )
    if positions is None:
        positions = ops.arange(ops.shape(x)[-2], dtype="float32")  # (T,)
    pairs = ops.arange(0, d, 2, dtype="float32") / d  # (P,) = 2p / D
    frequencies = ops.power(ops.cast(theta, "float32"), -pairs)  # (P,)
    angles = ops.cast(positions, "float32")[:, None] * frequencies[None, :]  # (T, P)
    cos = ops.cast(ops.cos(angles), x.dtype)  # (T, P), broadcasts over the leading axes
    sin = ops.cast(ops.sin(angles), x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]  # (..., T, P) each
    return ops.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)  # (..., T, D)


@keras.saving.register_keras_serializable(package="attnviz")
class RotaryPositions(keras.layers.Layer):
    """A Keras layer applying `rotate`: call it with `x (..., T, D)` and optional `positions (T,)`.

    Args:
        theta: the base θ of the frequencies (10000 by default; 500000 in Llama 3).
    """

    def __init__(self, theta: float = DEFAULT_ROPE_THETA, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.theta = check_rope_theta(theta)

    def call(self, x: Any, positions: Any = None) -> Any:
        return rotate(x, positions, self.theta)

    def compute_output_shape(self, input_shape: tuple) -> tuple:
        return input_shape

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "theta": self.theta}
