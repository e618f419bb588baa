"""Tests for ui/pages/start.py and lessons/first_look.py: the start page's three sentences, its
picture (one query's weights, computed), and the way in (every lesson and every page)."""

from __future__ import annotations

import app_support as ui
import numpy as np
from streamlit.testing.v1 import AppTest

from attnviz.lessons import LESSONS
from attnviz.lessons.first_look import first_look
from attnviz.ui.frame.navigation import NEXT_PAGE
from attnviz.ui.pages import MODES


def test_the_first_look_weights_are_softmax_of_the_dot_products():
    look = first_look()
    scores = np.asarray(look.keys, np.float64) @ np.asarray(look.query, np.float64)
    expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    np.testing.assert_allclose(look.weights, expected, atol=1e-6)
    assert look.key_labels[int(np.argmax(look.weights))] == "cat"  # who sat: the cat
    assert sorted(look.weights)[-2] == look.weights[look.key_labels.index("mat")]  # and where


def test_the_start_page_shows_the_picture_and_the_way_in():
    at = ui.new_session("Bogus")  # an unknown page: the app's first page
    at.session_state[NEXT_PAGE.key] = "start"
    at.run()
    ui.assert_ok(at)
    text = " ".join(m.value for m in at.markdown)
    assert "Attention lets every token" in text and "One query, its keys, the weights" in text
    look = first_look()
    bars = ui.decode(ui.chart(at, "Weights of the query")["data"][0]["y"])
    np.testing.assert_allclose(bars, look.weights, atol=1e-6)
    (lines,) = at.get("iframe")  # the line view numbers "sat" by its place, as its key
    assert look.key_labels[look.query_position] == look.query_label == "sat"
    assert '"rows": ["sat \\u00b72"]' in lines.proto.srcdoc
    links = [link.proto.label for link in at.get("page_link")]
    for lesson in LESSONS:
        assert f"{lesson.number}. {lesson.title}" in links
    for mode in MODES:
        assert mode.label in links


def test_an_old_link_to_the_root_with_the_explorers_fields_opens_the_matrices_page():
    at = AppTest.from_file(ui.APP, default_timeout=120)  # `/?q_text=...`: the root was Matrices
    at.query_params.update({"q_text": "1 0\n0 1", "k_text": "1 0\n0 1", "v_text": "1 0\n0 1"})
    at.run(timeout=ui.FIRST_RUN_TIMEOUT)
    ui.assert_ok(at)
    assert ui.current_mode(at) == "matrices"
    assert at.text_area(key="q_text").value == "1 0\n0 1"


def test_the_root_without_fields_is_the_start_page():
    at = AppTest.from_file(ui.APP, default_timeout=120)
    at.run(timeout=ui.FIRST_RUN_TIMEOUT)
    ui.assert_ok(at)
    assert ui.chart(at, "Weights of the query")
    assert not at.sidebar.toggle  # no controls: the start page explains, the pages compute
