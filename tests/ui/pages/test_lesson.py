"""Tests for ui/pages/lesson.py: a lesson is its own state. Opened by any route (Next, Previous, the
menu, a link), a lesson's page is in the lesson's prepared state, whatever the learner changed
on the lesson before; what they change stays while they are on it; its URL carries only their
changes. (The browser's Back and Forward: tests/ui/test_browser_lessons.py.)"""

from __future__ import annotations

import math
from typing import Any

import app_support as ui
import pytest
from streamlit.testing.v1 import AppTest

from attnviz.lessons import LESSONS
from attnviz.ui.exercises.progress import DONE_FIELD, VARIANT_FIELD
from attnviz.ui.explorer.results import VIEW
from attnviz.ui.frame.navigation import NEXT_PAGE
from attnviz.ui.frame.presenter import PRESENT
from attnviz.ui.frame.state import Slot, declared_keys

UNSET = "<unset>"
PROGRESS_FIELDS = (DONE_FIELD, VARIANT_FIELD)  # the learner's, carried from lesson to lesson
# families whose members are named by a counter or a page, not by what they hold: a fresh
# session numbers them otherwise (the preset box is drawn anew under a new key)
NOT_COMPARED = ("preset_box", "pages_menu", "ex_answer")  # ... and the exercises' boxes start
# from the learner's variant (a fresh tab draws another); each exercise has its own keys


def _fresh(slug: str) -> AppTest:
    """A new visitor's tab opened on the page `slug`."""
    at = AppTest.from_file(ui.APP, default_timeout=120)
    at.session_state[NEXT_PAGE.key] = slug
    at.run(timeout=ui.FIRST_RUN_TIMEOUT)
    ui.assert_ok(at)
    return at


def _state(at: AppTest) -> dict[str, Any]:
    """Every declared setting and input that a lesson does not keep (`Slot.kept`), as stored
    (an unset slot is its default), and the URL."""
    url = {k: v for k, v in at.query_params.items() if k not in PROGRESS_FIELDS}
    values: dict[str, Any] = {"URL": url}
    for key, declared in declared_keys().items():
        if declared.kept or key in NOT_COMPARED:
            continue
        if isinstance(declared, Slot):
            values[key] = at.session_state.get(key, declared.default)
        else:
            values |= {k: at.session_state[k] for k in _members(at, key)}
    return values


def _members(at: AppTest, prefix: str) -> list[str]:
    return [k for k in at.session_state if str(k).startswith(f"{prefix}_")]


def _other_option(widget) -> Any:
    """A value of a choice widget other than its current one, if one of its options is its own
    value (a widget whose labels are not its values is left as it is)."""
    current = widget.format_func(widget.value) if widget.value is not None else None
    for option in widget.options:
        try:
            shown = widget.format_func(option)
        except (KeyError, ValueError, TypeError, AttributeError):
            continue
        if option != current and shown == option:
            return option
    return None


def _change_every_control(at: AppTest) -> list[str]:
    """Change every control on the page (but the presenter switch, a setting of the whole site):
    flip a switch, take another option, step a number, add a line to a text; returns the keys
    of the controls changed."""
    changed = []
    for switch in [*at.toggle, *at.checkbox]:
        if switch.key != PRESENT.key:
            switch.set_value(not switch.value)
            changed.append(switch.key)
    for choice in [*at.radio, *at.selectbox, *at.segmented_control]:
        other = _other_option(choice)
        if other is not None:
            choice.set_value(other)
            changed.append(choice.key)
    for number in at.number_input:
        top = number.proto.max if number.proto.has_max else math.inf
        (number.decrement() if number.value + number.step > top else number.increment())
        changed.append(number.key)
    for slider in at.slider:
        if isinstance(slider.value, int | float):
            slider.set_value(slider.max if slider.value != slider.max else slider.min)
            changed.append(slider.key)
    for text in [*at.text_area, *at.text_input]:
        text.set_value(f"{text.value}\n{text.value.splitlines()[0] if text.value else 'x'}")
        changed.append(text.key)
    at.run()
    return changed


