"""Tiled attention with the online softmax: how a fused kernel (FlashAttention) gets the same
numbers without ever holding the full score matrix.

Shape letters: T queries, S keys, D query/key features, Dv value features; a tile covers Tq
queries (`query_tile`) and Tk keys (`key_tile`).

For each query tile, the keys and values arrive one tile at a time. Each query row keeps three
things: the largest logit so far m, the sum l of exp(logit − m) so far, and the output so far,
unnormalised (acc = Σ exp(logit − m)·v). When a tile arrives with larger logits, m rises to the
new maximum and the old l and acc are multiplied by exp(m_old − m_new), so every term is as if
it had been computed with the final maximum from the start:

    m_new = max(m_old, max_j s_j)        l = l·exp(m_old − m_new) + Σ_j exp(s_j − m_new)
    acc = acc·exp(m_old − m_new) + Σ_j exp(s_j − m_new)·v_j        output = acc / l

Only the tile's `(Tq, Tk)` scores exist at once. The weights, which a kernel never writes, are
recomputed here at the end from each tile's logits and the final m and l, to compare with
`compute_attention`. Masks, padding, RoPE and ALiBi act on each tile by position exactly as in
`compute_attention`; with "-inf" a row that sees nothing keeps l = 0 and gets zeros, with "-1e9"
it averages, as there. A tile the mask hides completely is skipped (with "-inf"), as causal
kernels skip the tiles above the diagonal. Pure numpy, float64 arithmetic on the float32 inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import (
    as_float_array,
    check_array_cells,
    check_score_cells,
    check_size,
    read_only,
)
from attnviz.core.limits import MAX_ARRAY_CELLS, MAX_TILE_STEPS
from attnviz.core.masks import NEG_LARGE, check_padding_mask
from attnviz.core.positions import alibi_slope, apply_rope, linear_bias
from attnviz.core.settings import AttentionSettings

BYTES_PER_NUMBER = 4  # float32, as a kernel stores scores and outputs


@dataclass(frozen=True)
class TileStep:
    """One (query tile, key tile) step and the running state of the tile's query rows after it."""

    query_tile: int  # which query tile, from 0
    key_tile: int  # which key tile, from 0
    rows: tuple[int, int]  # the queries [start, stop) of the tile
    cols: tuple[int, int]  # the keys [start, stop) of the tile
    skipped: bool  # the mask hides the whole tile: a kernel skips it; nothing changes
    logits: np.ndarray  # (Tq, Tk) the tile's scores (+ bias), masked: what softmax sees
    max_before: np.ndarray  # (Tq,) running maximum m before the tile (-inf at first)
    max_after: np.ndarray  # (Tq,) m after the tile
    rescale: np.ndarray  # (Tq,) exp(m_before − m_after): what the old l and acc are scaled by
    probs: np.ndarray  # (Tq, Tk) exp(logit − m_after): the tile's unnormalised weights
    sum_before: np.ndarray  # (Tq,) running sum l before the tile
    sum_after: np.ndarray  # (Tq,) l after the tile
    acc_after: np.ndarray  # (Tq, Dv) the unnormalised output Σ exp(s − m)·v after the tile
    output_so_far: np.ndarray  # (Tq, Dv) acc / l: the output if no tile came after (0 if l = 0)


@dataclass(frozen=True)
class TileMemory:
    """Bytes (float32) the plain computation and one tile step need."""

    full_matrix_bytes: int  # the (T, S) score matrix plain attention holds (and weights again)
    tile_matrix_bytes: int  # one (Tq, Tk) tile of scores
    working_set_bytes: int  # one step in all: Q tile, K and V tiles, tile scores, m, l and acc


@dataclass(frozen=True)
class TiledAttention:
    """Every step of tiled attention and the final numbers (read-only arrays)."""

    steps: tuple[TileStep, ...]  # in kernel order: query tile by query tile, keys in order
    weights: np.ndarray  # (T, S) exp(logit − m) / l from the tiles: equals compute_attention
    output: np.ndarray  # (T, Dv) acc / l after the last tile: equals compute_attention
    row_max: np.ndarray  # (T,) final m
    row_sum: np.ndarray  # (T,) final l (0 for a row that sees nothing, with "-inf")
    mask: np.ndarray  # (T, S) bool, True = allowed (assembled from the tiles)
    query_tile: int  # Tq
    key_tile: int  # Tk
    num_query_tiles: int  # ceil(T / Tq)
    num_key_tiles: int  # ceil(S / Tk)
    memory: TileMemory  # full matrix vs one tile
    settings: AttentionSettings  # masks, scaling and positions (score is "dot")
    scale_factor: float  # 1/sqrt(D), or 1.0


