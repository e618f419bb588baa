"""Tests for core/ways.py: the three ways of attention and their masks, pinned by hand."""

import numpy as np
import pytest

from attnviz.core.ways import WAYS, get_way, way_mask, way_mask_settings

T, F = True, False
SOURCE_PAD = [T, T, T, F]  # 4 source tokens, the last is padding
TARGET_PAD = [T, T, F]  # 3 target tokens, the last is padding

HAND_MASKS = [
    pytest.param(
        "bidirectional",
        [[T, T, T, F], [T, T, T, F], [T, T, T, F], [T, T, T, F]],  # (Ls, Ls): every real token
        id="bidirectional",
    ),
    pytest.param(
        "causal",
        [[T, F, F], [T, T, F], [T, T, F]],  # (Lt, Lt): look-ahead AND target padding
        id="causal",
    ),
    pytest.param(
        "cross",
        [[T, T, T, F], [T, T, T, F], [T, T, T, F]],  # (Lt, Ls): target rows, real source columns
        id="cross",
    ),
]


def test_the_three_ways_each_say_in_one_line_where_they_sit():
    assert tuple(WAYS) == ("bidirectional", "causal", "cross")
    for name, way in WAYS.items():
        assert way.name == name and way.title and way.part
        assert "\n" not in way.where and len(way.where) <= 100
    assert "Encoder" in WAYS["bidirectional"].where
    assert "Decoder" in WAYS["causal"].where
    cross = WAYS["cross"]
    assert (cross.queries_from, cross.keys_from, cross.causal) == ("target", "source", False)
    assert cross.axis_titles == ("target", "source")


def test_each_way_s_own_mask_is_causal_only_for_the_causal_way():
    np.testing.assert_array_equal(get_way("causal").mask(3, 3), [[T, F, F], [T, T, F], [T, T, T]])
    np.testing.assert_array_equal(get_way("cross").mask(2, 3), np.ones((2, 3), bool))
    np.testing.assert_array_equal(get_way("bidirectional").mask(2, 2), np.ones((2, 2), bool))


@pytest.mark.parametrize(("way", "expected"), HAND_MASKS)
def test_mask_of_each_way_by_hand(way, expected):
    mask = way_mask(way, 4, 3, source_padding_mask=SOURCE_PAD, target_padding_mask=TARGET_PAD)
    assert mask.dtype == bool
    np.testing.assert_array_equal(mask, [expected])  # B = 1: the padding masks have no batch


def test_batched_padding_masks_give_one_mask_per_pair():
    source = [[T, T, F], [T, T, T]]
    target = [[T, T], [T, F]]
    cross = way_mask("cross", 3, 2, source_padding_mask=source, target_padding_mask=target)
    np.testing.assert_array_equal(cross, [[[T, T, F], [T, T, F]], [[T, T, T], [T, T, T]]])
    causal = way_mask("causal", 3, 2, source_padding_mask=source, target_padding_mask=target)
    np.testing.assert_array_equal(causal, [[[T, F], [T, T]], [[T, F], [T, F]]])


def test_mask_settings_pick_the_right_padding_mask():
    kwargs = {"source_padding_mask": SOURCE_PAD, "target_padding_mask": TARGET_PAD}
    assert way_mask_settings("bidirectional", **kwargs).key_padding_mask is SOURCE_PAD
    causal = way_mask_settings("causal", **kwargs)
    assert causal.causal and causal.key_padding_mask is TARGET_PAD
    cross = way_mask_settings("cross", **kwargs)
    assert not cross.causal and cross.key_padding_mask is SOURCE_PAD
    assert way_mask_settings("cross").key_padding_mask is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        pytest.param(
            lambda: way_mask("encoder", 2, 2),
            r'`way` must be one of "bidirectional", "causal", "cross"\. Received: \'encoder\'\.',
            id="unknown_way",
        ),
        pytest.param(
            lambda: way_mask(
                "cross", 2, 2, source_padding_mask=[[T, T]], target_padding_mask=[[T, T], [T, F]]
            ),
            r"same batch size\. Received: source 1, target 2 rows\.",
            id="batch_mismatch",
        ),
        pytest.param(
            lambda: way_mask("cross", 3, 2, source_padding_mask=[T, T]),
            r"`source_padding_mask` must have shape \(3,\) or \(1, 3\)",
            id="padding_length",
        ),
        pytest.param(
            lambda: way_mask("causal", 0, 2),
            r"`source_length` must be 1 or more\. Received: 0\.",
            id="zero_length",
        ),
    ],
)
def test_invalid_input_is_rejected_with_a_helpful_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()
