"""Pooling a large matrix into an overview of blocks, for heatmaps that stay small and fast.

Shape letters: T rows, S columns, R x C blocks. Pure numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import check_choice

MAX_SIDE = 256  # most heatmap cells per side before drawing a pooled overview
POOL_RULES = ("mean", "mass", "any")


@dataclass(frozen=True)
class PooledMatrix:
    """A matrix reduced to at most `max_side` blocks per side (blocks of one cell if it fits)."""

    values: np.ndarray  # (R, C) float32 pooled values, NaN where the block is blocked
    blocked: np.ndarray  # (R, C) bool, True = every cell of the block is blocked
    row_edges: np.ndarray  # (R + 1,) int, block r holds rows row_edges[r] to row_edges[r+1] - 1
    col_edges: np.ndarray  # (C + 1,) int, the same for columns

    @property
    def block_shape(self) -> tuple[int, int]:
        """Rows x columns of source cells in one (full) block."""
        return int(self.row_edges[1]), int(self.col_edges[1])

    @property
    def is_overview(self) -> bool:
        """True if some block holds more than one cell."""
        return self.block_shape != (1, 1)


def pool_matrix(
    values: np.ndarray, blocked: np.ndarray, *, max_side: int = MAX_SIDE, rule: str = "mean"
) -> PooledMatrix:
    """Pool `(T, S)` values into blocks of ceil(T / max_side) x ceil(S / max_side) cells.

    Args:
        values: `(T, S)` float array; blocked cells may hold anything (-inf, NaN).
        blocked: `(T, S)` bool, True = blocked.
        max_side: most blocks per side.
        rule: "mean" of the allowed cells; "mass": sum of the allowed cells over the block's
            columns, mean over its rows (pooled attention rows still sum to one); "any": 1.0.

    Returns:
        A `PooledMatrix` of `(R, C)` blocks; a block is blocked if all its cells are.
    """
    check_choice(rule, "rule", POOL_RULES)
    row_edges = _block_edges(values.shape[0], max_side)  # (R + 1,)
    col_edges = _block_edges(values.shape[1], max_side)  # (C + 1,)
    sizes = (int(row_edges[1]), int(col_edges[1]))  # rows x columns of a full block
    allowed = ~blocked
    counts = _block_sums(allowed, sizes, np.int32)  # (R, C) allowed cells per block
    pooled_blocked = counts == 0
    if rule == "any":
        pooled = np.ones(counts.shape)
    else:
        sums = _block_sums(np.where(allowed, values, 0), sizes, values.dtype)  # (R, C)
        rows = np.diff(row_edges)[:, None]  # (R, 1) rows per block
        pooled = sums / np.where(pooled_blocked, 1, counts) if rule == "mean" else sums / rows
    pooled = np.where(pooled_blocked, np.nan, pooled).astype(np.float32)
    return PooledMatrix(pooled, pooled_blocked, row_edges, col_edges)


def _block_edges(n: int, max_side: int) -> np.ndarray:
    """`(blocks + 1,)` edges of blocks of ceil(n / max_side) positions (the last may be short)."""
    return np.append(np.arange(0, n, math.ceil(n / max_side)), n)


def _block_sums(cells: np.ndarray, sizes: tuple[int, int], dtype: Any) -> np.ndarray:
    """`(T, S)` -> `(R, C)` sums over blocks of `sizes` cells (the last ones may be short)."""
    by_rows = _group_sums(cells, sizes[0], dtype)  # (T, S) -> (R, S)
    return _group_sums(by_rows.T, sizes[1], dtype).T  # (S, R) -> (C, R) -> (R, C)


def _group_sums(cells: np.ndarray, size: int, dtype: Any) -> np.ndarray:
    """`(N, M)` -> `(ceil(N / size), M)` sums of consecutive groups of `size` rows.

    A reshape and sum: ten times faster than `np.add.reduceat` along the first axis.
    """
    if size == 1:
        return cells.astype(dtype, copy=False)
    full = cells.shape[0] // size * size
    sums = cells[:full].reshape(-1, size, cells.shape[1]).sum(axis=1, dtype=dtype)
    if full < cells.shape[0]:  # a shorter last group
        sums = np.concatenate([sums, cells[full:].sum(axis=0, keepdims=True, dtype=dtype)])
    return sums
