"""Position schemes inside attention: rotary embeddings (RoPE) and linear biases (ALiBi).

Shape letters: H heads, T queries, S keys, D features (even for RoPE), P = D / 2 feature pairs.
Pure numpy (float64), so the explorer, the KV cache and tiled attention share one definition;
`attnviz.transformer.rotary` is the same rotation in `keras.ops` for models that train with it.

**RoPE** (Su et al., RoFormer) rotates each pair of query and key features by an angle that
grows with the token's position m: pair p turns by `m·ω_p`, with `ω_p = θ^(-2p/D)`. Then

    rope(q, m) · rope(k, n) = Σ_p |q_p| |k_p| cos(φ_p + (m − n)·ω_p)

depends on the positions only through m − n: the score sees relative positions. Feature p is
paired with feature p + D/2 (the "rotate half" layout of GPT-NeoX, Llama in Hugging Face and
`keras_hub.layers.RotaryEmbedding`, whose `max_wavelength` is θ), not with its neighbour p + 1
as in the paper: the same rotation up to an order of the features, and equal to keras_hub's.

    rope(x, m) = [x1·cos(m·ω) − x2·sin(m·ω),  x2·cos(m·ω) + x1·sin(m·ω)],  x = [x1, x2] halves

**ALiBi** (Press et al., "Train Short, Test Long") adds no position to the inputs: head h adds
`−m_h · |i − j|` to score (i, j), a penalty growing linearly with distance. The slopes m_h are a
geometric sequence, `2^(−8/H), 2^(−16/H), …` for H a power of two (the paper's
`get_slopes`, also keras_hub's `AlibiBias` with its default `alibi_bias_max=8`). Below the
diagonal (j <= i, the causal case the paper trains) the bias is the paper's `−m_h (i − j)`;
attnviz mirrors it above the diagonal, so without a causal mask it stays a distance penalty.
keras_hub's `AlibiBias` adds `m_h (j − (S − 1))` instead: on every causal row that differs from
ours by a constant, so softmax gives the same weights.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attnviz.core.checks import (
    check_heads,
    check_int,
    check_score_cells,
    check_size,
    describe,
    numeric_array,
)
from attnviz.core.limits import MAX_POSITION, MAX_ROPE_THETA

POSITION_SCHEMES = ("none", "sinusoidal", "rope", "alibi")  # every scheme a page may offer
ATTENTION_POSITIONS = ("none", "rope", "alibi")  # those attention applies ("sinusoidal" is added
# to the inputs before attention, by `attnviz.inputs.text.encode_sentences`)
DEFAULT_ROPE_THETA = 10_000.0  # RoFormer's and Llama 2's base; Llama 3 uses 500,000
ALIBI_MAX_BIAS = 8  # the paper's 8: slopes start at 2^(-8/H)


def check_rope_theta(theta: Any) -> float:
    """The RoPE base θ as a float in (0, MAX_ROPE_THETA], or a ValueError that says so."""
    if isinstance(theta, bool) or not isinstance(theta, (int, float, np.integer, np.floating)):
        raise ValueError(f"`rope_theta` must be a number. Received: {describe(theta)}.")
    if not (math.isfinite(theta) and 0 < theta <= MAX_ROPE_THETA):
        raise ValueError(
            f"`rope_theta` (the RoPE base θ) must be greater than 0 and at most "
            f"{MAX_ROPE_THETA:.0e}. Received: {theta}. Pair p turns by position × θ^(-2p/D): "
            "10000 is the classic base, 500000 Llama 3's."
        )
    return float(theta)


def rope_frequencies(d: int, theta: float = DEFAULT_ROPE_THETA) -> np.ndarray:
    """The angular frequency of each feature pair, `ω_p = θ^(-2p/D)`.

    Args:
        d: D, the (even) number of features rotated.
        theta: the base θ.

    Returns:
        float64 `(D/2,)`: ω_0 = 1 (one radian per position), then slower and slower.
    """
    d = check_rope_width(d, "features")
    theta = check_rope_theta(theta)
    return theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (P,)


def rope_angles(positions: Any, d: int, theta: float = DEFAULT_ROPE_THETA) -> np.ndarray:
    """`(T, D/2)` the angle each pair of a token at each position turns by: `m·ω_p`."""
    m = check_positions(positions, "positions")
    return m[:, None] * rope_frequencies(d, theta)[None, :]  # (T, 1) * (1, P) -> (T, P)


def apply_rope(x: Any, positions: Any = None, theta: float = DEFAULT_ROPE_THETA) -> np.ndarray:
    """Rotate the feature pairs of every row of `x` by its position (see the module doc).

    Args:
        x: `(..., T, D)` array-like, D even (queries or keys, with any leading axes).
        positions: `(T,)` the position of each row; defaults to 0, 1, …, T − 1.
        theta: the base θ of the frequencies.

    Returns:
        float64 `(..., T, D)`, the rotated rows (each pair keeps its length).
    """
    array = numeric_array(x, "x").astype(np.float64)
    if array.ndim < 2:
        raise ValueError(f"`x` must be at least 2-D (rows × features). Received {array.shape}.")
    t, d = array.shape[-2], array.shape[-1]
    check_rope_width(d, "features")
    positions = np.arange(t) if positions is None else positions
    angles = rope_angles(positions, d, theta)  # (T, P)
    if angles.shape[0] != t:
        raise ValueError(
            f"`positions` must give one position per row: {t} rows. "
            f"Received {angles.shape[0]} positions."
        )
    return rotate_pairs(array, np.cos(angles), np.sin(angles))


def rotate_pairs(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """`[x1 cos − x2 sin, x2 cos + x1 sin]` for `x (..., T, D)` and `cos`, `sin` `(T, D/2)`."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]  # (..., T, P) each
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)  # (..., T, D)