def tiled_attention(
    query: Any,
    key: Any,
    value: Any,
    *,
    key_tile: int,
    query_tile: int | None = None,
    key_padding_mask: Any = None,
    settings: AttentionSettings | None = None,
    **keywords: Any,
) -> TiledAttention:
    """Scaled dot-product attention of one sequence, tile by tile with the online softmax.

    Any number of tokens and features, and tiles of any size, within memory: the `(T, S)`
    logits kept to recompute the weights stop at `MAX_SCORE_CELLS`, and what the steps record
    at `MAX_ARRAY_CELLS` numbers in all.

    Args:
        query: `(T, D)` array-like; key: `(S, D)`; value: `(S, Dv)`.
        key_tile: Tk, keys (and values) per tile, from 1.
        query_tile: Tq, queries per tile; None = all T queries in one tile.
        key_padding_mask: bool `(S,)`, True = real token, False = padding.
        settings: masks, scaling and positions as one `AttentionSettings` (its `score` must be
            "dot"; its `seed` is unused: the dot product has no weights); or None, to give
            them as keywords instead (not both).
        **keywords: the fields of `AttentionSettings` by name but `score` and `seed`, as in
            `compute_attention`: scale, causal, window, mask_value, sinks, documents, prefix,
            chunk, position, rope_theta, alibi_heads, alibi_head.

    Returns:
        A `TiledAttention`; its weights and output equal `compute_attention`'s (to 1e-6).

    Raises:
        ValueError: with what is wrong, what is allowed and what was received.
        TypeError: for a keyword that is not one of the attention keywords above.
    """
    settings = AttentionSettings.from_keywords(
        settings, keywords, function="tiled_attention", fixed={"score": "dot"}, derived={"seed": 0}
    )
    q, k, v = _check_inputs(query, key, value)
    (t, d), s = q.shape, k.shape[0]
    tq, tk = _check_tiles(query_tile, key_tile, t, s, v.shape[1])
    settings.mask_spec.check_fits(t, s)
    padding = np.ones(s, bool) if key_padding_mask is None else None
    if padding is None:
        padding = check_padding_mask(key_padding_mask, None, s)[0]  # (S,)
    position, theta = settings.position, settings.rope_theta
    if position == "rope":
        if d % 2:
            raise ValueError(
                f'position="rope" rotates query and key features in pairs: D must be even. '
                f"Received D = {d}."
            )
        q, k = apply_rope(q, np.arange(t), theta), apply_rope(k, np.arange(s), theta)
    slope = None
    if position == "alibi":
        slope = alibi_slope(settings.alibi_heads, settings.alibi_head)
    factor = 1.0 / math.sqrt(d) if settings.scale else 1.0
    run = _Run(q, k, v, padding, settings, slope, factor)
    steps = [run.step(r, c, tq, tk) for r in range(0, t, tq) for c in range(0, s, tk)]
    return run.result(steps, tq, tk)


