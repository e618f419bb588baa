"""Tests for drawing/positions.py: a position scheme's pattern on identical tokens, as a heatmap
and as each head's score against the offset i − j."""

import numpy as np
from figure_support import plain_and_checked

from attnviz.drawing.positions import offset_lines, probe_heatmap
from attnviz.inputs.probe import position_probe


def test_alibi_s_lines_fall_with_the_offset_by_each_head_s_slope():
    probe = position_probe(4, 8, "alibi", num_heads=2)
    figure = offset_lines(probe)
    assert [trace.name for trace in figure.data] == [
        f"head {h} (m = {probe.slopes[h]:.3g})" for h in range(2)
    ]
    for h, trace in enumerate(figure.data):
        np.testing.assert_array_equal(trace.x, np.arange(-3, 4))  # offsets i − j
        y = np.asarray(trace.y, dtype=float)  # identical tokens: one content score, then
        np.testing.assert_allclose(y - y[3], -probe.slopes[h] * np.abs(trace.x), atol=1e-5)
        # ALiBi's −m·|i − j|
    assert figure.layout.xaxis.title.text.startswith("offset i − j")
    assert probe_heatmap(probe).layout.title.text.startswith("ALiBi alone")


def test_the_lines_are_a_plain_figure_that_draws_what_plotly_s_checked_figure_draws():
    for scheme in ("alibi", "rope"):
        plain, checked = plain_and_checked(offset_lines(position_probe(6, 8, scheme, num_heads=2)))
        assert plain == checked  # drawn on every run of the Positions tab
