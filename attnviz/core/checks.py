"""Input checks shared by the public entry points.

Every check raises `ValueError` with a message in the Keras pattern: what is wrong, what is
allowed, what was received, and a hint on how to fix it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attnviz.core.limits import MAX_ABS_VALUE, MAX_ARRAY_CELLS, MAX_SCORE_CELLS
from attnviz.core.words import plural


def describe(value: Any) -> str:
    """A short, safe description of a received value for error messages."""
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_float_array(value: Any, name: str, *, ndim: tuple[int, ...] = (2, 3)) -> np.ndarray:
    """Convert an array-like to a finite float64 numpy array with one of the allowed ranks.

    Raises:
        ValueError: for ragged or non-numeric input, a wrong rank, empty axes or non-finite values.
    """
    array = numeric_array(value, name)
    allowed = " or ".join(f"{n}-D" for n in ndim)
    if array.ndim not in ndim:
        raise ValueError(
            f"`{name}` must be {allowed} (rows × columns, optionally with a leading batch axis). "
            f"Received shape {array.shape}."
        )
    if 0 in array.shape:
        raise ValueError(
            f"`{name}` is empty: shape {array.shape}. Give at least one row and one column."
        )
    return check_finite(array.astype(np.float64, copy=False), name)


def numeric_array(value: Any, name: str) -> np.ndarray:
    """`value` as a real numpy array of numbers (or bools), any shape; NaN and infinities pass.

    The one place an array-like from a user becomes an array: every reader of matrices, weights
    and figures starts here, so all of them say the same thing about ragged or non-numeric input.
    """
    if value is None:
        raise ValueError(f"`{name}` is missing. Give a matrix of numbers (rows of equal length).")
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as err:  # ragged nested lists
        raise ValueError(
            f"`{name}` could not be read as a matrix: its rows have different lengths or it "
            f"holds something other than numbers. Received: {describe(value)}. "
            "Give every row the same number of columns."
        ) from err
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise ValueError(
            f"`{name}` must hold numbers only. Received: {describe(value)}. "
            "Remove text and give every row the same number of columns."
        )
    if np.iscomplexobj(array):
        raise ValueError(f"`{name}` must hold real numbers. Received complex dtype {array.dtype}.")
    return array


def check_finite(array: np.ndarray, name: str) -> np.ndarray:
    """`array` itself if every number is finite and at most `MAX_ABS_VALUE` in magnitude."""
    if not np.all(np.isfinite(array)):
        bad = np.argwhere(~np.isfinite(array))[0]
        where = ", ".join(str(int(i)) for i in bad)
        raise ValueError(
            f"`{name}` holds a non-finite number ({array[tuple(bad)]}) at index ({where}). "
            "Only finite numbers are allowed: replace NaN and infinity with ordinary values."
        )
    biggest = float(np.abs(array).max(initial=0.0))
    if biggest > MAX_ABS_VALUE:
        raise ValueError(
            f"`{name}` holds a number too large to compute with ({biggest:.3g}). "
            f"Values must have magnitude at most {MAX_ABS_VALUE:.0e}; rescale your matrix."
        )
    return array


def check_int(value: Any, name: str, *, low: int, high: int | None = None) -> int:
    """Check that `value` is an integer within [low, high] and return it as `int`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"`{name}` must be a whole number. Received: {describe(value)}.")
    if value < low or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"{low} or more"
        raise ValueError(f"`{name}` must be {span}. Received: {value}.")
    return int(value)


def check_heads(value: Any, name: str = "num_heads") -> int:
    """A number of attention heads: any whole number from 1 up to where memory stops.

    Every head scores at least one cell, so more than `MAX_SCORE_CELLS` heads could never be
    computed; the functions that compute with the heads then check their own cell counts.
    """
    whole = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if whole and value > MAX_SCORE_CELLS:
        raise ValueError(
            f"`{name}` is too large: every head scores at least one attention cell and the "
            f"limit is {MAX_SCORE_CELLS:,} cells (the memory the weights take). Received: "
            f"{value:,}. Use fewer heads."
        )
    return check_int(value, name, low=1)


def check_size(value: Any, name: str, *, low: int = 1, unit: str = "tokens") -> int:
    """A number of tokens or features (a length, a width, a window): any whole number from
    `low` that an array can hold.

    The maths takes any sequence length and any width; only memory stops it. No array holds more
    than `MAX_ARRAY_CELLS` numbers, so no sequence has more tokens and no row more features; the
    arrays a function builds from its sizes are then checked whole (`check_array_cells`,
    `check_score_cells`).

    Args:
        value: the size given.
        name: its argument name, for the message.
        low: the smallest size allowed.
        unit: what it counts ("tokens", "features"), for the message.
    """
    whole = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if whole and value > MAX_ARRAY_CELLS:
        raise ValueError(
            f"`{name}` is too large to hold in memory: no array holds more than "
            f"{MAX_ARRAY_CELLS:,} numbers (1 GiB of float32), so no more {unit} than that. "
            f"Received: {value:,}. Use fewer {unit}."
        )
    return check_int(value, name, low=low)


def check_score_cells(
    sizes: dict[str, int], hint: str, *, limit: int = MAX_SCORE_CELLS, whose: str = ""
) -> None:
    """Refuse more than `limit` attention cells, the product of `sizes` (counts by what they
    count, such as {"sequence": B, "head": H, "query": T, "key": S}), saying each count.

    Args:
        sizes: the counts whose product is the number of cells, by the (singular) thing each
            counts.
        hint: how to stay within the limit.
        limit: `MAX_SCORE_CELLS` (memory), or a page's own smaller limit.
        whose: whose limit it is, for the message ("" = memory's; "this page's").
    """
    cells = math.prod(sizes.values())
    if cells > limit:
        counts = " × ".join(plural(size, what) for what, size in sizes.items())
        owner = whose or "the memory limit: each stage is one array of float32"
        raise ValueError(
            f"Too many attention cells: {counts} = {cells:,}; the limit is {limit:,} ({owner}). "
            f"{hint}"
        )


def check_array_cells(shape: tuple[int, ...], what: str, hint: str) -> None:
    """Refuse an array of more than `MAX_ARRAY_CELLS` numbers, naming it and its shape."""
    cells = math.prod(shape)
    if cells > MAX_ARRAY_CELLS:
        sizes = " × ".join(f"{size:,}" for size in shape)
        raise ValueError(
            f"Too large to hold in memory: {what} would have {sizes} = {cells:,} numbers; the "
            f"limit is {MAX_ARRAY_CELLS:,} per array (1 GiB of float32). {hint}"
        )


def check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    """Check that `value` is one of the allowed strings."""
    if value not in choices:
        listed = ", ".join(f'"{c}"' for c in choices)
        raise ValueError(f"`{name}` must be one of {listed}. Received: {describe(value)}.")
    return value


def read_only(array: Any) -> np.ndarray:
    """`array` as a numpy array that cannot be written to (results are frozen, arrays too)."""
    array = np.asarray(array)
    array.flags.writeable = False
    return array
