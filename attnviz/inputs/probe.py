"""The position probe: every token has the same content, so the scores show position alone.

Shape letters: H heads, T tokens, D features. With identical tokens, attention without positions
scores every pair the same; what a position scheme adds is then the whole score pattern:

- "sinusoidal": `(x + PE_i)·(x + PE_j)`, which depends on i and j, not only on i − j;
- "rope": `rope(x, i)·rope(x, j)`, which depends on i − j only (constant along every
  diagonal);
- "alibi": `x·x − m_h·|i − j|`, one straight penalty per head.

Queries and keys are the tokens themselves (no projections); scores are divided by sqrt(D), as
`compute_attention` divides them (and equal its scores on the same inputs). Pure numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import (
    as_float_array,
    check_array_cells,
    check_choice,
    check_heads,
    check_score_cells,
    check_size,
    read_only,
)
from attnviz.core.positions import (
    DEFAULT_ROPE_THETA,
    POSITION_SCHEMES,
    alibi_bias,
    alibi_slopes,
    apply_rope,
)
from attnviz.inputs.text import positional_encoding


@dataclass(frozen=True)
class PositionProbe:
    """The scores of T identical tokens under one position scheme (read-only float64)."""

    position: str  # "none", "sinusoidal", "rope" or "alibi"
    content: np.ndarray  # (D,) what every token is
    inputs: np.ndarray  # (T, D) the queries and keys: the content, plus PE_i for "sinusoidal"
    scores: np.ndarray  # (H, T, T) scaled scores; H = num_heads for "alibi", else 1
    slopes: np.ndarray | None  # (H,) ALiBi's slopes, or None
    relative: bool  # every diagonal is constant: the scores depend only on i − j
    by_offset: np.ndarray | None  # (H, 2T − 1) the score at offset i − j = −(T − 1) … T − 1,
    # when `relative`; else None


def position_probe(
    length: int,
    d_model: int,
    position: str,
    *,
    num_heads: int = 1,
    rope_theta: float = DEFAULT_ROPE_THETA,
    content: Any = None,
) -> PositionProbe:
    """Score `length` copies of one token under `position`.

    Any number of tokens, features and heads within memory: the `(H, T, T)` scores stop at
    `MAX_SCORE_CELLS` cells and the `(T, D)` inputs at `MAX_ARRAY_CELLS` numbers.

    Args:
        length: T tokens.
        d_model: D features (even for "rope").
        position: "none", "sinusoidal", "rope" or "alibi".
        num_heads: ALiBi's heads H (one score matrix per head, the paper's slopes).
        rope_theta: RoPE's base θ.
        content: `(D,)` the token; defaults to all ones.

    Returns:
        A `PositionProbe`.
    """
    t = check_size(length, "length")
    d = check_size(d_model, "d_model", unit="features")
    check_choice(position, "position", POSITION_SCHEMES)
    h = check_heads(num_heads)
    check_array_cells((t, d), "the inputs (tokens × features)", "Use fewer tokens or features.")
    heads = h if position == "alibi" else 1
    check_score_cells({"head": heads, "query": t, "key": t}, "Use fewer tokens or heads.")
    x = np.ones(d) if content is None else _check_content(content, d)  # (D,)
    inputs = np.tile(x, (t, 1))  # (T, D)
    if position == "sinusoidal":
        inputs = inputs + positional_encoding(t, d)
    rows = apply_rope(inputs, theta=rope_theta) if position == "rope" else inputs  # (T, D)
    scores = (rows @ rows.T / math.sqrt(d))[None]  # (T, D) x (D, T) -> (1, T, T)
    slopes = None
    if position == "alibi":
        slopes = alibi_slopes(h)
        scores = scores + alibi_bias(h, t, t)  # (1, T, T) + (H, T, T) -> (H, T, T)
    by_offset = _diagonals(scores)  # (H, 2T - 1) or None
    return PositionProbe(
        position=position,
        content=read_only(x),
        inputs=read_only(inputs),
        scores=read_only(scores),
        slopes=None if slopes is None else read_only(slopes),
        relative=by_offset is not None,
        by_offset=None if by_offset is None else read_only(by_offset),
    )


def _diagonals(scores: np.ndarray) -> np.ndarray | None:
    """`(H, 2T − 1)` the value of each diagonal, offset i − j from −(T − 1), if every
    diagonal is constant (to 1e-9 of the largest score); else None."""
    tolerance = 1e-9 * max(1.0, float(np.abs(scores).max()))
    # constant diagonals: each cell equals the one above and to the left of it
    if np.abs(scores[:, 1:, 1:] - scores[:, :-1, :-1]).max(initial=0.0) > tolerance:
        return None
    below = scores[:, ::-1, 0]  # (H, T): offsets T − 1 … 0, down the first column
    above = scores[:, 0, 1:]  # (H, T − 1): offsets −1 … −(T − 1), along the first row
    return np.concatenate([above[:, ::-1], below[:, ::-1]], axis=1)  # (H, 2T − 1)


def _check_content(content: Any, d: int) -> np.ndarray:
    x = as_float_array(np.atleast_2d(content), "content", ndim=(2,))
    if x.shape != (1, d):
        raise ValueError(
            f"`content` must be one token of {d} features (d_model). Received shape "
            f"{np.shape(content)}."
        )
    return x[0]
