"""Tests for attnviz.core.mask_spec: the sink, document, prefix-LM and chunk rules, each pinned on
a small hand-computed mask, their combination against the cell-by-cell reference, and every bad
value's message."""

import itertools

import numpy as np
import pytest
from reference import reference_mask

from attnviz.core.mask_spec import MaskSpec, document_ids, parse_document_lengths

T, F = True, False


def _mask(t: int, s: int, **rules) -> np.ndarray:
    return MaskSpec(**rules).allowed(np.arange(t), np.arange(s))


PINNED = {
    # causal, window 1, one sink: the recent key, the key itself, and key 0 always
    "sinks+window+causal": (
        5, 5, {"causal": True, "window": 1, "sinks": 1},
        [[T, F, F, F, F], [T, T, F, F, F], [T, T, T, F, F], [T, F, T, T, F], [T, F, F, T, T]],
    ),
    # two sinks, window 0: key 1 is a sink but in query 0's future
    "sinks-obey-causal": (
        3, 3, {"causal": True, "window": 0, "sinks": 2},
        [[T, F, F], [T, T, F], [T, T, T]],
    ),
    "sinks-alone-change-nothing": (3, 3, {"sinks": 2}, [[T, T, T]] * 3),
    # documents of 2 and 3 tokens: block-diagonal
    "documents": (
        5, 5, {"documents": (2, 3)},
        [[T, T, F, F, F], [T, T, F, F, F], [F, F, T, T, T], [F, F, T, T, T], [F, F, T, T, T]],
    ),
    "documents+causal": (
        5, 5, {"documents": (2, 3), "causal": True},
        [[T, F, F, F, F], [T, T, F, F, F], [F, F, T, F, F], [F, F, T, T, F], [F, F, T, T, T]],
    ),
    # prefix 2: queries 0 and 1 see each other, causal after
    "prefix": (4, 4, {"prefix": 2}, [[T, T, F, F], [T, T, F, F], [T, T, T, F], [T, T, T, T]]),
    "prefix-replaces-causal": (
        4, 4, {"prefix": 2, "causal": True},
        [[T, T, F, F], [T, T, F, F], [T, T, T, F], [T, T, T, T]],
    ),
    "prefix-0-is-causal": (3, 3, {"prefix": 0}, [[T, F, F], [T, T, F], [T, T, T]]),
    # chunks of 2: {0, 1}, {2, 3}, {4}
    "chunk": (
        5, 5, {"chunk": 2},
        [[T, T, F, F, F], [T, T, F, F, F], [F, F, T, T, F], [F, F, T, T, F], [F, F, F, F, T]],
    ),
    "chunk+causal (Llama 4)": (
        5, 5, {"chunk": 2, "causal": True},
        [[T, F, F, F, F], [T, T, F, F, F], [F, F, T, F, F], [F, F, T, T, F], [F, F, F, F, T]],
    ),
    "chunk+causal+sink": (
        5, 5, {"chunk": 2, "causal": True, "sinks": 1},
        [[T, F, F, F, F], [T, T, F, F, F], [T, F, T, F, F], [T, F, T, T, F], [T, F, F, F, T]],
    ),
    "chunk-wider-than-the-sequence": (2, 3, {"chunk": 10}, [[T, T, T], [T, T, T]]),
    "window+chunk": (
        4, 4, {"window": 0, "chunk": 2, "sinks": 1},
        [[T, F, F, F], [T, T, F, F], [T, F, T, F], [T, F, F, T]],
    ),
}  # fmt: skip


@pytest.mark.parametrize(("t", "s", "rules", "expected"), PINNED.values(), ids=list(PINNED))
def test_each_rule_pinned_by_hand(t, s, rules, expected):
    mask = _mask(t, s, **rules)
    assert mask.dtype == bool and mask.shape == (t, s)
    np.testing.assert_array_equal(mask, expected)


RULES = {
    "causal": [False, True],
    "window": [None, 1],
    "sinks": [None, 2],
    "documents": [None, (1, 3, 2)],
    "prefix": [None, 3],
    "chunk": [None, 4],
}


@pytest.mark.parametrize("t", [6, 4], ids=["square", "fewer-queries"])
@pytest.mark.parametrize(
    "values", list(itertools.product(*RULES.values())), ids=lambda v: str(v).replace(" ", "")
)
def test_every_combination_equals_the_cell_reference(values, t):
    rules = dict(zip(RULES, values, strict=True))
    expected = reference_mask(1, t, 6, **rules)[0]
    np.testing.assert_array_equal(_mask(t, 6, **rules), expected)


