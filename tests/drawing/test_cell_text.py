"""Tests for attnviz/drawing/cell_text.py: the numbers printed in a heatmap's cells."""

import numpy as np
import pytest

from attnviz.drawing.cell_text import CELL_TEXT_GAP, CELL_TEXT_PX, cell_number, number_width
from attnviz.drawing.heatmap import heatmap
from attnviz.drawing.theme import FONT_SIZE


def _rows(table) -> list[list]:
    return [list(row) for row in table]


def test_small_matrices_print_values_with_three_digits():
    fig = heatmap([[0.123456, -12.3456], [1.0, 1234.5]])
    assert _rows(fig.data[0].text) == [["0.123", "-12.3"], ["1", "1234"]]  # never 1.23e+03
    assert fig.data[0].texttemplate == "%{text}"
    assert fig.data[0].textfont.color is None  # plotly picks a colour contrasting each cell


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.0, "0"), (1e-5, "<0.001"), (-3e-7, ">−0.001"), (0.00123, "0.00123"), (0.5, "0.5"),
     (12.345, "12.3"), (-999.6, "-1000"), (2.5e6, "2500000")],
)  # fmt: skip
def test_cell_numbers_are_never_in_scientific_notation(value, text):
    assert cell_number(value) == text


def test_values_in_narrow_cells_are_shorter_and_smaller():
    z = np.full((2, 12), 0.0817)
    trace = heatmap(z[:, :4]).data[0]
    assert trace.text[0][0] == "0.0817" and trace.textfont.size == FONT_SIZE
    trace = heatmap(z[:, :8]).data[0]  # 35 px cells: "0.0817" (41 px) would touch its neighbours
    assert trace.text[0][0] == "0.082" and trace.textfont.size == FONT_SIZE - 2
    assert heatmap(z).data[0].text is None  # not even "0.082" fits: the hover tells each value
    whole = heatmap(np.arange(24.0).reshape(2, 12)).data[0]  # short numbers still fit
    assert whole.text[1][11] == "23" and whole.textfont.size == FONT_SIZE


def test_printed_values_never_run_into_each_other():
    # /cross: "-0.0257-0.00951" in a row of 8 scaled scores
    row = [-0.0791, -0.0261, 0.0887, 0.257, 0.878, -0.0257, -0.00951, -1.26]
    trace = heatmap(np.array([row, row])).data[0]
    cell = CELL_TEXT_PX / len(row)
    widths = [number_width(t, trace.textfont.size) for t in trace.text[0]]
    assert max(widths) + CELL_TEXT_GAP <= cell, trace.text[0]
    assert list(trace.text[0]) == [
        "-0.08",
        "-0.03",
        "0.09",
        "0.26",
        "0.88",
        "-0.03",
        "-0.01",
        "-1.26",
    ]  # two decimals: the largest is below 10
    assert list(heatmap(np.array([[0.001, -0.004, 55.0] * 3])).data[0].text[0][:3]) == [
        "0", "0", "55.0"]  # fmt: skip


def test_larger_matrices_print_no_values_or_marks():
    fig = heatmap(np.zeros((13, 13)), blocked=np.eye(13, dtype=bool))
    assert fig.data[0].text is None and fig.data[1].text is None
    fig = heatmap(np.zeros((12, 12)), blocked=np.eye(12, dtype=bool))
    assert fig.data[0].text is not None and fig.data[1].text is not None
