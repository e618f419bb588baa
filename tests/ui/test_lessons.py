"""Tests for ui/pages/lesson.py and attnviz/lessons: every lesson opens its page prepared as it
says, keeps the learner's changes until another lesson is opened, and links to the next one."""

from __future__ import annotations

import app_support as ui
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attnviz.lessons import LESSONS, get_lesson
from attnviz.ui.controls import positions
from attnviz.ui.explorer import results
from attnviz.ui.frame.navigation import NEXT_PAGE
from attnviz.ui.pages import MODES_BY_NAME
from attnviz.ui.pages import language_model as lm_page


def test_the_path_has_at_least_the_ten_concepts_in_order():
    titles = [lesson.title for lesson in LESSONS]
    assert len(titles) >= 10
    for word in ("query", "softmax", "√d_k", "Masks", "score", "Q, K and V", "heads",
                 "three ways", "learned", "trained heads"):  # fmt: skip
        assert any(word.lower() in title.lower() for title in titles), word
    assert [lesson.slug for lesson in LESSONS[:2]] == ["lesson-1", "lesson-2"]
    for lesson in LESSONS:
        assert lesson.mode in MODES_BY_NAME and lesson.text and lesson.try_this


def test_a_lesson_outside_the_path_is_refused():
    with pytest.raises(ValueError, match="numbered 1 to"):
        get_lesson(len(LESSONS) + 1)


@pytest.fixture(scope="module")
def session() -> AppTest:
    at = ui.new_session("matrices")
    ui.assert_ok(at)
    return at


@pytest.mark.parametrize(
    "lesson",
    [ui.quick_unless_loading(lesson.mode, lesson) for lesson in LESSONS],
    ids=[lesson.slug for lesson in LESSONS],
)
def test_every_lesson_opens_its_page_prepared(session, lesson):
    ui.open_page(session, lesson.slug)
    ui.assert_ok(session)
    assert session.header[0].value == f"{lesson.number}. {lesson.title}"
    assert any(lesson.try_this[:40] in i.value for i in session.info)
    assert f"Lesson {lesson.number} of {len(LESSONS)}" in ui.captions(session)
    assert session.get("plotly_chart") or lesson.setup.get("source") == "Train"


@pytest.mark.parametrize(
    "lesson",
    [lesson for lesson in LESSONS if "preset" in lesson.setup],
    ids=[lesson.slug for lesson in LESSONS if "preset" in lesson.setup],
)
def test_a_lessons_link_opens_its_preset_and_the_box_names_it(lesson):
    # a new visitor arriving by the lesson's own URL (a link on a slide), not from another page:
    # the preset the lesson names, and the box and its caption saying so
    from attnviz.inputs.presets import shipped_presets

    at = AppTest.from_file(ui.APP, default_timeout=120)
    at.session_state[NEXT_PAGE.key] = lesson.slug
    at.run(timeout=ui.FIRST_RUN_TIMEOUT)
    ui.assert_ok(at)
    preset = shipped_presets()[lesson.setup["preset"]]
    assert ui.preset_box(at).value == preset.name
    assert preset.teaches in ui.captions(at)


def test_lesson_4_prepares_the_masking_pitfall_and_keeps_the_learners_changes():
    at = ui.new_session("matrices")
    ui.open_page(at, "lesson-4")
    assert ui.preset_box(at).value == "06_masking_pitfall"
    assert at.toggle(key="causal").value is True and at.radio(key="mask_value").value == "-1e9"
    np.testing.assert_allclose(ui.weights(at)[0], 1 / 3, atol=1e-6)  # the pitfall: uniform
    at.toggle(key="causal").set_value(False).run()  # the learner tries something
    at.run()
    assert at.toggle(key="causal").value is False  # not prepared again on every run
    ui.open_page(at, "lesson-5")
    ui.open_page(at, "lesson-4")  # opened again: prepared again
    assert at.toggle(key="causal").value is True


def test_lesson_3_compares_scaled_and_unscaled_on_the_keras_tutorial_inputs():
    at = ui.new_session("matrices")
    ui.open_page(at, "lesson-3")
    assert ui.titles(at)[:2] == ["A: current settings", "B: unscaled"]


@pytest.mark.slow  # the last lesson loads the shipped language model
def test_the_lessons_of_today_s_attention_open_rope_and_the_language_model():
    at = ui.new_session("matrices")
    ui.open_page(at, f"lesson-{len(LESSONS) - 1}")
    ui.assert_ok(at)
    assert ui.preset_box(at).value == "11_rope_probe"
    assert at.session_state[results.VIEW.key] == "Positions"
    assert at.session_state[positions.POSITION.key] == "rope"
    ui.open_page(at, f"lesson-{len(LESSONS)}")
    ui.assert_ok(at)
    assert f"Lesson {len(LESSONS)} of {len(LESSONS)}, on the Language model page." in (
        ui.captions(at)
    )
    assert at.session_state[lm_page.TASK.key] == "induction"
    assert at.session_state[lm_page.VIEW.key] == "Every head"
    assert ui.chart(at, "How sure it was of each next token")


def test_lesson_1s_try_this_adds_up():
    # "type `0 9 0` as the second key (key 1): query 1's score for it grows from 5 to 9, and
    # query 0's falls from 4 to 0", on the lesson's own preset, in float64
    from attnviz.inputs.parsing import parse_matrix_text
    from attnviz.inputs.presets import shipped_presets

    lesson = LESSONS[0]
    assert "`0 9 0`" in lesson.try_this and "from 5 to 9" in lesson.try_this
    preset = shipped_presets()[lesson.setup["preset"]]
    q, k = parse_matrix_text(preset.query), parse_matrix_text(preset.key)
    before = q @ k.T  # (2, 2) raw scores
    k[1] = [0, 9, 0]
    after = q @ k.T
    assert (before[1, 1], after[1, 1]) == (5, 9) and (before[0, 1], after[0, 1]) == (4, 0)


def test_lesson_5s_answer_reads_the_chart_the_page_draws():
    # "with seed 0, key 2 wins queries 1, 2 and 3, and only query 0 keeps its own key": the
    # Compare tab's B (the general score, the first other) as the page draws it
    at = ui.new_session("matrices")
    ui.open_page(at, "lesson-5")
    ui.assert_ok(at)
    (title,) = [t for t in ui.titles(at) if t.startswith("B: general")]
    b = np.nan_to_num(ui.values(at, title), nan=0.0)
    assert b.argmax(axis=1).tolist() == [0, 2, 2, 2]
    assert "key 2 wins queries 1, 2 and 3" in LESSONS[4].why


def test_lesson_7s_answer_reads_the_heads_the_page_draws():
    # "Head 0's: ... each row's bright cell sits one column left of the diagonal. The average
    # looks like no single head": head 0 looks at i − 1; the average is flatter than it
    at = ui.new_session("matrices")
    ui.open_page(at, "lesson-7")
    ui.assert_ok(at)
    head = np.nan_to_num(ui.values(at, "Head 0 (enlarged)"), nan=0.0)  # (T, T) weights
    rows = np.arange(1, head.shape[0])
    assert (head[rows].argmax(axis=1) == rows - 1).all()
    average = np.nan_to_num(ui.values(at, "Average of the heads"), nan=0.0)
    assert average.max(axis=1).mean() < head.max(axis=1).mean()
    assert LESSONS[6].why.startswith("Head 0's") and "left of the diagonal" in LESSONS[6].why
