"""Tests for attnviz.core.masks: causal, window and key padding masks, their AND-combination, and
today's rules (sinks, documents, prefix-LM, chunks) through build_mask and compute_attention."""

import numpy as np
import pytest
from reference import reference_attention

from attnviz import compute_attention
from attnviz.core.masks import (
    build_mask,
    causal_mask,
    check_padding_mask,
    check_window,
    window_mask,
)

T, F = True, False
TOL = {"rtol": 1e-5, "atol": 1e-5}


@pytest.mark.parametrize(
    ("t", "s", "expected"),
    [
        (1, 1, [[T]]),
        (3, 3, [[T, F, F], [T, T, F], [T, T, T]]),
        (2, 4, [[T, F, F, F], [T, T, F, F]]),  # fewer queries than keys
        (4, 2, [[T, F], [T, T], [T, T], [T, T]]),  # more queries than keys
    ],
    ids=["1x1", "3x3", "2x4", "4x2"],
)
def test_causal_mask_allows_keys_up_to_the_query_position(t, s, expected):
    mask = causal_mask(t, s)
    assert mask.dtype == bool
    np.testing.assert_array_equal(mask, expected)


@pytest.mark.parametrize(
    ("t", "s", "window", "expected"),
    [
        (3, 3, 0, [[T, F, F], [F, T, F], [F, F, T]]),
        (4, 4, 1, [[T, T, F, F], [T, T, T, F], [F, T, T, T], [F, F, T, T]]),
        (2, 5, 2, [[T, T, T, F, F], [T, T, T, T, F]]),
        (3, 2, 5, [[T, T], [T, T], [T, T]]),  # window wider than the sequence: all allowed
    ],
    ids=["w0-diagonal", "w1-band", "w2-rectangular", "w5-everything"],
)
def test_window_mask_allows_keys_within_the_window(t, s, window, expected):
    mask = window_mask(t, s, window)
    assert mask.dtype == bool
    np.testing.assert_array_equal(mask, expected)


def test_build_mask_without_masks_allows_everything():
    mask = build_mask(2, 3, 4)
    assert mask.shape == (2, 3, 4) and mask.dtype == bool
    assert mask.all()


def test_build_mask_ands_causal_window_and_padding():
    padding = np.array([[T, T, T, F]])  # (1, S): the last key is padding
    mask = build_mask(1, 4, 4, causal=True, window=1, key_padding_mask=padding)
    # causal keeps j <= i, window 1 keeps |i - j| <= 1, padding drops key 3.
    expected = [[T, F, F, F], [T, T, F, F], [F, T, T, F], [F, F, T, F]]
    np.testing.assert_array_equal(mask, [expected])


def test_build_mask_causal_and_window_only():
    mask = build_mask(1, 3, 3, causal=True, window=0)
    np.testing.assert_array_equal(mask[0], np.eye(3, dtype=bool))


def test_build_mask_broadcasts_a_per_sequence_padding_mask():
    padding = np.array([[T, T, F], [T, F, F]])  # (B, S)
    mask = build_mask(2, 2, 3, causal=False, key_padding_mask=padding)
    np.testing.assert_array_equal(mask[0], [[T, T, F], [T, T, F]])
    np.testing.assert_array_equal(mask[1], [[T, F, F], [T, F, F]])


def test_build_mask_broadcasts_one_padding_row_over_the_batch():
    padding = np.array([[F, T]])  # (1, S)
    mask = build_mask(3, 2, 2, causal=True, key_padding_mask=padding)
    for b in range(3):
        np.testing.assert_array_equal(mask[b], [[F, F], [F, T]])


@pytest.mark.parametrize(
    ("given", "batch", "s", "expected"),
    [
        ([T, F, T], None, 3, [[T, F, T]]),
        ([1, 0, 1], None, 3, [[T, F, T]]),
        ([1.0, 0.0], None, 2, [[T, F]]),
        ([T, F], 3, 2, [[T, F]]),  # (S,) with a batch: shared by every sequence
        ([[T, F], [F, T]], 2, 2, [[T, F], [F, T]]),
        ([[T, F]], 2, 2, [[T, F]]),  # (1, S) broadcasts over the batch
    ],
    ids=["bool", "ints-1-0", "floats-1-0", "1d-batched", "per-sequence", "one-row-batched"],
)
def test_check_padding_mask_returns_bool_rows(given, batch, s, expected):
    padding = check_padding_mask(given, batch, s)
    assert padding.dtype == bool
    np.testing.assert_array_equal(padding, expected)


@pytest.mark.parametrize(
    ("given", "batch", "s", "match"),
    [
        (
            [T, F],
            None,
            3,
            r"must have shape \(3,\): one entry per key \(the key matrix has 3 rows\)",
        ),
        (
            [[T, F, T]],
            None,
            3,
            r"must have shape \(3,\): one entry per key\. Received shape \(1, 3\)",
        ),
        ([[T, F]] * 3, 2, 2, r"must have shape \(2,\) or \(2, 2\).*Received shape \(3, 2\)"),
        ([[[T, F]]], 1, 2, r"Received shape \(1, 1, 2\)"),
        ([1, 2], None, 2, r"must hold True/False \(or 1/0\) values"),
        ([0.5, 1.0], None, 2, r"must hold True/False \(or 1/0\) values"),
        ([np.nan, 1.0], None, 2, r"must hold True/False \(or 1/0\) values"),
        (["yes", "no"], None, 2, r"must hold True/False \(or 1/0\) values"),
        ([[T, F], [T]], 2, 2, r"could not be read as an array of True/False"),
    ],
    ids=[
        "wrong-length",
        "2d-unbatched",
        "wrong-batch",
        "3d",
        "value-2",
        "fraction",
        "nan",
        "text",
        "ragged",
    ],
)
def test_check_padding_mask_errors(given, batch, s, match):
    with pytest.raises(ValueError, match=match):
        check_padding_mask(given, batch, s)


