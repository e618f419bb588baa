"""Tests for attnviz.transformer.head_weights: K/V head choices, their mapping and their costs,
without computing attention (what a page lists beside the K/V heads control)."""

import numpy as np
import pytest

from attnviz.transformer.head_weights import (
    check_kv_heads,
    head_costs,
    kv_head_of,
    multihead_param_shapes,
)


def test_kv_head_of_groups_consecutive_query_heads():
    np.testing.assert_array_equal(kv_head_of(8, 8), np.arange(8))
    np.testing.assert_array_equal(kv_head_of(8, 2), [0, 0, 0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(kv_head_of(6, 1), [0] * 6)


def test_llama_3_8b_layer_costs():
    # Llama 3 8B: d_model 4096, 32 query heads, 8 K/V heads, 128 features per head
    costs = head_costs(4096, 32, 8, 128, 128)
    assert costs.param_count == 4096 * 4096 * 2 + 2 * 4096 * 8 * 128  # W_Q, W_O + W_K, W_V
    assert costs.kv_cache_bytes_per_token == 8 * 256 * 4  # 8 KiB per token and layer
    assert costs.mha_kv_cache_bytes_per_token == 4 * costs.kv_cache_bytes_per_token


def test_none_means_one_kv_head_per_query_head():
    assert check_kv_heads(None, 6) == 6
    assert multihead_param_shapes(6, 12, 2, 3)["W_V"] == (6, 12, 3)
    assert multihead_param_shapes(6, 12, 2, 3, 2)["W_K"] == (2, 12, 2)


@pytest.mark.parametrize(
    ("num_kv_heads", "match"),
    [
        (4, r"Received: num_heads=6, num_kv_heads=4\. Allowed for 6 heads: 1, 2, 3, 6 "),
        (True, r"`num_kv_heads` must be a whole number\. Received: True\."),
        (7, r"`num_kv_heads` must be from 1 to 6\. Received: 7\."),  # at most one per query head
    ],
    ids=["not-dividing", "bool", "too-many"],
)
def test_bad_kv_head_counts_are_explained(num_kv_heads, match):
    with pytest.raises(ValueError, match=match):
        head_costs(12, 6, num_kv_heads, 2, 2)
