"""Tests for drawing/pooling.py: overviews of blocks, pinned on small hand-computed matrices."""

import numpy as np
import pytest
from drawing_support import causal_weights

from attnviz.drawing.pooling import pool_matrix

NO = np.zeros((4, 4), dtype=bool)


def test_a_matrix_that_fits_is_kept_cell_for_cell():
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    grid = pool_matrix(values, np.zeros((2, 3), bool), max_side=3)
    np.testing.assert_array_equal(grid.values, values)
    assert grid.block_shape == (1, 1) and not grid.is_overview


def test_mean_of_2x2_blocks():
    values = np.arange(16, dtype=np.float64).reshape(4, 4)
    grid = pool_matrix(values, NO, max_side=2, rule="mean")
    np.testing.assert_allclose(grid.values, [[2.5, 4.5], [10.5, 12.5]])
    np.testing.assert_array_equal(grid.row_edges, [0, 2, 4])
    assert grid.block_shape == (2, 2) and grid.is_overview


def test_mass_keeps_attention_rows_summing_to_one():
    rng = np.random.default_rng(0)
    weights = rng.random((6, 6))
    weights /= weights.sum(axis=1, keepdims=True)
    grid = pool_matrix(weights, np.zeros((6, 6), bool), max_side=3, rule="mass")
    np.testing.assert_allclose(grid.values.sum(axis=1), 1.0, rtol=1e-6)
    # block (0, 0): rows 0-1, columns 0-1: sum over the columns, mean over the rows
    assert grid.values[0, 0] == pytest.approx(weights[:2, :2].sum(axis=1).mean(), rel=1e-6)


def test_mean_ignores_blocked_cells_and_a_fully_blocked_block_is_blocked():
    values = np.array([[1.0, -np.inf, 5.0, 7.0], [3.0, -np.inf, 1.0, 1.0]])
    blocked = np.isinf(values)
    grid = pool_matrix(values, blocked, max_side=2, rule="mean")
    # 2 rows fit; columns pool in pairs: the blocked -inf is left out of its block's mean
    np.testing.assert_allclose(grid.values, [[1.0, 6.0], [3.0, 1.0]])
    assert not grid.blocked.any()
    all_blocked = pool_matrix(values, np.ones_like(blocked), max_side=2, rule="mean")
    assert all_blocked.blocked.all() and np.isnan(all_blocked.values).all()


def test_short_last_block_and_any_rule():
    blocked = np.array([[True, True, False, True, True]])  # (1, 5) -> blocks of 2 columns
    grid = pool_matrix(np.zeros((1, 5)), blocked, max_side=3, rule="any")
    np.testing.assert_array_equal(grid.col_edges, [0, 2, 4, 5])
    np.testing.assert_array_equal(grid.blocked, [[True, False, True]])
    np.testing.assert_array_equal(np.isnan(grid.values), [[True, False, True]])


def test_unknown_rule_is_rejected():
    with pytest.raises(ValueError, match='`rule` must be one of "mean", "mass", "any"'):
        pool_matrix(np.zeros((2, 2)), np.zeros((2, 2), bool), rule="max")


# --- the overview's blocks, by hand ------------------------------------------------------------


def test_pool_mean_of_two_by_two_blocks_by_hand():
    values = np.arange(64.0).reshape(8, 8)
    pooled = pool_matrix(values, np.zeros((8, 8), bool), max_side=4, rule="mean")
    # block (r, c) holds 16r + 2c + {0, 1, 8, 9}: mean 16r + 2c + 4.5
    expected = [
        [4.5, 6.5, 8.5, 10.5],
        [20.5, 22.5, 24.5, 26.5],
        [36.5, 38.5, 40.5, 42.5],
        [52.5, 54.5, 56.5, 58.5],
    ]
    np.testing.assert_array_equal(pooled.values, expected)
    assert pooled.block_shape == (2, 2) and pooled.is_overview
    assert list(pooled.row_edges) == [0, 2, 4, 6, 8]


def test_pool_mean_ignores_blocked_cells_and_blocks_only_fully_blocked_blocks():
    values = np.arange(16.0).reshape(4, 4)
    blocked = np.zeros((4, 4), bool)
    blocked[0, 1] = True  # block (0, 0) keeps 0, 4, 5: mean 3
    blocked[0:2, 2:4] = True  # block (0, 1) fully blocked
    values[0:2, 2:4] = -np.inf
    pooled = pool_matrix(values, blocked, max_side=2, rule="mean")
    np.testing.assert_array_equal(pooled.values, [[3.0, np.nan], [10.5, 12.5]])
    np.testing.assert_array_equal(pooled.blocked, [[False, True], [False, False]])


def test_pool_mass_keeps_rows_summing_to_one_with_short_last_blocks():
    weights, blocked = causal_weights(10)
    pooled = pool_matrix(weights, blocked, max_side=3, rule="mass")  # blocks of 4, 4, 2
    assert list(pooled.row_edges) == [0, 4, 8, 10]
    np.testing.assert_allclose(np.nansum(pooled.values, axis=1), 1.0, rtol=1e-6)
    by_hand = weights[8:10, 4:8].sum() / 2  # sum over the block's keys, mean over its queries
    np.testing.assert_allclose(pooled.values[2, 1], by_hand, rtol=1e-6)


def test_pool_is_identity_when_the_matrix_fits():
    values = np.random.default_rng(0).normal(size=(5, 7))
    pooled = pool_matrix(values, np.zeros((5, 7), bool), max_side=7, rule="mass")
    np.testing.assert_allclose(pooled.values, values, rtol=1e-6)
    assert not pooled.is_overview