class _Run:
    """The running state m, l and acc of every query row, and the tiles' logits for the end."""

    def __init__(self, q, k, v, padding, settings: AttentionSettings, slope, factor: float):
        self.q, self.k, self.v, self.padding = q, k, v, padding
        self.settings, self.slope, self.factor = settings, slope, factor
        t, s = q.shape[0], k.shape[0]
        self.m = np.full(t, -np.inf)  # (T,)
        self.l = np.zeros(t)  # (T,)
        self.acc = np.zeros((t, v.shape[1]))  # (T, Dv)
        self.logits = np.empty((t, s))  # (T, S) kept only to recompute the weights at the end
        self.mask = np.empty((t, s), bool)

    def step(self, r0: int, c0: int, tq: int, tk: int) -> TileStep:
        rows = slice(r0, min(r0 + tq, self.q.shape[0]))  # the tile's queries
        cols = slice(c0, min(c0 + tk, self.k.shape[0]))  # the tile's keys and values
        positions = np.arange(rows.start, rows.stop), np.arange(cols.start, cols.stop)
        allowed = self.settings.mask_spec.allowed(*positions) & self.padding[cols]  # (Tq, Tk)
        logits = self._logits(*positions, allowed)  # (Tq, Tk)
        self.logits[rows, cols], self.mask[rows, cols] = logits, allowed
        m_old, l_old = self.m[rows].copy(), self.l[rows].copy()  # (Tq,) each
        m_new = np.maximum(m_old, logits.max(axis=1))  # (Tq,)
        m_safe = np.where(np.isfinite(m_new), m_new, 0.0)  # a row that saw nothing keeps -inf
        rescale = np.where(np.isfinite(m_new), np.exp(m_old - m_safe), 1.0)  # (Tq,)
        probs = np.exp(logits - m_safe[:, None])  # (Tq, Tk); exp(-inf) = 0 exactly
        self.m[rows], self.l[rows] = m_new, l_old * rescale + probs.sum(axis=1)
        # (Tq, Dv) * (Tq, 1) + (Tq, Tk) x (Tk, Dv) -> (Tq, Dv)
        self.acc[rows] = self.acc[rows] * rescale[:, None] + probs @ self.v[cols]
        so_far = _divide(self.acc[rows], self.l[rows])  # (Tq, Dv)
        arrays = (logits, m_old, m_new, rescale, probs, l_old, self.l[rows], self.acc[rows], so_far)
        return TileStep(
            r0 // tq, c0 // tk, (rows.start, rows.stop), (cols.start, cols.stop),
            not allowed.any() and self.settings.mask_value == "-inf",
            *(read_only(a.astype(np.float32)) for a in arrays),
        )  # fmt: skip

    def _logits(self, rows, cols, allowed) -> np.ndarray:
        """The tile's scaled scores plus ALiBi's bias, masked as `compute_attention` masks."""
        scores = (self.q[rows] @ self.k[cols].T) * self.factor  # (Tq, D) x (D, Tk) -> (Tq, Tk)
        if self.slope is not None:
            scores = scores + linear_bias([self.slope], rows, cols)[0]
        if self.settings.mask_value == "-inf":
            return np.where(allowed, scores, -np.inf)
        blocked = (scores.astype(np.float32) + np.float32(NEG_LARGE)).astype(np.float64)  # float32
        return np.where(allowed, scores, blocked)  # as the Keras tutorials add it

    def result(self, steps: list[TileStep], tq: int, tk: int) -> TiledAttention:
        (t, d), (s, d_v) = self.q.shape, self.v.shape
        m = np.where(np.isfinite(self.m), self.m, 0.0)[:, None]  # (T, 1)
        weights = _divide(np.exp(self.logits - m), self.l)  # (T, S)
        working = tq * tk + tq * d + tk * (d + d_v) + tq * (d_v + 2)
        memory = TileMemory(
            full_matrix_bytes=t * s * BYTES_PER_NUMBER,
            tile_matrix_bytes=tq * tk * BYTES_PER_NUMBER,
            working_set_bytes=working * BYTES_PER_NUMBER,
        )
        return TiledAttention(
            steps=tuple(steps),
            weights=read_only(weights.astype(np.float32)),
            output=read_only(_divide(self.acc, self.l).astype(np.float32)),
            row_max=read_only(self.m.astype(np.float32)),
            row_sum=read_only(self.l.astype(np.float32)),
            mask=read_only(self.mask),
            query_tile=tq,
            key_tile=tk,
            num_query_tiles=-(-t // tq),
            num_key_tiles=-(-s // tk),
            memory=memory,
            settings=self.settings,
            scale_factor=self.factor,
        )


def _divide(numerator: np.ndarray, row_sum: np.ndarray) -> np.ndarray:
    """`numerator (N, F) / row_sum (N,)` by rows, 0 where the sum is 0 (a row that saw nothing)."""
    total = row_sum[:, None]  # (N, 1)
    return np.where(total > 0, numerator / np.where(total > 0, total, 1.0), 0.0)


def _check_inputs(query, key, value) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q `(T, D)`, K `(S, D)`, V `(S, Dv)` as float64 arrays of the float32 numbers."""
    q, k, v = (
        as_float_array(x, name, ndim=(2,))
        for x, name in ((query, "query"), (key, "key"), (value, "value"))
    )
    shapes = f"query {q.shape}, key {k.shape}, value {v.shape}"
    if q.shape[1] != k.shape[1] or k.shape[0] != v.shape[0]:
        raise ValueError(
            "Tiled attention scores with the dot product: `query` and `key` need the same "
            f"number of columns, and `key` and `value` the same number of rows. Received: {shapes}."
        )
    hint = "Use a shorter sequence or fewer features."
    for name, x in (("query", q), ("key", k), ("value", v)):
        check_array_cells(x.shape, f"`{name}` (tokens × features) in float64", hint)
    sizes = {"query": q.shape[0], "key": k.shape[0]}
    check_score_cells(sizes, "Use a shorter sequence: the logits of every tile are kept.")
    return tuple(x.astype(np.float32).astype(np.float64) for x in (q, k, v))


def _check_tiles(query_tile: Any, key_tile: Any, t: int, s: int, d_v: int) -> tuple[int, int]:
    """(Tq, Tk), each from 1 (a tile longer than the sequence is the whole sequence), within
    `MAX_TILE_STEPS` steps, and what the steps record within `MAX_ARRAY_CELLS` numbers."""
    sizes = []
    for name, size, default in (("query_tile", query_tile, t), ("key_tile", key_tile, None)):
        if size is None and default is not None:
            sizes.append(default)
            continue
        if isinstance(size, (int, np.integer)) and not isinstance(size, bool) and size < 1:
            raise ValueError(
                f"`{name}` must be 1 or more: a tile holds at least one row. Received: {size}."
            )
        sizes.append(check_size(size, name))
    tq, tk = min(sizes[0], t), min(sizes[1], s)  # a tile never holds more than the sequence
    count = -(-t // tq) * -(-s // tk)
    if count > MAX_TILE_STEPS:
        raise ValueError(
            f"Tiles of {tq} queries × {tk} keys cut {t} queries × {s} keys into {count:,} steps; "
            f"the limit is {MAX_TILE_STEPS:,}. Use larger tiles."
        )
    recorded = count * (2 * tq * tk + 4 * tq + 2 * tq * d_v)  # each step's arrays (TileStep)
    if recorded > MAX_ARRAY_CELLS:
        raise ValueError(
            f"Too large to record: {count:,} steps of {tq} queries × {tk} keys (and {d_v} value "
            f"features) would keep {recorded:,} numbers; the limit is {MAX_ARRAY_CELLS:,} "
            "(1 GiB of float32). Use larger key tiles, smaller query tiles or a shorter sequence."
        )
    return tq, tk
