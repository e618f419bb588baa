"""Tests for ui/frame/tabs.open_tab: a row of tabs picks the view, which is drawn below the row
and never inside a tab's panel (a panel's content costs the browser a walk over every element in
it on each change: see the module), on every page that has such tabs."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import tests.app_support as ui
from attnviz.ui.exercises.view import OPEN_TAB

VIEWS_KEY = "test_views"  # the tabs' key on the test's own page


def _page(key: str) -> None:
    import streamlit as st

    from attnviz.ui.frame.tabs import open_tab

    label = open_tab(["First view", "Second view"], key=key)
    st.markdown(f"drawn: {label}")


def test_the_open_tab_is_returned_and_its_view_drawn_below_the_empty_panels():
    at = AppTest.from_function(_page, args=(VIEWS_KEY,)).run()
    assert [m.value for m in at.markdown] == ["drawn: First view"]
    assert [len(tab.children) for tab in at.tabs] == [0, 0]
    at.session_state[VIEWS_KEY] = "Second view"  # as a click on it does
    at.run()
    assert [m.value for m in at.markdown] == ["drawn: Second view"]
    assert [len(tab.children) for tab in at.tabs] == [0, 0]


@pytest.mark.parametrize(
    "page",
    ["matrices", pytest.param("learn", marks=pytest.mark.slow),
     pytest.param("language-model", marks=pytest.mark.slow)],
)  # fmt: skip
def test_no_page_draws_a_view_inside_a_tab(page):
    at = ui.new_session(page)
    ui.assert_ok(at)
    assert at.tabs, "the page has tabs"
    assert [len(tab.children) for tab in at.tabs] == [0] * len(at.tabs)
    assert at.get("plotly_chart"), "the open view was drawn (below the tabs)"


def _exercises() -> None:
    from attnviz.ui.exercises.view import draw_exercises

    draw_exercises(2)


def test_a_lessons_exercises_are_drawn_below_their_tabs():
    at = AppTest.from_function(_exercises, default_timeout=60).run()
    opened = {
        "1. Guess a weight": "Predict, then reveal · exercise 2a",
        "3. Share evenly between two keys": "Make it happen · exercise 2c",
    }
    for label, caption in opened.items():
        at.session_state[OPEN_TAB.of("2").key] = label
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert [len(tab.children) for tab in at.tabs] == [0, 0, 0]
        assert [c.value for c in at.caption if c.value.endswith(("2a", "2b", "2c"))] == [caption]