def alibi_slopes(num_heads: int, max_bias: float = ALIBI_MAX_BIAS) -> np.ndarray:
    """The ALiBi slope of each head, as in the paper (and keras_hub's `AlibiBias`).

    For H a power of two: `2^(-max_bias/H)` raised to the powers 1 … H. Otherwise the slopes of
    the largest power of two M below H, then every other slope of 2M, as many as needed (H − M).
    Any number of heads (MPT-7B and BLOOM-7B have 32, BLOOM-176B 112), up to
    `check_heads`'s memory limit.

    Args:
        num_heads: H.
        max_bias: the paper's 8 (keras_hub's `alibi_bias_max`): the slopes start at
            `2^(-max_bias/H)`.

    Returns:
        float64 `(H,)`, decreasing for H a power of two: 1/2, 1/4, …, 1/256 for 8 heads.
    """
    h = check_heads(num_heads)
    bias = _check_max_bias(max_bias)
    closest = 1 << (h.bit_length() - 1)  # M, the largest power of two <= H
    first = _power_of_two_slopes(closest, bias)  # (M,)
    extra = _power_of_two_slopes(2 * closest, bias)[0::2][: h - closest]  # (H − M,)
    return np.concatenate([first, extra])


def _power_of_two_slopes(h: int, max_bias: float) -> np.ndarray:
    """float64 `(H,)`: `2^(-max_bias/H)` to the powers 1 … H, for H a power of two."""
    start = 2.0 ** (-max_bias / h)
    return start ** np.arange(1, h + 1, dtype=np.float64)


def _check_max_bias(max_bias: Any) -> float:
    """ALiBi's `max_bias` as a positive, finite float, or a ValueError that says so."""
    number = isinstance(max_bias, (int, float, np.integer, np.floating))
    if isinstance(max_bias, bool) or not number or not (math.isfinite(max_bias) and max_bias > 0):
        raise ValueError(
            "`max_bias` must be a positive number (the paper's 8: the first slope is "
            f"2^(-max_bias/H)). Received: {describe(max_bias)}."
        )
    return float(max_bias)


def alibi_slope(alibi_heads: int, alibi_head: int) -> float:
    """The slope of head `alibi_head` (from 0) of `alibi_heads`: what one head adds."""
    heads = check_heads(alibi_heads, "alibi_heads")
    head = check_int(alibi_head, "alibi_head", low=0, high=heads - 1)
    return float(alibi_slopes(heads)[head])


