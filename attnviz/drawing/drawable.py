"""The matrices a chart can draw: numbers checked, blocked cells found, and a clear
`ValueError` for anything no colour can show.

Shape letters: T rows (queries), S columns (keys or features). Cells that are -inf count as
blocked; NaN is allowed in blocked cells only; weights must lie in [0, 1] and a mask hold 0/1.
Pure numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnviz.core.checks import describe, numeric_array


def drawable_matrix(matrix: Any, blocked: Any, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Check the matrix and the blocked cells; return `(T, S)` float values and bool blocked."""
    values = as_matrix(matrix, "matrix", ndim=2)
    blocked = as_blocked(blocked, values.shape)
    if kind == "mask":
        if not np.isin(values, (0.0, 1.0)).all():
            raise ValueError(
                "kind 'mask' draws a mask: `matrix` must hold only True/False or 1/0 "
                f"(1 = allowed). Received values from {np.nanmin(values):.3g} to "
                f"{np.nanmax(values):.3g}. Use kind 'weights' or 'signed' for numbers."
            )
        return values, blocked | (values == 0)
    finite = np.isfinite(values)
    if not finite.all():
        blocked = blocked | (values == -np.inf)
        _check_drawable(values, finite | blocked, "matrix")
    if kind == "weights":
        _check_weights(values, blocked, "matrix")
    return values, blocked


def as_matrix(value: Any, name: str, *, ndim: int) -> np.ndarray:
    """An `ndim`-D, non-empty float32 or float64 array (NaN and infinities still allowed)."""
    array = numeric_array(value, name)
    if array.ndim != ndim or 0 in array.shape:
        raise ValueError(
            f"`{name}` must be a non-empty {ndim}-D array. Received shape {array.shape}. "
            "Draw one matrix at a time (pick one batch item and one head)."
        )
    return array if array.dtype in (np.float32, np.float64) else array.astype(np.float64)


def as_blocked(blocked: Any, shape: tuple[int, ...]) -> np.ndarray:
    """`blocked` as a bool array of `shape` (all False if None)."""
    if blocked is None:
        return np.zeros(shape, dtype=bool)
    array = np.asarray(blocked)
    if array.shape != shape or not (array.dtype == bool or np.isin(array, (0, 1)).all()):
        raise ValueError(
            f"`blocked` must be True/False with the values' shape {shape} (True = blocked). "
            f"Received: {describe(array)}."
        )
    return array.astype(bool)


def _check_drawable(values: np.ndarray, drawable: np.ndarray, name: str) -> None:
    """Reject cells that are neither finite nor blocked (NaN, +inf): no colour can show them."""
    if not drawable.all():
        where = tuple(int(i) for i in np.argwhere(~drawable)[0])
        raise ValueError(
            f"`{name}` holds {values[where]} at {where}, a cell that is not blocked. Only "
            "finite numbers can be drawn; mark masked cells in `blocked` (-inf counts as blocked)."
        )


def _check_weights(values: np.ndarray, blocked: np.ndarray, name: str) -> None:
    """Allowed weights must lie in [0, 1] (a little float32 slack allowed)."""
    allowed = ~blocked
    low = float(np.min(values, where=allowed, initial=np.inf))
    high = float(np.max(values, where=allowed, initial=-np.inf))
    if low < -1e-6 or high > 1 + 1e-6:
        raise ValueError(
            f"kind 'weights' draws probabilities from 0 to 1, but `{name}` holds values from "
            f"{low:.4g} to {high:.4g}. Use kind 'signed' for scores."
        )