@pytest.mark.parametrize(
    ("window", "expected"),
    [(None, None), (0, 0), (3, 3), (np.int64(2), 2)],
    ids=["off", "zero", "three", "numpy-int"],
)
def test_check_window_accepts_none_and_whole_numbers(window, expected):
    assert check_window(window) == expected


@pytest.mark.parametrize(
    ("window", "match"),
    [
        (-1, r"`window` must be 0 or more\. Received: -1\."),
        (2**28 + 1, r"`window` is too large to hold in memory: .* Received: 268,435,457\."),
        (1.5, r"`window` must be a whole number\. Received: 1\.5\."),
        (True, r"`window` must be a whole number\. Received: True\."),
        ("2", r"`window` must be a whole number\. Received: '2'\."),
    ],
    ids=["negative", "too-large", "fraction", "bool", "text"],
)
def test_check_window_errors(window, match):
    with pytest.raises(ValueError, match=match):
        check_window(window)


# --- today's rules (mask_spec) through build_mask and compute_attention ---------------------------


def test_build_mask_ands_the_new_rules_with_padding():
    padding = np.array([[T, T, T, T, F]])  # (1, S): the last key is padding
    mask = build_mask(1, 5, 5, causal=True, window=1, sinks=1, key_padding_mask=padding)
    expected = [[T, F, F, F, F], [T, T, F, F, F], [T, T, T, F, F], [T, F, T, T, F], [T, F, F, T, F]]
    np.testing.assert_array_equal(mask, [expected])


def test_build_mask_checks_that_the_rules_fit():
    with pytest.raises(ValueError, match=r"`sinks` asks for 4 sink tokens, but the sequence has "):
        build_mask(1, 3, 3, sinks=4)


RNG = np.random.default_rng(31)
Q6, K6, V6 = RNG.normal(size=(6, 4)), RNG.normal(size=(6, 4)), RNG.normal(size=(6, 3))
NEW_RULES = {
    "sinks+window": {"causal": True, "window": 1, "sinks": 2},
    "documents": {"documents": (2, 3, 1)},
    "documents+causal": {"documents": (2, 3, 1), "causal": True},
    "prefix": {"prefix": 3},
    "chunk": {"chunk": 4},
    "chunk+causal": {"chunk": 4, "causal": True},
    "everything": {"causal": True, "window": 2, "sinks": 1, "documents": (4, 2), "chunk": 3},
}


@pytest.mark.parametrize("mask_value", ["-inf", "-1e9"])
@pytest.mark.parametrize("rules", NEW_RULES.values(), ids=list(NEW_RULES))
def test_compute_attention_with_each_rule_equals_the_reference(rules, mask_value):
    padding = [T, T, T, T, F, T]
    result = compute_attention(Q6, K6, V6, key_padding_mask=padding, mask_value=mask_value, **rules)
    expected = reference_attention(Q6, K6, V6, padding=padding, mask_value=mask_value, **rules)
    np.testing.assert_array_equal(result.mask, expected.mask)
    for name in ("masked_scores", "weights", "output"):
        np.testing.assert_allclose(getattr(result, name), getattr(expected, name), **TOL)
    allowed_rows = ~result.fully_masked
    np.testing.assert_allclose(result.weights[allowed_rows].sum(axis=-1), 1, atol=1e-6)
    if mask_value == "-inf":
        assert (result.weights[~result.mask] == 0).all()  # exactly zero, not nearly
    assert result.settings.mask_spec.documents == rules.get("documents")


def test_packed_documents_attend_as_if_each_were_alone():
    lengths = (2, 3, 1)
    packed = compute_attention(Q6, K6, V6, documents=lengths, causal=True)
    start = 0
    for length in lengths:
        part = slice(start, start + length)
        alone = compute_attention(Q6[part], K6[part], V6[part], causal=True)
        np.testing.assert_allclose(packed.output[part], alone.output, **TOL)
        np.testing.assert_allclose(packed.weights[part, part], alone.weights, **TOL)
        start += length


def test_prefix_queries_attend_bidirectionally_within_the_prefix():
    result = compute_attention(Q6, K6, V6, prefix=3)
    alone = compute_attention(Q6[:3], K6[:3], V6[:3])
    np.testing.assert_allclose(result.output[:3], alone.output, **TOL)
    causal = compute_attention(Q6, K6, V6, causal=True)
    np.testing.assert_array_equal(result.mask[3:], causal.mask[3:] | (np.arange(6) < 3))


def test_causal_chunks_are_separate_causal_sequences():
    result = compute_attention(Q6, K6, V6, chunk=4, causal=True)
    for part in (slice(0, 4), slice(4, 6)):
        alone = compute_attention(Q6[part], K6[part], V6[part], causal=True)
        np.testing.assert_allclose(result.output[part], alone.output, **TOL)


@pytest.mark.parametrize(
    ("rules", "match"),
    [
        ({"sinks": 7}, r"`sinks` asks for 7 sink tokens, but the sequence has only 6 keys"),
        ({"prefix": 8}, r"`prefix` asks for 8 prefix tokens, but the sequence has only 6 keys"),
        ({"chunk": 0}, r"`chunk` must be 1 or more: a chunk holds at least one token"),
        ({"documents": (2, 2)}, r"add up to 4, but they must cover the 6 keys exactly"),
    ],
    ids=["sinks", "prefix", "chunk", "documents"],
)
def test_compute_attention_explains_rules_that_do_not_fit(rules, match):
    with pytest.raises(ValueError, match=match):
        compute_attention(Q6, K6, V6, **rules)
