"""Tests for attnviz/drawing/drawable.py: which matrices and blocked cells can be drawn."""

import numpy as np
import pytest
from drawing_support import causal_weights

from attnviz.drawing.heatmap import heatmap


def test_minus_inf_counts_as_blocked_without_a_mask():
    fig = heatmap([[0.0, -np.inf]])
    np.testing.assert_array_equal(fig.data[1].z, [[0, 1]])


def test_z_never_holds_infinity():
    weights, blocked = causal_weights(5)
    scores = np.where(blocked, -np.inf, np.log(np.where(blocked, 1.0, weights)))
    for fig in (heatmap(scores, blocked=blocked), heatmap(weights, kind="weights")):
        z = np.asarray(fig.data[0].z, dtype=float)
        assert not np.isinf(z).any()
        assert "Infinity" not in fig.to_json()
    np.testing.assert_array_equal(np.isnan(heatmap(scores).data[0].z), blocked)


@pytest.mark.parametrize(
    ("value", "message"),
    [(np.nan, "holds nan at \\(0, 1\\)"), (np.inf, "holds inf at \\(0, 1\\)")],
    ids=["nan", "plus-inf"],
)
def test_unblocked_nan_or_plus_inf_is_rejected(value, message):
    with pytest.raises(ValueError, match=message):
        heatmap([[0.0, value]])


def test_nan_in_blocked_cells_is_fine():
    fig = heatmap([[0.0, np.nan]], blocked=[[False, True]])
    assert np.isnan(fig.data[0].z[0, 1])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(matrix=[[1, 2], [3]]), "`matrix` could not be read as a matrix: its rows have"),
        (dict(matrix=np.ones(3)), "non-empty 2-D array. Received shape \\(3,\\)"),
        (dict(matrix=[["a", "b"]]), "`matrix` must hold numbers only"),
        (dict(matrix=np.ones((2, 2)), row_labels=["a"]), "`row_labels` must be a list with"),
        (dict(matrix=np.ones((2, 2)), col_labels="ab"), "`col_labels` must be a list with"),
        (dict(matrix=np.ones((2, 2)), blocked=np.ones((2, 3))), "`blocked` must be True/False"),
        (dict(matrix=[[0.5, 1.5]], kind="weights"), "from 0 to 1, but `matrix` holds values"),
        (dict(matrix=[[0.5, 1.0]], kind="mask"), "must hold only True/False or 1/0"),
        (dict(matrix=np.ones((2, 2)), max_side=0), "`max_side` must be 1 or more"),
    ],
    ids=["ragged", "1-d", "text", "labels", "label-string", "blocked", "weights", "mask", "side"],
)
def test_bad_input_is_rejected_with_a_hint(kwargs, message):
    with pytest.raises(ValueError, match=message):
        heatmap(**kwargs)