def linear_bias(
    slopes: Any, query_positions: Any, key_positions: Any, dtype: Any = np.float64
) -> np.ndarray:
    """The ALiBi bias `−m_h · |i − j|` for any query and key positions.

    Args:
        slopes: `(H,)` one slope per head.
        query_positions: `(T,)` positions i of the queries.
        key_positions: `(S,)` positions j of the keys.
        dtype: the float type to compute in (float32 for what attention adds, in one pass).

    Returns:
        `(H, T, S)` of `dtype`.
    """
    m = numeric_array(slopes, "slopes").astype(dtype).reshape(-1)  # (H,)
    i = check_positions(query_positions, "query_positions").astype(dtype)  # (T,)
    j = check_positions(key_positions, "key_positions").astype(dtype)  # (S,)
    sizes = {"head": m.size, "query": i.size, "key": j.size}
    check_score_cells(sizes, "Use fewer heads or fewer positions.")
    penalty = np.abs(np.subtract.outer(i, j))  # (T, S) |i − j|
    np.subtract(0, penalty, out=penalty)  # −|i − j|, +0 (not −0) on the diagonal
    bias = np.empty((m.size, i.size, j.size), dtype)  # (H, T, S)
    for h, slope in enumerate(m):
        np.multiply(penalty, slope, out=bias[h])
    return bias


def alibi_bias(num_heads: int, t: int, s: int) -> np.ndarray:
    """float64 `(H, T, S)`: the bias each head adds, queries and keys at positions 0, 1, …"""
    h, t, s = check_heads(num_heads), check_size(t, "t"), check_size(s, "s")
    check_score_cells({"head": h, "query": t, "key": s}, "Use fewer heads or positions.")
    return linear_bias(alibi_slopes(num_heads), np.arange(t), np.arange(s))


def attention_positions(
    query: np.ndarray, key: np.ndarray, position: str, theta: float, slopes: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """What a position scheme does before the scores, for queries at 0 … T − 1 and keys at
    0 … S − 1: `(query, key, bias)`, float32.

    Args:
        query: `(..., T, D)`; key: `(..., S, D)`.
        position: "rope" rotates both (D even, the same for both); "alibi" gives the bias
            `(H, T, S)` of `slopes (H,)`; "none" returns the inputs and no bias.
        theta: RoPE's base θ.
        slopes: ALiBi's slopes `(H,)` (ignored otherwise).
    """
    t, s = query.shape[-2], key.shape[-2]
    if position == "rope":
        dq, dk = query.shape[-1], key.shape[-1]
        if dq != dk or dq % 2:
            raise ValueError(
                'position="rope" rotates pairs of query and key features at the same '
                "frequencies, so Q and K need the same, even number of columns. Received: Dq "
                f'{dq}, Dk {dk}. Add or drop columns, or use position="none" or "alibi".'
            )
        rotated = (apply_rope(x, np.arange(n), theta) for x, n in ((query, t), (key, s)))
        return (*(x.astype(np.float32) for x in rotated), None)
    if position == "alibi":
        return query, key, linear_bias(slopes, np.arange(t), np.arange(s), np.float32)
    return query, key, None


def check_positions(positions: Any, name: str) -> np.ndarray:
    """`positions` as a finite float64 `(N,)` array of magnitude at most `MAX_POSITION`."""
    array = numeric_array(positions, name)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"`{name}` must be a non-empty list of numbers. Received {array.shape}.")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)) or np.abs(array).max() > MAX_POSITION:
        raise ValueError(
            f"`{name}` must hold finite positions of magnitude at most {MAX_POSITION:.0e}. "
            f"Received values from {array.min()} to {array.max()}."
        )
    return array


def check_rope_width(d: Any, what: str = "features") -> int:
    """`d` if RoPE can rotate that many features (a whole, even number), else a ValueError."""
    d = check_size(d, "d", unit="features")
    if d % 2:
        raise ValueError(
            f"RoPE rotates {what} in pairs, so their number must be even. Received: {d}. "
            "Add or drop one feature column, or choose another position scheme."
        )
    return d
