"""Tests for drawing/next_token.py: one bar per next token, its probability, green when it was
the model's best guess."""

import numpy as np
import pytest

from attnviz.drawing.next_token import RIGHT_COLOR, WRONG_COLOR, next_token_figure


def test_bars_are_the_probabilities_coloured_by_the_best_guess():
    fig = next_token_figure(["b", "a", "<b>"], [0.2, 0.97, 0.5], ["c", "a", "<b>"], title="t")
    (bar,) = fig.data
    np.testing.assert_allclose(bar.y, [0.2, 0.97, 0.5])
    assert list(bar.marker.color) == [WRONG_COLOR, RIGHT_COLOR, RIGHT_COLOR]
    assert list(fig.layout.xaxis.ticktext) == ["b", "a", "&lt;b&gt;"]  # labels escaped
    assert bar.customdata[0][1] == "c"


def test_lengths_that_differ_are_refused():
    with pytest.raises(ValueError, match="one entry per position"):
        next_token_figure(["a", "b"], [0.5], ["a", "b"])
