"""Tests for drawing/phase_change.py: losses, in-context accuracy and every head's scores on one
epoch axis, the best heads named and coloured, the biggest jump marked."""

from types import SimpleNamespace

import numpy as np
import pytest
from figure_support import plain_and_checked

from attnviz.drawing.phase_change import (
    INDUCTION_COLOR,
    OTHER_COLOR,
    PREVIOUS_COLOR,
    best_heads,
    biggest_jump,
    head_name,
    phase_change_figure,
)


def _curves(epochs=4):
    e, layers, heads = epochs, 2, 3
    prev = np.full((e, layers, heads), 0.1)
    ind = np.full((e, layers, heads), 0.05)
    prev[:, 0, 2] = np.linspace(0.2, 0.9, e)  # layer 0, head 2: the previous-token head
    ind[2:, 1, 1] = 0.95  # layer 1, head 1: the induction head, formed at epoch 2
    return SimpleNamespace(
        epochs=np.arange(e),
        loss=np.array([np.nan, 3.4, 2.1, 2.0][:e]),
        val_loss=np.array([3.5, 3.3, 2.1, 2.0][:e]),
        val_in_context_accuracy=np.array([0.03, 0.06, 0.97, 1.0][:e]),
        previous_token=prev,
        induction=ind,
    )


def test_the_biggest_jump_is_the_epoch_accuracy_rose_most():
    assert biggest_jump([0, 1, 2, 3], [0.03, 0.06, 0.97, 1.0]) == 2
    assert biggest_jump([0], [0.5]) is None
    assert biggest_jump([0, 1, 2], [0.9, 0.8, 0.8]) is None  # never rose
    assert biggest_jump([0, 1, 2], [np.nan, 0.1, 0.2]) == 1  # untrained NaN counts as 0


def test_the_best_heads_are_the_highest_scores():
    curves = _curves()
    assert best_heads(curves.previous_token[-1], curves.induction[-1]) == ((0, 2), (1, 1))


def test_the_figure_draws_both_panels_with_the_best_heads_in_colour():
    fig = phase_change_figure(_curves(), title="Induction")
    by_name = {}
    for trace in fig.data:
        by_name.setdefault(trace.name, []).append(trace)
    assert {"training loss", "validation loss", "in-context accuracy"} <= set(by_name)
    (induction,) = by_name[f"induction: {head_name(1, 1)}"]
    (previous,) = by_name[f"previous-token: {head_name(0, 2)}"]
    assert induction.line.color == INDUCTION_COLOR and previous.line.color == PREVIOUS_COLOR
    np.testing.assert_allclose(induction.y, [0.05, 0.05, 0.95, 0.95])
    assert induction.yaxis == "y3" and by_name["in-context accuracy"][0].yaxis == "y2"
    np.testing.assert_allclose(by_name["in-context accuracy"][0].y, [3, 6, 97, 100])
    assert by_name["training loss"][0].y[0] is None  # no training loss before training
    others = by_name["other heads"]
    assert len(others) == 2 * 6 - 2 and all(t.line.color == OTHER_COLOR for t in others)
    assert sum(bool(t.showlegend) for t in others) == 1  # one legend entry for them all
    assert fig.data[-1].line.color in (INDUCTION_COLOR, PREVIOUS_COLOR)  # drawn on top
    assert [s.x0 for s in fig.layout.shapes] == [2, 2]  # the jump, in both panels
    assert "epoch 2" in fig.layout.annotations[0].text


def test_scores_of_the_wrong_shape_are_refused():
    curves = _curves()
    curves.induction = curves.induction[:, 0]
    with pytest.raises(ValueError, match="epochs, layers, heads"):
        phase_change_figure(curves)


def test_heads_without_recorded_scores_are_not_drawn():
    curves = _curves()
    keep = np.zeros((2, 3), bool)
    keep[1, 1] = keep[0, 2] = True  # a shipped record keeps the best heads' scores only
    curves.previous_token = np.where(keep, curves.previous_token, np.nan)
    curves.induction = np.where(keep, curves.induction, np.nan)
    names = [t.name for t in phase_change_figure(curves).data]
    assert "induction: layer 1 · head 1" in names and "previous-token: layer 0 · head 2" in names
    assert names.count("other heads") == 2  # the best induction head's previous-token line, ...


def test_a_record_without_head_scores_draws_its_losses_alone():
    curves = _curves()
    curves.previous_token = np.full_like(curves.previous_token, np.nan)
    curves.induction = np.full_like(curves.induction, np.nan)
    assert best_heads(curves.previous_token[-1], curves.induction[-1]) == (None, None)
    names = [t.name for t in phase_change_figure(curves).data]
    assert names == ["training loss", "validation loss", "in-context accuracy"]


def test_the_figure_is_a_plain_figure_that_draws_what_plotly_s_checked_figure_draws():
    plain, checked = plain_and_checked(phase_change_figure(_curves(), title="<i>Induction</i>"))
    assert plain == checked  # drawn on every run of its page
