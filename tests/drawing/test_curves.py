"""Tests for drawing/curves.py: training curves from a history, loss on the left axis and the
three accuracies in % on the right, gaps where a value does not exist."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from figure_support import plain_and_checked

from attnviz.drawing.curves import ACCURACY_SERIES, training_curves
from attnviz.drawing.theme import FONT_SIZE

ROOT = Path(__file__).parents[2]
NAN = math.nan
# (epoch, loss, train char accuracy, val char accuracy, val exact match, seconds)
HISTORY = [
    (0, NAN, NAN, 0.04, 0.0, 0.0),  # epoch 0: the untrained model, no loss yet
    (1, 2.5, 0.4, 0.5, 0.25, 1.2),
    (2, 1.25, 0.875, 0.9, 0.5, 2.5),
]


@pytest.fixture(scope="module")
def figure():
    return training_curves(HISTORY, title="dates · dot")


def test_one_loss_trace_and_three_accuracy_traces(figure):
    assert [t.name for t in figure.data] == [
        "training loss",
        "training characters",
        "validation characters",
        "validation exact match",
    ]
    assert [t.yaxis for t in figure.data] == ["y", "y2", "y2", "y2"]
    assert all(t.x == (0, 1, 2) and t.mode == "lines+markers" for t in figure.data)


def test_values_are_the_history_with_accuracies_in_percent_and_gaps_for_nan(figure):
    loss, train, val, exact = (t.y for t in figure.data)
    assert loss == (None, 2.5, 1.25)  # epoch 0 has no loss: a gap, not NaN
    assert train == (None, 40.0, 87.5)
    assert val == (4.0, 50.0, 90.0)
    assert exact == (0.0, 25.0, 50.0)


def test_the_accuracy_series_read_the_history_fields_they_name():
    assert [(field, dash) for field, _, dash in ACCURACY_SERIES] == [
        (2, "dot"),
        (3, "solid"),
        (4, "dash"),
    ]
    figure = training_curves(HISTORY)
    for (_, name, dash), trace in zip(ACCURACY_SERIES, figure.data[1:], strict=True):
        assert trace.name == name and trace.line.dash == dash


def test_axes_title_and_hover(figure):
    layout = figure.layout
    assert layout.title.text == "dates · dot" and layout.title.x == 0.0
    assert layout.xaxis.title.text == "epoch" and layout.xaxis.dtick == 1
    assert layout.yaxis.title.text == "loss" and layout.yaxis.rangemode == "tozero"
    assert layout.yaxis2.title.text == "accuracy (%)" and layout.yaxis2.overlaying == "y"
    assert layout.yaxis2.side == "right" and tuple(layout.yaxis2.range) == (0, 100)
    # ticks at 0, 20, ..., 100 %, not at the loss axis's grid lines (plotly's default: 20.2 ...)
    y2 = layout.yaxis2
    assert (y2.tickmode, y2.tick0, y2.dtick, y2.showgrid) == ("linear", 0, 20, False)
    assert layout.font.size == FONT_SIZE and layout.hovermode == "x unified"
    assert figure.data[0].hovertemplate == "epoch %{x}<br>loss %{y:.4f}<extra></extra>"
    assert "validation exact match %{y:.2f} %" in figure.data[3].hovertemplate


def test_the_figure_is_strict_json_without_nan(figure):
    text = figure.to_json()
    assert "NaN" not in text
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))


def test_numpy_rows_and_none_values_are_drawn_the_same():
    import numpy as np

    rows = np.array([(0, NAN, NAN, 0.04, 0.0, 0.0), (1, 2.5, 0.4, 0.5, 0.25, 1.2)])
    from_numpy = training_curves(rows)
    with_none = training_curves([(0, None, None, 0.04, 0.0, 0.0), (1, 2.5, 0.4, 0.5, 0.25, 1.2)])
    assert [t.y for t in from_numpy.data] == [t.y for t in with_none.data]
    assert from_numpy.data[0].x == (0, 1) and all(type(x) is int for x in from_numpy.data[0].x)


def test_an_empty_history_gives_empty_traces():
    figure = training_curves([])
    assert len(figure.data) == 4 and all(t.x == () and t.y == () for t in figure.data)
    assert figure.layout.title.text == ""


def test_curves_need_neither_streamlit_nor_tensorflow():
    probe = (
        "import sys\n"
        "from attnviz.drawing.curves import training_curves\n"
        "training_curves([(0, float('nan'), 0.1, 0.1, 0.0, 0.0)])\n"
        "print(sorted(m for m in ('streamlit', 'tensorflow', 'keras') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_curves_are_a_plain_figure_that_draws_what_plotly_s_checked_figure_draws():
    plain, checked = plain_and_checked(training_curves(HISTORY, title="<b>dates</b>"))  # drawn
    # on every run of Learn: no plotly checks
    assert plain == checked
