"""Tests for heads/summaries: per-head numbers pinned on tiny hand-computed matrices."""

import dataclasses
import math

import numpy as np
import pytest

from attnviz.heads.summaries import (
    SUMMARY_FIELDS,
    HeadSummary,
    head_summaries,
    sort_heads,
    summary_table,
    top_heads,
)

IDENTITY = np.eye(3)
UNIFORM = np.full((3, 3), 1 / 3)
PREVIOUS = np.array([[1.0, 0, 0], [1, 0, 0], [0, 1, 0]])  # each token looks one back (0 at 0)
DIAGONAL_SPANS = [(0, 1), (1, 2), (2, 3)]


def _one(matrix, **kwargs) -> HeadSummary:
    (summary,) = head_summaries(np.asarray(matrix)[None], **kwargs)  # (1, T, S): one head
    return summary


@pytest.mark.parametrize(
    ("matrix", "expected"),
    [
        # entropy, mean distance, diagonal, previous, first, alignment with DIAGONAL_SPANS
        (IDENTITY, (0.0, 0.0, 1.0, 0.0, 1 / 3, 1.0)),
        # distance: rows (0+1+2)/3, (1+0+1)/3, (2+1+0)/3 -> mean 8/9; argmax of a tie is key 0
        (UNIFORM, (math.log2(3), 8 / 9, 1 / 3, 1 / 3, 1 / 3, 1 / 3)),
        # distance: rows 0, 1, 1; diagonal: rows 1, 0, 0; previous: rows 1 and 2 both 1
        (PREVIOUS, (0.0, 2 / 3, 1 / 3, 1.0, 2 / 3, 1 / 3)),
        # entropy: 1, 1, 0 bits; distance: 0.5, 0.5, 0; previous: rows 1, 2 give 0.5, 0;
        # argmax (ties go to the first key): 0, 0, 2, so row 1 misses its span (1, 2)
        ([[0.5, 0.5, 0], [0.5, 0.5, 0], [0, 0, 1]], (2 / 3, 1 / 3, 2 / 3, 1 / 4, 1 / 3, 2 / 3)),
    ],
    ids=["identity", "uniform", "previous-token", "halves"],
)
def test_summaries_of_tiny_matrices(matrix, expected):
    summary = _one(matrix, spans=DIAGONAL_SPANS)
    got = (
        summary.entropy_bits,
        summary.mean_distance,
        summary.diagonal,
        summary.previous,
        summary.first,
        summary.alignment,
    )
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_cross_attention_with_more_rows_than_keys_and_spans_with_gaps():
    # T = 3 queries, S = 2 keys: row 2 has no diagonal key; rows without a span are left out
    w = np.array([[0.25, 0.75], [0.5, 0.5], [0.0, 1.0]])
    summary = _one(w, spans=[(1, 2), None, (0, 1)])
    assert summary.diagonal == pytest.approx((0.25 + 0.5) / 2)  # rows 0 and 1 only
    assert summary.previous == pytest.approx((0.5 + 1.0) / 2)  # w[1, 0], w[2, 1]
    assert summary.mean_distance == pytest.approx((0.75 + 0.5 + 1.0) / 3)  # |2-1| * 1 in row 2
    assert summary.alignment == pytest.approx(1 / 2)  # row 0 hits key 1, row 2 misses key 0


def test_padding_rows_are_left_out_of_every_mean():
    w = np.array([[1.0, 0, 0], [0, 1, 0], [1 / 3, 1 / 3, 1 / 3]])  # row 2 is padding
    masked = _one(w, mask=[True, True, False], spans=DIAGONAL_SPANS)
    assert masked == _one(w[:2, :], spans=DIAGONAL_SPANS[:2])  # as if row 2 did not exist
    assert (masked.entropy_bits, masked.diagonal, masked.alignment) == (0.0, 1.0, 1.0)


def test_no_row_to_average_is_nan_and_no_span_scores_zero():
    summary = _one([[1.0]], spans=[None])  # one token: no previous token
    assert math.isnan(summary.previous)
    assert summary.alignment == 0.0  # as the Learn alignment score: nothing to score
    assert _one([[1.0]]).alignment is None  # no spans given: no alignment at all


def test_layers_and_heads_come_out_layer_by_layer():
    layers = [np.stack([IDENTITY, UNIFORM]), np.stack([PREVIOUS, IDENTITY])]
    stack = np.stack(layers)  # (L, H, T, S) = (2, 2, 3, 3)
    summaries = head_summaries(stack)
    assert [(s.layer, s.head) for s in summaries] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [s.diagonal for s in summaries] == pytest.approx([1, 1 / 3, 1 / 3, 1])
    listed = head_summaries([stack[0], stack[1]])  # a list of layers gives the same
    assert listed == summaries
    np.testing.assert_allclose(summary_table(summaries, "previous"), [[0, 1 / 3], [1, 0]])


