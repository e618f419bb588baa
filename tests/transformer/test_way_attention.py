"""Tests for transformer/way_attention.py: multi-head attention the way a Transformer uses it."""

import numpy as np
import pytest

from attnviz.core.settings import AttentionSettings
from attnviz.transformer.multihead import compute_multihead
from attnviz.transformer.way_attention import compute_way

T, F = True, False
SOURCE_PAD = [T, T, T, F]  # 4 source tokens, the last is padding
TARGET_PAD = [T, T, F]  # 3 target tokens, the last is padding


def test_compute_way_takes_queries_and_keys_from_the_right_side():
    rng = np.random.default_rng(0)
    source, target = rng.standard_normal((4, 8)), rng.standard_normal((3, 8))
    pads = {"source_padding_mask": SOURCE_PAD, "target_padding_mask": TARGET_PAD}
    cross = compute_way("cross", source, target, num_heads=2, seed=1, **pads)
    direct = compute_multihead(
        target, source, source, num_heads=2, seed=1, key_padding_mask=SOURCE_PAD
    )
    np.testing.assert_array_equal(cross.weights, direct.weights)
    assert cross.weights.shape == (2, 3, 4)
    causal = compute_way("causal", None, target, num_heads=2, **pads)
    assert causal.weights.shape == (2, 3, 3)
    np.testing.assert_array_equal(np.triu(causal.weights, k=1), 0.0)  # no future keys
    np.testing.assert_array_equal(causal.weights[..., 2], 0.0)  # no padded key
    encoder = compute_way("bidirectional", source, None, num_heads=2, **pads)
    np.testing.assert_array_equal(encoder.mask, [[T, T, T, F]] * 4)  # every real source token


def test_a_settings_object_is_used_and_the_way_decides_causal():
    rng = np.random.default_rng(1)
    target = rng.standard_normal((3, 8))
    settings = AttentionSettings(causal=False, window=1, seed=2)  # the way makes it causal
    by_settings = compute_way("causal", None, target, num_heads=2, settings=settings)
    by_keywords = compute_way("causal", None, target, num_heads=2, window=1, seed=2)
    np.testing.assert_array_equal(by_settings.weights, by_keywords.weights)
    assert by_settings.settings.causal and by_keywords.settings.causal
    with pytest.raises(TypeError, match="`compute_way` takes no `causal`: the causal way decides"):
        compute_way("causal", None, target, num_heads=2, causal=False)


def test_a_pages_cell_limit_is_checked_before_anything_is_computed():
    target = np.ones((100, 4))  # 4 heads × 100 × 100 = 40,000 cells
    message = (r"1 sequence × 4 heads × 100 queries × 100 keys = 40,000; the limit is 39,999 "
               r"\(this page's\)\. Use fewer heads")  # fmt: skip
    with pytest.raises(ValueError, match=message):
        compute_way("causal", None, target, num_heads=4, max_cells=39_999)
    fits = compute_way("causal", None, target, num_heads=4, max_cells=40_000)
    assert fits.weights.shape == (4, 100, 100)
