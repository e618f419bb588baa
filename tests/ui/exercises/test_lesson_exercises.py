"""Tests for ui/exercises/view.draw_exercises: a lesson's exercises under a heading that counts
those done, one tab each (✓ when done); no reveal drawn before an answer; the teacher's switch
only in the presenter view, showing each solution and why."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from attnviz.lessons.exercises import exercises_of
from attnviz.ui.exercises.progress import DONE, SOLUTIONS, VARIANT
from attnviz.ui.exercises.view import OPEN_TAB
from attnviz.ui.frame.presenter import PRESENT


def _page(lesson: int) -> None:
    from attnviz.ui.exercises.view import draw_exercises

    draw_exercises(lesson)


def _open(lesson: int, **state) -> AppTest:
    at = AppTest.from_function(_page, args=(lesson,), default_timeout=60)
    at.session_state[VARIANT.key] = 41
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_heading_counts_the_exercises_done_and_their_tabs_are_marked():
    at = _open(2, **{DONE.key: "1a.2b"})
    assert at.subheader[0].value == "Exercises"
    assert at.caption[0].value.startswith("1 of 3 done · variant 41")
    titles = [tab.label for tab in at.tabs]
    assert titles == [
        "1. Guess a weight",
        "2. Put 0.9 on one key ✓",
        "3. Share evenly between two keys",
    ]
    assert at.query_params["variant"] == "41" and at.query_params["done"] == "1a.2b"


def test_nothing_a_guess_would_reveal_is_drawn_before_it_is_made():
    at = _open(1)  # 1a (compute) and 1b (predict): nothing answered yet
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert titles == []
    assert not any("**Why.**" in m.value for m in at.markdown)


def _solutions(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**Solution:**")]


def test_the_teachers_switch_is_there_only_when_presenting_and_shows_every_solution():
    assert not _open(4).toggle  # a learner's page: no switch
    at = _open(4, **{PRESENT.key: True})
    assert [t.label for t in at.toggle] == ["Show the solutions (teacher)"]
    at.toggle(key=SOLUTIONS.key).set_value(True).run()
    assert len(_solutions(at)) == 1  # the open tab's
    assert len(at.tabs) == len(exercises_of(4))
    for tab in at.tabs[1:]:  # each tab opened shows its own
        at.session_state[OPEN_TAB.of("4").key] = tab.label
        at.run()
        assert len(_solutions(at)) == 1


def test_only_the_open_tabs_exercise_is_drawn_and_it_stays_open_when_solved():
    at = _open(2)
    captions = [c.value for c in at.caption if c.value.endswith(("2a", "2b", "2c"))]
    assert captions == ["Predict, then reveal · exercise 2a"]  # the first tab's alone
    at.session_state[OPEN_TAB.of("2").key] = "3. Share evenly between two keys"
    at.run()
    captions = [c.value for c in at.caption if c.value.endswith(("2a", "2b", "2c"))]
    assert captions == ["Make it happen · exercise 2c"]
    at.session_state[DONE.key] = "2c"  # solved: its title gains a ✓ (new tabs to Streamlit)
    at.run()
    assert [tab.label for tab in at.tabs][2] == "3. Share evenly between two keys ✓"
    captions = [c.value for c in at.caption if c.value.endswith(("2a", "2b", "2c"))]
    assert captions == ["Make it happen · exercise 2c"]  # still the one open
