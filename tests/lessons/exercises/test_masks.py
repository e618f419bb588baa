"""Lesson 4's exercises, against masks and softmax worked out in plain numpy."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.lessons.exercises.base import PickCells, PickOne, Variant, matrix_text
from attnviz.lessons.exercises.masks import (
    BLIND_CONTROLS,
    GREY,
    NO_NAN,
    ONLY_SOME_KEYS,
    ROW_SUM,
    SPAN_CONTROLS,
    SUMS,
    read_cells,
    read_controls,
)


def _hidden(t, s, causal=False, window=None, padded=()):
    """The grey cells by hand: later keys (causal), far keys (window), padded columns."""
    return {
        (i, j)
        for i in range(t)
        for j in range(s)
        if (causal and j > i) or (window is not None and abs(i - j) > window) or j in padded
    }


def _grey_variant(causal, window, real) -> Variant:
    return Variant(0, "", PickCells("", (), ()), {"causal": causal, "window": window, "real": real})


def test_grey_cells_of_a_causal_mask_with_padding_by_hand():
    variant = _grey_variant(True, None, (True, True, True, False))
    grey = {(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (3, 3)}
    assert GREY.check(variant, frozenset(grey)).solved
    forgot = GREY.check(variant, frozenset(grey - {(3, 3)}))
    assert not forgot.solved and "padding (whole key columns) also hides query 3 · key 3" in (
        forgot.message
    )
    flipped = GREY.check(variant, frozenset((j, i) for i, j in grey))
    assert not flipped.solved and "flipped" in flipped.message
    extra = GREY.check(variant, frozenset(grey | {(1, 0)}))
    assert not extra.solved and "query 1 · key 0 stays visible" in extra.message


def test_every_drawn_grey_set_matches_the_rules_by_hand():
    for seed in range(8):
        variant = GREY.make(seed)
        data = variant.data
        padded = [j for j, real in enumerate(data["real"]) if not real]
        grey = _hidden(4, 4, data["causal"], data["window"], padded)
        assert GREY.solution(variant) == grey
        assert GREY.check(variant, frozenset(grey)).solved
        reveal = GREY.reveal(variant, frozenset())
        allowed = reveal.allowed
        for i in range(4):  # equal scores: each visible key gets 1 / (keys seen)
            seen = allowed[i].sum()
            expected = np.where(allowed[i], 1 / seen if seen else 0.0, 0.0)
            np.testing.assert_allclose(reveal.matrix[i], expected, atol=1e-6)


@pytest.mark.parametrize(
    "bad",
    [frozenset({(4, 0)}), {(0, -1)}, [(0, 1, 2)], [("0", 1)], [(True, 0)], "cells", None, 5],
    ids=["row-out", "negative", "triple", "text", "bool", "str", "none", "int"],
)
def test_bad_cells_are_told_the_grid(bad):
    with pytest.raises(ValueError, match="Pick cells of the 4 × 4 grid"):
        read_cells(bad, 4, 4)


def test_a_fully_masked_row_sums_to_zero_with_minus_inf_and_one_with_minus_1e9():
    seen = set()
    for seed in range(10):
        variant = ROW_SUM.make(seed)
        value, row = variant.data["mask_value"], variant.data["row"]
        seen.add(value)
        assert not any(variant.data["real"][: row + 1])  # row sees no key: causal + padding
        right = SUMS[0] if value == "-1e9" else SUMS[1]
        assert ROW_SUM.check(variant, right).solved
        reveal = ROW_SUM.reveal(variant, right)
        if value == "-1e9":  # every logit rounds to -1e9 in float32: uniform, 1/4 each
            np.testing.assert_allclose(reveal.matrix[row], [0.25] * 4, atol=1e-6)
        else:
            assert np.all(reveal.matrix[row] == 0)
        for i in range(4):
            if reveal.allowed[i].any():
                assert abs(reveal.matrix[i].sum() - 1) < 1e-5
        assert not ROW_SUM.check(variant, SUMS[2]).solved  # attnviz never gives NaN
    assert seen == {"-inf", "-1e9"}
    assert isinstance(variant.answer, PickOne)


def _span_variant(row, keys) -> Variant:
    return Variant(0, "", SPAN_CONTROLS, {"row": row, "keys": frozenset(keys)})


def test_only_keys_one_and_two_for_query_three():
    variant = _span_variant(3, {1, 2})
    # window 2 sees keys 1 to 5 -> 1 to 4; two padding keys at the end hide keys 3 and 4
    assert ONLY_SOME_KEYS.check(variant, {"causal": "off", "window": "2", "padding": 2}).solved
    assert ONLY_SOME_KEYS.check(variant, {"causal": "on", "window": "2", "padding": 2}).solved
    told = ONLY_SOME_KEYS.check(variant, {"causal": "on", "window": "1", "padding": 0})
    assert not told.solved
    assert "sees keys 2 and 3; it should see only keys 1 and 2: hide key 3 and show key 1" in (
        told.message
    )
    assert told.close == pytest.approx(1 - 2 / 5)


def test_every_drawn_span_is_solved_and_any_setting_that_does_it_is_accepted():
    for seed in range(8):
        variant = ONLY_SOME_KEYS.make(seed)
        row, keys = variant.data["row"], variant.data["keys"]
        accepted = 0
        for causal in ("off", "on"):
            for window in ("off", "0", "1", "2", "3"):
                for padding in range(5):
                    w = None if window == "off" else int(window)
                    padded = range(5 - padding, 5)
                    hidden = _hidden(5, 5, causal == "on", w, padded)
                    sees = {j for j in range(5) if (row, j) not in hidden}
                    answer = {"causal": causal, "window": window, "padding": padding}
                    assert ONLY_SOME_KEYS.check(variant, answer).solved == (sees == keys)
                    accepted += sees == keys
        assert accepted >= 1
        assert ONLY_SOME_KEYS.check(variant, ONLY_SOME_KEYS.solution(variant)).solved


@pytest.mark.parametrize(
    "bad",
    [
        {"causal": "maybe", "window": "off", "padding": 0},
        {"causal": "on", "window": 7, "padding": 0},
        {"causal": "on", "window": "off", "padding": 9},
        {"causal": "on", "window": "off", "padding": True},
        {"causal": "on", "window": "off", "padding": 1.5},
        {"causal": "on"},
        ["on"],
    ],
)
def test_bad_controls_are_told_what_each_takes(bad):
    with pytest.raises(ValueError, match="choose"):
        read_controls(bad, SPAN_CONTROLS)


def test_a_fully_masked_row_without_nan_by_hand():
    variant = NO_NAN.make(3)
    row, v = variant.data["row"], variant.data["v"]
    hidden = {"causal": "on", "padding": row + 1}
    assert NO_NAN.check(variant, {**hidden, "mask_value": "-inf"}).solved
    assert NO_NAN.check(variant, {"causal": "off", "padding": 4, "mask_value": "-inf"}).solved
    leak = NO_NAN.check(variant, {**hidden, "mask_value": "-1e9"})
    assert not leak.solved and "0.25 0.25 0.25 0.25" in leak.message
    assert f"its output {matrix_text(v.mean(axis=0)[None, :])} is" in leak.message  # V's mean
    sees = NO_NAN.check(variant, {"causal": "on", "padding": row, "mask_value": "-inf"})
    assert not sees.solved and f"still sees key {row}" in sees.message
    assert NO_NAN.solution(variant) == {**hidden, "mask_value": "-inf"}
    assert read_controls(NO_NAN.solution(variant), BLIND_CONTROLS)
