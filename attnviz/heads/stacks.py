"""Stacks of attention weights: every head of one layer, or of every layer, for one sequence.

Shape letters: L layers, H heads, T queries, S keys.

The check that head summaries, attention rollout and the model view start with: weights come
as one layer `(H, T, S)`, as a stack `(L, H, T, S)`, as a list of L layers `(H, T, S)` of one
shape, or as the `LayerStack` of a trace's calls (`AttentionCalls.layer_stack`, one sequence).
Pure numpy: nothing here imports TensorFlow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from attnviz.core.checks import describe, numeric_array
from attnviz.heads.calls import LayerStack

WEIGHT_SLACK = 1e-5  # float32 softmax rows may overshoot [0, 1] by a few ulps


def as_layer_stack(weights: Any, name: str = "weights") -> np.ndarray:
    """`weights` as a float64 `(L, H, T, S)` stack of attention weights in [0, 1].

    Args:
        weights: `(H, T, S)` (one layer, L = 1), `(L, H, T, S)`, a list of L `(H, T, S)`
            arrays of the same shape (one sequence: pick the batch item first), or a
            `LayerStack` of attention calls (`AttentionCalls.layer_stack`).
        name: what error messages call the argument.

    Returns:
        A new float64 array `(L, H, T, S)`.

    Raises:
        ValueError: for layers of different shapes, another rank, empty axes, values that are
            not finite or lie outside [0, 1].
    """
    if isinstance(weights, LayerStack):  # the calls of one trace, for one sequence
        weights = weights.weights
    if isinstance(weights, (list, tuple)):
        _check_same_shapes(weights, name)
    stack = numeric_array(weights, name).astype(np.float64)
    if stack.ndim == 3:
        stack = stack[None]  # (H, T, S) -> (1, H, T, S)
    if stack.ndim != 4 or 0 in stack.shape:
        raise ValueError(
            f"`{name}` must be the attention weights of one sequence: (H, T, S) for one layer "
            f"or (L, H, T, S) for L layers, none of them empty. Received: {describe(stack)}. "
            "For a batch (B, H, T, S), pick one sequence: weights[b]."
        )
    _check_probabilities(stack, name)
    return stack


def _check_same_shapes(layers: Sequence[Any], name: str) -> None:
    """A list of layers must be non-empty and hold arrays of one shape."""
    shapes = [_layer_shape(layer, f"{name}[{i}]") for i, layer in enumerate(layers)]
    if not shapes or any(shape != shapes[0] for shape in shapes):
        raise ValueError(
            f"`{name}` must list layers of one shape (H, T, S). Received shapes {shapes}. "
            "Self-attention (T, T) and cross-attention (T, S) are separate stacks."
        )


def _layer_shape(layer: Any, name: str) -> tuple[int, ...]:
    """The shape of one layer's weights; ragged nested lists get `numeric_array`'s message."""
    try:
        return np.shape(layer)
    except ValueError:  # numpy refuses ragged nested sequences
        return numeric_array(layer, name).shape  # raises, saying the rows differ in length


def _check_probabilities(stack: np.ndarray, name: str) -> None:
    """Weights must be finite and lie in [0, 1] (up to `WEIGHT_SLACK`)."""
    if not np.isfinite(stack).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(stack))[0])
        raise ValueError(
            f"`{name}` holds {stack[where]} at {where}. Attention weights are finite "
            "probabilities from 0 to 1; masked cells hold 0, not -inf or NaN."
        )
    low, high = float(stack.min()), float(stack.max())
    if low < -WEIGHT_SLACK or high > 1 + WEIGHT_SLACK:
        raise ValueError(
            f"`{name}` must hold attention weights from 0 to 1. Received values from {low:.4g} "
            f"to {high:.4g}. Pass the softmax output, not the scores (logits)."
        )


def check_token_mask(mask: Any, t: int, name: str = "mask") -> np.ndarray:
    """A bool `(T,)` mask of real query tokens (True = real, False = padding); all True if None.

    Raises:
        ValueError: for anything but T True/False (or 1/0) values, or a mask with no real token.
    """
    if mask is None:
        return np.ones(t, dtype=bool)
    try:
        array = np.asarray(mask)
    except (TypeError, ValueError):  # ragged nested lists
        array = np.asarray(None)
    bools = array.dtype == bool or (array.dtype.kind in "iuf" and np.isin(array, (0, 1)).all())
    if not bools or array.shape != (t,):
        raise ValueError(
            f"`{name}` must be {t} True/False values, one per query token (True = real token, "
            f"False = padding). Received: {describe(mask)}."
        )
    if not array.any():
        raise ValueError(
            f"`{name}` marks no token as real: there is no row to summarise. Received: "
            f"{describe(mask)}. Set True for the real tokens."
        )
    return array.astype(bool)