def test_random_heads_match_a_float64_loop():
    rng = np.random.default_rng(3)
    w = rng.dirichlet(np.ones(6), size=(2, 3, 5))  # (L, H, T, S) = (2, 3, 5, 6)
    mask = np.array([True, True, False, True, True])
    spans = [(0, 2), None, (2, 3), (3, 6), (5, 6)]
    for s in head_summaries(w, mask=mask, spans=spans):
        rows = [i for i in range(5) if mask[i]]
        m = w[s.layer, s.head]
        entropy = np.mean([-sum(p * math.log2(p) for p in m[i] if p > 0) for i in rows])
        distance = np.mean([sum(m[i, j] * abs(i - j) for j in range(6)) for i in rows])
        hits = [spans[i][0] <= np.argmax(m[i]) < spans[i][1] for i in rows if spans[i]]
        assert s.entropy_bits == pytest.approx(entropy)
        assert s.mean_distance == pytest.approx(distance)
        assert s.diagonal == pytest.approx(np.mean([m[i, i] for i in rows]))
        assert s.previous == pytest.approx(np.mean([m[i, i - 1] for i in rows if i >= 1]))
        assert s.first == pytest.approx(np.mean([m[i, 0] for i in rows]))
        assert s.alignment == pytest.approx(np.mean(hits))


def test_sorting_and_top_heads_put_missing_values_last():
    summaries = head_summaries(np.stack([IDENTITY, UNIFORM, PREVIOUS]))  # one layer, 3 heads
    by_previous = sort_heads(summaries, "previous", descending=True)
    assert [s.head for s in by_previous] == [2, 1, 0]
    assert [s.head for s in sort_heads(summaries, "entropy_bits")] == [0, 2, 1]
    assert top_heads(summaries, "diagonal", n=1) == ((0, 0),)
    one_token = head_summaries(np.ones((2, 1, 1)))  # "previous" is NaN for both heads
    assert [s.head for s in sort_heads([*one_token, summaries[2]], "previous")][-2:] == [0, 1]


def test_summary_labels_follow_the_dataclass():
    names = tuple(f.name for f in dataclasses.fields(HeadSummary))
    assert names == ("layer", "head", *SUMMARY_FIELDS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        head_summaries(IDENTITY[None])[0].first = 0.5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(weights=np.ones((3, 3)) / 3), r"\(H, T, S\) for one layer"),
        (dict(weights=np.full((1, 2, 2), 2.0)), "from 0 to 1.*not the scores"),
        (dict(weights=np.full((1, 2, 2), np.nan)), "finite probabilities"),
        (dict(weights=[np.eye(2)[None], np.eye(3)[None]]), "layers of one shape"),
        (dict(weights=IDENTITY[None], mask=[True, False]), "3 True/False values"),
        (dict(weights=IDENTITY[None], mask=[False] * 3), "no token as real"),
        (dict(weights=IDENTITY[None], spans=[(0, 1)]), "one entry per query row: 3"),
        (dict(weights=IDENTITY[None], spans=[(0, 1), (2, 1), None]), r"spans\[1\]"),
        (dict(weights=IDENTITY[None], spans=[(0, 4), None, None]), "end <= 3"),
    ],
    ids=["rank", "scores", "nan", "shapes", "mask-length", "mask-empty", "spans-length",
         "span-order", "span-range"],
)  # fmt: skip
def test_bad_inputs_are_rejected_with_a_hint(kwargs, message):
    weights = kwargs.pop("weights")
    with pytest.raises(ValueError, match=message):
        head_summaries(weights, **kwargs)


def test_bad_sort_arguments_are_rejected():
    summaries = head_summaries(IDENTITY[None])
    with pytest.raises(ValueError, match="`by` must be one of"):
        sort_heads(summaries, "sharpness")
    with pytest.raises(ValueError, match="non-empty list of HeadSummary"):
        sort_heads([], "first")
    with pytest.raises(ValueError, match="`n` must be 1 or more"):
        top_heads(summaries, "first", n=0)


def test_induction_score_is_the_language_models_on_one_text():
    from attnviz.learn.language.metrics import induction_scores

    rng = np.random.default_rng(3)
    tokens = [0, 5, 6, 7, 5, 6, 7, 2]  # <s> then a run written twice, then a new token
    w = np.tril(rng.random((2, 3, 8, 8)))  # (L, H, T, T), causal
    w /= w.sum(-1, keepdims=True)
    summaries = head_summaries(w, tokens=tokens)
    expected = induction_scores(w[None], np.array([tokens]))  # (L, H), language.metrics' own
    got = summary_table(summaries, "induction")
    np.testing.assert_allclose(got, expected)
    # by hand: rows 4, 5, 6 (the second run) have targets 2, 3, 4
    by_hand = np.mean([w[1, 2, 4, 2], w[1, 2, 5, 3], w[1, 2, 6, 4]])
    assert got[1, 2] == pytest.approx(by_hand)
    assert head_summaries(w)[0].induction is None  # no tokens, no induction score


def test_induction_score_is_nan_where_nothing_repeats_and_needs_self_attention():
    w = np.tril(np.ones((1, 4, 4)))
    w /= w.sum(-1, keepdims=True)
    assert math.isnan(head_summaries(w, tokens=list("abcd"))[0].induction)
    for tokens in (list("abc"), "abcd"):  # one too few; a string, not a list of tokens
        with pytest.raises(ValueError, match="one token per query row: 4"):
            head_summaries(w, tokens=tokens)
    with pytest.raises(ValueError, match="as many keys as queries"):
        head_summaries(np.ones((1, 2, 3)) / 3, tokens=list("ab"))
