"""Tests for ui/exercises/progress.py: a learner's progress and variant come from the URL on a
session's first run (anything unknown in it ignored), go back into it, and the lesson menu marks
the lessons whose exercises are all done."""

from __future__ import annotations

import app_support as ui
from streamlit.testing.v1 import AppTest

from attnviz.lessons.exercises import exercises_of
from attnviz.ui.exercises.progress import DONE, VARIANT


def _page() -> None:
    import streamlit as st

    from attnviz.ui.exercises import progress

    progress.read_url()
    st.write(sorted(progress.done_ids()), progress.variant(), progress.lesson_finished(1))
    if st.button("solve 2a"):
        progress.answered("2a", True)


def test_a_links_progress_is_read_once_and_what_it_does_not_know_is_dropped():
    at = AppTest.from_function(_page)
    at.query_params.update({"done": "1b.1a.99z.x.2b<script>", "variant": "123"})
    at.run()
    assert at.session_state[DONE.key] == "1b.1a"
    assert at.session_state[VARIANT.key] == 123
    at.button[0].click().run()
    assert at.query_params["done"] == "1a.1b.2a"
    assert at.query_params["variant"] == "123"


def test_a_bad_variant_is_replaced_by_a_new_one():
    for bad in ("0", "-4", "abc", "1" * 30, "100000"):
        at = AppTest.from_function(_page)
        at.query_params.update({"variant": bad})
        at.run()
        assert 1 <= at.session_state[VARIANT.key] <= 99_999, bad


def test_the_lesson_menu_marks_a_finished_lesson():
    done = ".".join(exercise.id for exercise in exercises_of(1))
    at = ui.new_session("matrices", done=done)
    ui.assert_ok(at)
    labels = ui.menu_links(at, "matrices")
    first, second = (next(label for label in labels if label.startswith(f"{n}. ")) for n in (1, 2))
    assert first.endswith(" ✓") and not second.endswith("✓")
