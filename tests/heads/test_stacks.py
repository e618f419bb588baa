"""Tests for heads/stacks.py: attention weights as an `(L, H, T, S)` stack, and the mask of real
query tokens. The checks every head summary, rollout and model view starts with."""

import re

import numpy as np
import pytest

from attnviz.heads.stacks import WEIGHT_SLACK, as_layer_stack, check_token_mask

RNG = np.random.default_rng(5)


def softmax_rows(shape: tuple[int, ...]) -> np.ndarray:
    """Random attention weights: every row along the last axis sums to one."""
    e = np.exp(RNG.normal(size=shape))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def test_one_layer_becomes_a_stack_of_one():
    layer = softmax_rows((4, 3, 5))  # (H, T, S)
    stack = as_layer_stack(layer)
    assert stack.shape == (1, 4, 3, 5) and stack.dtype == np.float64
    np.testing.assert_array_equal(stack[0], layer.astype(np.float64))


def test_a_stack_and_a_list_of_layers_give_the_same_array():
    layers = [softmax_rows((2, 3, 3)) for _ in range(3)]  # L = 3 layers (H, T, T)
    from_list = as_layer_stack(layers)
    from_stack = as_layer_stack(np.stack(layers))  # (L, H, T, T)
    assert from_list.shape == (3, 2, 3, 3)
    np.testing.assert_array_equal(from_list, from_stack)
    assert as_layer_stack(tuple(layers)).shape == (3, 2, 3, 3)


def test_the_result_is_a_new_array_and_the_input_is_untouched():
    weights = np.full((1, 1, 2, 2), 0.5)
    stack = as_layer_stack(weights)
    stack[0, 0, 0, 0] = 1.0
    assert weights[0, 0, 0, 0] == 0.5
    assert as_layer_stack([[[[0.25, 0.75]]]]).tolist() == [[[[0.25, 0.75]]]]  # nested lists


@pytest.mark.parametrize(
    "row", [[1.0 + WEIGHT_SLACK / 2, 0.0], [-WEIGHT_SLACK / 2, 1.0]], ids=["above-1", "below-0"]
)
def test_float32_overshoot_within_the_slack_is_accepted(row):
    assert WEIGHT_SLACK == 1e-5
    np.testing.assert_array_equal(as_layer_stack([[row]])[0, 0, 0], row)


def test_masked_cells_hold_zero_and_are_kept():
    causal = np.tril(np.ones((3, 3)))
    weights = causal / causal.sum(axis=1, keepdims=True)  # (T, T) rows: 1 | 1/2 1/2 | 1/3 ...
    stack = as_layer_stack(weights[None])
    np.testing.assert_array_equal(np.triu(stack[0, 0], k=1), 0.0)
    np.testing.assert_allclose(stack.sum(axis=-1), 1.0)


BAD_WEIGHTS = [
    ("empty-list", [], "`weights` must list layers of one shape (H, T, S). Received shapes []."),
    ("self-and-cross", [np.full((2, 2, 2), 0.5), np.full((2, 2, 3), 1 / 3)],
     "Received shapes [(2, 2, 2), (2, 2, 3)]. Self-attention (T, T) and cross-attention (T, S) "
     "are separate stacks."),
    ("ragged-rows", [[[[0.5, 0.5], [1.0]]]],
     "`weights[0]` could not be read as a matrix: its rows have different lengths"),
    ("a-batch", np.full((1, 2, 2, 2, 2), 0.5),
     "Received: array of shape (1, 2, 2, 2, 2) and dtype float64. For a batch (B, H, T, S), pick "
     "one sequence: weights[b]."),
    ("two-axes", np.full((2, 2), 0.5), "(H, T, S) for one layer or (L, H, T, S) for L layers"),
    ("no-heads", np.ones((0, 2, 2)), "none of them empty. Received: array of shape (1, 0, 2, 2)"),
    ("nan", [[[0.5, np.nan]]],
     "`weights` holds nan at (0, 0, 0, 1). Attention weights are finite probabilities from 0 to "
     "1; masked cells hold 0, not -inf or NaN."),
    ("minus-inf", [[[1.0, -np.inf]]], "`weights` holds -inf at (0, 0, 0, 1)"),
    ("logits", [[[1.5, -0.5]]],
     "`weights` must hold attention weights from 0 to 1. Received values from -0.5 to 1.5. Pass "
     "the softmax output, not the scores (logits)."),
    ("just-past-slack", [[[1.0 + 3 * WEIGHT_SLACK, 0.0]]], "Received values from 0 to 1"),
    ("text", "abc", "`weights` must hold numbers only. Received: 'abc'."),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "weights", "message"), BAD_WEIGHTS, ids=[c[0] for c in BAD_WEIGHTS]
)
def test_bad_weights_say_what_is_wrong(case, weights, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        as_layer_stack(weights)


def test_the_argument_name_is_the_callers():
    with pytest.raises(ValueError, match=r"^`cross` holds nan"):
        as_layer_stack([[[np.nan]]], name="cross")


def test_no_mask_means_every_token_is_real():
    mask = check_token_mask(None, 4)
    assert mask.dtype == bool and mask.tolist() == [True] * 4


@pytest.mark.parametrize(
    "mask",
    [[True, False, True], [1, 0, 1], [1.0, 0.0, 1.0], np.array([True, False, True])],
    ids=["bools", "ints", "floats", "array"],
)
def test_true_false_or_one_zero_masks_are_accepted(mask):
    found = check_token_mask(mask, 3)
    assert found.dtype == bool and found.tolist() == [True, False, True]


BAD_MASKS = [
    ("too-short", [True], "`mask` must be 3 True/False values, one per query token"),
    ("two-axes", [[1, 0, 1]], "Received: [[1, 0, 1]]."),
    ("not-0-or-1", [1, 2, 0], "Received: [1, 2, 0]."),
    ("a-half", [0.5, 1, 1], "Received: [0.5, 1, 1]."),
    ("text", "abc", "Received: 'abc'."),
    ("ragged", [[1], [0, 1], [1]], "Received: [[1], [0, 1], [1]]."),
    ("all-padding", [0, 0, 0],
     "`mask` marks no token as real: there is no row to summarise. Received: [0, 0, 0]. Set True "
     "for the real tokens."),
]  # fmt: skip


@pytest.mark.parametrize(("case", "mask", "message"), BAD_MASKS, ids=[c[0] for c in BAD_MASKS])
def test_bad_masks_say_what_is_allowed(case, mask, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        check_token_mask(mask, 3)
    with pytest.raises(ValueError, match=r"^`query_mask` "):
        check_token_mask(mask, 3, name="query_mask")