def test_positional_encoding_switched_off_in_lesson_6_is_on_in_lessons_7_and_8():
    at = _fresh("lesson-6")
    at.toggle(key="pos").set_value(False).run()
    at.run()
    assert at.toggle(key="pos").value is False  # the learner's change stays on the lesson
    for slug in ("lesson-7", "lesson-8"):  # Next, Next
        ui.follow_link(at, slug)
        ui.assert_ok(at)
        assert at.header[0].value.startswith(slug.split("-")[1] + ". ")
        assert at.toggle(key="pos").value is True, slug
    ui.follow_link(at, "lesson-6")  # Previous, twice: prepared again
    assert at.toggle(key="pos").value is True


def test_a_link_to_a_lesson_with_the_learners_changes_opens_them_on_the_prepared_page():
    # a link to lesson 6 with positional encoding off and its own sentence
    at = ui.new_session("matrices")
    ui.follow_link(at, "lesson-6", pos="false", sentences="a b a")
    ui.assert_ok(at)
    assert at.toggle(key="pos").value is False
    assert at.text_area[0].value == "a b a"
    assert at.session_state[VIEW.key] == LESSONS[5].setup["view"]  # the lesson's own tab


def test_a_lessons_url_carries_only_the_learners_changes_and_progress():
    # opening a lesson writes only the learner's exercise variant to the URL (so that a reload
    # keeps their numbers), the same on every lesson; a typed change goes into it
    at = _fresh("lesson-5")
    variant = at.query_params[VARIANT_FIELD]
    assert variant.isdigit()
    for slug in ("lesson-6", "lesson-7", "lesson-8"):
        ui.follow_link(at, slug)
        assert at.query_params == {VARIANT_FIELD: variant}, slug
    ui.follow_link(at, "lesson-6")
    at.text_area[0].set_value("the dog saw the cat").run()
    assert at.query_params == {"sentences": "the dog saw the cat", VARIANT_FIELD: variant}


@pytest.mark.slow  # lessons 10 and 12 load the shipped Transformer and language model
@pytest.mark.parametrize("field", ["alignment", "mean_distance"])
def test_a_head_sort_chosen_in_lesson_10_is_not_chosen_in_lesson_12(field):
    at = _fresh("lesson-10")
    from attnviz.ui.models.heads_panel import SORT_BY  # after the pages, which import it in order

    ui.assert_ok(at)
    at.selectbox(key=SORT_BY.key).set_value(field).run()
    assert at.selectbox(key=SORT_BY.key).value == field
    ui.follow_link(at, "lesson-11")  # Next
    ui.follow_link(at, "lesson-12")  # Next
    ui.assert_ok(at)
    assert at.selectbox(key=SORT_BY.key).value == SORT_BY.default
    assert "–" not in ui.captions(at)


PAIRS = [
    ui.quick_unless_loading(
        LESSONS[n + 1].mode if LESSONS[n + 1].mode in ui.LOADS_MODELS else LESSONS[n].mode,
        (LESSONS[n], LESSONS[n + 1]),
    )
    for n in range(len(LESSONS) - 1)
]


@pytest.mark.parametrize("lessons", PAIRS, ids=[f"lesson-{n + 1}" for n in range(len(PAIRS))])
def test_after_every_control_changed_on_a_lesson_next_opens_the_next_lesson_as_a_new_tab(lessons):
    lesson, following = lessons
    at = _fresh(lesson.slug)
    before = _state(at)
    changed = _change_every_control(at)
    assert _state(at) != before and len(changed) >= 3  # the learner did change the page
    ui.follow_link(at, following.slug)  # Next
    ui.assert_ok(at)
    assert _state(at) == _state(_fresh(following.slug))
