"""Tests for drawing/next_token.py: one bar per next token, its probability, green when it was
the model's best guess."""

import numpy as np
import pytest
from figure_support import plain_and_checked

from attnviz.drawing.next_token import (
    RIGHT_COLOR,
    WRONG_COLOR,
    copyable,
    copying_words,
    next_token_figure,
)


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


def test_copyable_positions_are_the_in_context_ones():
    # <s> a b c a b c: reading the second a, b (positions 4, 5) copying gives b, c; reading
    # the last c gives nothing (nothing followed the first run's c but a, and no token is next)
    read = ["<s>", "a", "b", "c", "a", "b", "c"]
    assert copyable(read).tolist() == [False, False, False, False, True, True]
    # the token just before does not count (j < i − 1): reading the third a, the first is one
    assert copyable(["<s>", "a", "a", "a", "a"]).tolist() == [False, False, False, True]


def test_copying_words_say_what_the_bars_show():
    read = ["<s>", "a", "b", "c", "a", "b", "c"]
    sure = [0.2, 0.2, 0.2, 0.2, 0.9, 0.1]
    guessed = ["x", "x", "x", "x", "b", "a"]  # right at position 4 only
    words = copying_words(read, sure, guessed)
    assert "at 2 positions" in words and "right at 1," in words
    assert "mean probability of 0.50" in words  # (0.9 + 0.1) / 2
    one = copying_words(["<s>", "a", "b", "a", "b"], [0.5, 0.5, 0.5, 0.99], list("xxxb"))
    assert "at 1 position:" in one and "right at 1," in one and "0.99" in one
    assert "Nothing in this text can be copied" in copying_words(list("<abc"), [1, 1, 1], "xyz")


def test_copying_words_refuse_lengths_that_do_not_fit():
    with pytest.raises(ValueError, match="one token more"):
        copying_words(["<s>", "a"], [0.5, 0.5], ["a", "b"])


def test_the_bars_are_a_plain_figure_that_draws_what_plotly_s_checked_figure_draws():
    figure = next_token_figure(["a", "<b>", "c"], [0.25, 0.9, 0.0], ["a", "<b>", "x"], title="t")
    plain, checked = plain_and_checked(figure)  # drawn on every run of its page
    assert plain == checked
