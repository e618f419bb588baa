"""The line view: which lines it draws, and that user text never becomes markup."""

import json
import re

import numpy as np
import pytest

from attnviz.drawing.lineview import MAX_LINE_TOKENS, MIN_WEIGHT, line_view_data, line_view_html


def test_lines_are_the_weights_at_or_above_the_threshold():
    weights = np.array([[0.7, 0.3, 0.0], [0.005, 0.995, 0.0]])
    data = line_view_data(weights, ["a", "b"], ["x", "y", "z"])
    assert data["lines"] == [[0, 0, 0.7], [0, 1, 0.3], [1, 1, 0.995]]
    assert all(w >= MIN_WEIGHT for _, _, w in data["lines"])
    assert data["rows"] == ["a ·0", "b ·1"]
    assert data["cols"] == ["0· x", "1· y", "2· z"]


def test_queries_can_carry_their_positions_in_the_sentence():
    # one query of a sentence: "sat", the third token, is numbered 2 as its key is
    data = line_view_data(np.array([[0.2, 0.8]]), ["sat"], ["cat", "sat"], row_positions=[2])
    assert data["rows"] == ["sat ·2"]
    with pytest.raises(ValueError, match="one position per query: 1 queries, 2 positions"):
        line_view_data(np.array([[1.0]]), ["a"], ["b"], row_positions=[0, 1])


def test_too_many_tokens_is_a_value_error():
    with pytest.raises(ValueError, match=r"at most 64 queries and keys\. Received 65 queries"):
        line_view_data(np.zeros((MAX_LINE_TOKENS + 1, 2)), ["t"] * 65, ["k"] * 2)


def test_user_text_travels_as_json_and_never_as_markup():
    evil = "<img src=x onerror=alert(1)></script><script>alert(2)</script>&amp;"
    page = line_view_html(np.array([[1.0]]), [evil], [evil])
    assert "<img" not in page and "alert(2)</script>" not in page
    blob = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    data = json.loads(blob.group(1))  # \u003c escapes decode back to the user's exact text
    assert data["rows"] == [f"{evil} ·0"]
    assert "textContent = name" in page and "innerHTML" not in page


@pytest.mark.parametrize("theme", ["light", "dark", "unknown"])
def test_theme_colours_are_filled_in(theme):
    page = line_view_html(np.array([[1.0]]), ["a"], ["b"], theme=theme)
    assert "__TEXT__" not in page and "__LINE__" not in page and "__HIGH__" not in page
