"""Tests for attnviz.inputs.probe: identical tokens show each position scheme's pure pattern."""

import math

import numpy as np
import pytest

from attnviz import compute_attention
from attnviz.inputs.probe import position_probe
from attnviz.inputs.text import positional_encoding


def test_without_positions_identical_tokens_score_alike():
    probe = position_probe(4, 9, "none")
    np.testing.assert_allclose(probe.scores, 3.0)  # ones·ones / √9 = 9 / 3
    assert probe.relative and probe.by_offset.shape == (1, 7)


def test_rope_pattern_depends_only_on_the_offset_pinned():
    # D = 2, all ones: rope(x, i)·rope(x, j) = |x|² cos(i − j) = 2 cos(i − j), divided by √2
    probe = position_probe(5, 2, "rope")
    offsets = np.arange(-4, 5)
    np.testing.assert_allclose(probe.by_offset[0], math.sqrt(2) * np.cos(offsets), atol=1e-12)
    assert probe.relative and probe.slopes is None


@pytest.mark.parametrize("position", ["rope", "sinusoidal", "none"])
def test_probe_scores_equal_compute_attention_on_the_same_inputs(position):
    probe = position_probe(6, 8, position, rope_theta=100.0, content=np.arange(8.0) / 8)
    attention = "rope" if position == "rope" else "none"
    result = compute_attention(
        probe.inputs, probe.inputs, probe.inputs, position=attention, rope_theta=100.0
    )
    np.testing.assert_allclose(probe.scores[0], result.scores, rtol=1e-5, atol=1e-5)


def test_sinusoidal_positions_are_not_purely_relative():
    probe = position_probe(6, 8, "sinusoidal")
    np.testing.assert_allclose(probe.inputs, 1 + positional_encoding(6, 8))
    assert not probe.relative and probe.by_offset is None


def test_alibi_shows_one_straight_penalty_per_head():
    probe = position_probe(4, 4, "alibi", num_heads=2)  # slopes 1/16 and 1/256
    distance = np.abs(np.arange(4)[:, None] - np.arange(4)[None, :])
    np.testing.assert_allclose(probe.scores[0], 2 - distance / 16)  # ones·ones / √4 = 2
    np.testing.assert_allclose(probe.scores[1], 2 - distance / 256)
    np.testing.assert_allclose(probe.slopes, [1 / 16, 1 / 256])
    assert probe.relative and probe.by_offset.shape == (2, 7)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"position": "learned"},
         r'`position` must be one of "none", "sinusoidal", "rope", "alibi"'),
        ({"position": "rope", "d_model": 3}, r"RoPE rotates features in pairs"),
        ({"content": [1, 2]}, r"`content` must be one token of 4 features \(d_model\)\. Received "
         r"shape \(2,\)\."),
        ({"position": "alibi", "num_heads": 0}, r"`num_heads` must be 1 or more\. Received: 0"),
        ({"position": "alibi", "num_heads": 2, "length": 12000},
         r"^Too many attention cells: 2 heads × 12,000 queries × 12,000 keys = 288,000,000; the "
         r"limit is 268,435,456"),
    ],
    ids=["unknown", "rope-odd", "content", "heads", "past-memory"],
)  # fmt: skip
def test_bad_probe_values_are_explained(kwargs, match):
    args = {"length": 3, "d_model": 4, "position": "none", **kwargs}
    with pytest.raises(ValueError, match=match):
        position_probe(**args)


def test_by_offset_reads_each_diagonal_from_minus_t_plus_one():
    probe = position_probe(5, 4, "alibi", num_heads=3)
    for offset in range(-4, 5):  # i − j
        diagonal = np.diagonal(probe.scores, -offset, axis1=1, axis2=2)  # (H, 5 − |offset|)
        np.testing.assert_array_equal(probe.by_offset[:, offset + 4], diagonal[:, 0])


def test_more_features_than_a_page_takes():
    # tokens stop only at memory ("past-memory" above); features too: 2048, past a page's 1024
    wide = position_probe(2, 2048, "none")
    np.testing.assert_allclose(wide.scores, np.sqrt(2048))  # 2048 ones · 2048 ones / sqrt(2048)
