"""Tests for transformer/way_attention.py: multi-head attention the way a Transformer uses it."""

import numpy as np

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
