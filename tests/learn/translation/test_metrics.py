"""Tests for learn/translation/metrics.py: pinned accuracies and alignment scores on hand-made
weights."""

import numpy as np
import pytest

from attnviz.learn.translation.metrics import alignment_score, char_accuracy, head_alignment_scores
from attnviz.learn.translation.tasks import get_task


class Fixed:
    """A stand-in model: a task and teacher-forced weights given by hand."""

    def __init__(self, task: str, weights: np.ndarray) -> None:
        self.task = get_task(task)
        self.weights = weights

    def teacher_forced_weights(self, pairs):
        return self.weights


def _one_hot_rows(columns: list[int], width: int) -> np.ndarray:
    rows = np.full((len(columns), width), 0.01, dtype=np.float32)
    rows[np.arange(len(columns)), columns] = 0.9
    return rows


@pytest.mark.parametrize(
    ("outputs", "targets", "expected"),
    [
        (["2026-11-22"], ["2026-11-22"], 1.0),
        (["2026-11-23", "abc"], ["2026-11-22", "abc"], 12 / 13),  # 9 + 3 right of 10 + 3
        (["ab"], ["abcd"], 0.5),  # missing characters are wrong
        (["abcd"], ["ab"], 0.5),  # so are extra ones
        (["ba"], ["ab"], 0.0),
    ],
    ids=["exact", "one-wrong", "short", "long", "swapped"],
)
def test_char_accuracy(outputs, targets, expected):
    assert char_accuracy(outputs, targets) == pytest.approx(expected)


def test_alignment_score_reverse():
    # "abc" -> "cba": the true columns are 2, 1, 0; the rows look at 2, 1, 2 -> 2 of 3.
    weights = _one_hot_rows([2, 1, 2, 0], 12)[None]  # (1, T=4 with the end row, S=12)
    assert alignment_score(Fixed("reverse", weights), [("abc", "cba")]) == pytest.approx(2 / 3)


def test_alignment_score_leaves_out_characters_without_a_span():
    # "22 nov 2026" -> "2026-11-22": year 7-11, month 3-6, day 0-2; the "-" rows look anywhere.
    looks = [7, 8, 9, 10, 0, 4, 5, 11, 1, 5, 0]  # day digit 2 looks at "v": 1 miss of 8
    weights = _one_hot_rows(looks, 30)[None]  # (1, 11, 30)
    score = alignment_score(Fixed("dates", weights), [("22 nov 2026", "2026-11-22")])
    assert score == pytest.approx(7 / 8)


@pytest.mark.parametrize(
    ("pairs", "match"),
    [
        ([], "non-empty list of \\(source, target\\) string pairs"),
        ("abc", "non-empty list"),
        (5, "non-empty list"),
        ([("abc",)], "non-empty list"),
        ([("abc", "abc")], "not 'abc' reversed"),
    ],
    ids=["empty", "string", "number", "single", "wrong-pair"],
)
def test_bad_pairs(pairs, match):
    with pytest.raises(ValueError, match=match):
        alignment_score(Fixed("reverse", np.zeros((1, 13, 12))), pairs)


class FixedHeads:
    """A stand-in Transformer: teacher-forced cross-attention `(N, L, H, T, S)` given by hand."""

    def __init__(self, task: str, cross: np.ndarray) -> None:
        self.task = get_task(task)
        self.cross = cross

    def teacher_forced_cross(self, pairs):
        return self.cross


def test_every_cross_head_is_scored_and_the_best_is_the_models_score():
    # "abc" -> "cba": true columns 2, 1, 0. Head (0, 0) is right on all 3, (0, 1) on 1 of 3,
    # (1, 0) on none, (1, 1) on 2 of 3.
    looks = {(0, 0): [2, 1, 0, 0], (0, 1): [2, 0, 2, 0], (1, 0): [0, 0, 1, 0], (1, 1): [2, 1, 2, 0]}
    cross = np.zeros((1, 2, 2, 4, 12), dtype=np.float32)
    for (layer, head), columns in looks.items():
        cross[0, layer, head] = _one_hot_rows(columns, 12)
    model = FixedHeads("reverse", cross)
    scores = head_alignment_scores(model, [("abc", "cba")])
    np.testing.assert_allclose(scores, [[1.0, 1 / 3], [0.0, 2 / 3]])
    assert alignment_score(model, [("abc", "cba")]) == 1.0


def test_head_scores_need_a_model_with_heads():
    with pytest.raises(ValueError, match="TransformerTranslator"):
        head_alignment_scores(Fixed("reverse", np.zeros((1, 4, 12))), [("abc", "cba")])