def test_parts_show_each_active_rule_and_combine_as_documented():
    parts = MaskSpec(causal=True, window=1, sinks=1, documents=(3, 3)).parts(
        np.arange(6), np.arange(6)
    )
    assert parts.chunk is None
    np.testing.assert_array_equal(parts.order, np.tri(6, dtype=bool))
    np.testing.assert_array_equal(parts.sinks[:, 0], True)
    np.testing.assert_array_equal(parts.sinks[:, 1:], False)
    expected = parts.order & (parts.window | parts.sinks) & parts.documents
    np.testing.assert_array_equal(parts.combined, expected)
    nothing = MaskSpec().parts(np.arange(2), np.arange(3))
    assert nothing.order is nothing.window is nothing.sinks is nothing.documents is None
    assert nothing.combined.all()


def test_rules_hold_for_any_positions_so_a_tile_sees_its_part_of_the_mask():
    spec = MaskSpec(causal=True, window=2, sinks=1, documents=(4, 5), chunk=3)
    full = spec.allowed(np.arange(9), np.arange(9))
    rows, cols = np.arange(3, 7), np.arange(2, 9)
    np.testing.assert_array_equal(spec.allowed(rows, cols), full[3:7, 2:9])


def test_document_ids_and_normalised_lengths():
    np.testing.assert_array_equal(document_ids([2, 1, 3]), [0, 0, 1, 2, 2, 2])
    assert MaskSpec(documents=[2, np.int64(3)]).documents == (2, 3)


ERRORS = {
    "chunk-0": ({"chunk": 0}, r"`chunk` must be 1 or more: a chunk holds at least one "
                r"token\. Received: 0\. Use None to switch chunked attention off\."),
    "chunk-fraction": ({"chunk": 1.5}, r"`chunk` must be a whole number\. Received: 1\.5\."),
    "sinks-negative": ({"sinks": -1}, r"`sinks` must be 0 or more\. Received: -1\."),
    "prefix-text": ({"prefix": "2"}, r"`prefix` must be a whole number\. Received: '2'\."),
    "documents-text": ({"documents": "3,4"}, r"`documents` must be a list of document lengths, "
                       r"e\.g\. \[3, 5, 2\]\. Received: '3,4'\."),
    "documents-zero": ({"documents": [3, 0]}, r"Every document length in `documents` must be a "
                       r"whole number from 1\. Received: \[3, 0\]\."),
    "documents-empty": ({"documents": []}, r"`documents` must list at least one document "
                        r"length, e\.g\. \[3, 5, 2\]\. Received an empty list\."),
    "documents-too-long": ({"documents": [2**28, 1]}, r"`documents` add up to 268,435,457 tokens, "
                           r"more than a sequence can hold in memory: no array holds more than "
                           r"268,435,456 numbers \(1 GiB of float32\)\."),
    "causal-text": ({"causal": "yes"}, r"`causal` must be True or False\. Received: 'yes'\."),
}  # fmt: skip


@pytest.mark.parametrize(("rules", "match"), ERRORS.values(), ids=list(ERRORS))
def test_bad_rules_are_explained(rules, match):
    with pytest.raises(ValueError, match=match):
        MaskSpec(**rules)


FIT_ERRORS = {
    "sinks-beyond-the-length": (
        {"sinks": 5}, 4, 4,
        r"`sinks` asks for 5 sink tokens, but the sequence has only 4 keys\. Use at most 4\.",
    ),
    "prefix-beyond-the-length": ({"prefix": 9}, 4, 4, r"`prefix` asks for 9 prefix tokens"),
    "documents-short": (
        {"documents": (2, 1)}, 4, 4,
        r"`documents` lengths \[2, 1\] add up to 3, but they must cover the 4 keys exactly",
    ),
    "documents-more-queries": ({"documents": (2, 2)}, 5, 4, r"at most 4 queries; received 5"),
}  # fmt: skip


@pytest.mark.parametrize(("rules", "t", "s", "match"), FIT_ERRORS.values(), ids=list(FIT_ERRORS))
def test_rules_that_do_not_fit_the_sequence_are_explained(rules, t, s, match):
    with pytest.raises(ValueError, match=match):
        MaskSpec(**rules).check_fits(t, s)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("3, 4, 2", (3, 4, 2)), ("3 4 2", (3, 4, 2)), (" 5 ", (5,)), ("", None), (" , ", None)],
    ids=["commas", "spaces", "one", "blank", "only-commas"],
)
def test_document_lengths_typed_as_text(text, expected):
    assert parse_document_lengths(text) == expected


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "3, x",
            r"whole numbers separated by commas or spaces, e\.g\. '3, 4, 2'\. Received: '3, x'",
        ),
        ("3, -1", r"whole numbers separated by commas or spaces"),
        ("3, 0", r"Every document length in `documents` must be a whole number from 1"),
        (3, r"Document lengths must be text like '3, 4, 2'\. Received: 3\."),
    ],
    ids=["letter", "negative", "zero", "not-text"],
)
def test_bad_document_text_is_explained(text, match):
    with pytest.raises(ValueError, match=match):
        parse_document_lengths(text)
