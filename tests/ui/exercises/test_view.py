"""Tests for ui/exercises/view.py: every exercise, drawn as its lesson draws it, answered wrong
through its widgets (AppTest) and told why, then solved: the progress counted, the reveal and
the explanation shown; a guess final until "New numbers", whose widgets start empty. The
lesson's heading and tabs: tests/ui/exercises/test_lesson_exercises.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attnviz.lessons.exercises import EXERCISES
from attnviz.lessons.exercises.base import (
    EditMatrices,
    Estimate,
    PickCells,
    PickOne,
    SetControls,
    TypeNumber,
)
from attnviz.lessons.exercises.scores import SCORE
from attnviz.lessons.exercises.softmax import SURE_OF_ONE as SURE
from attnviz.ui.exercises.progress import DONE, REDRAWN, VARIANT
from attnviz.ui.exercises.view import ANSWER

SEED = 41


def _page(exercise_id: str) -> None:
    from attnviz.lessons.exercises import get_exercise
    from attnviz.ui.exercises.view import draw_exercise

    draw_exercise(get_exercise(exercise_id))  # as its lesson draws it, in its own tab


def _open(exercise_id: str, variant: int = SEED) -> AppTest:
    at = AppTest.from_function(_page, args=(exercise_id,), default_timeout=60)
    at.session_state[VARIANT.key] = variant
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _key(at: AppTest, exercise, part: object = None) -> str:
    """The key of an exercise's answer widget now (`view.answer_slot`, in the test's terms)."""
    redrawn = REDRAWN.of(exercise.id).key
    times = at.session_state[redrawn] if redrawn in at.session_state else 0  # noqa: SIM401
    name = exercise.id if part is None else f"{exercise.id}_{part}"
    return ANSWER.of(f"{name}_{times}" if times else name).key


def _enter(at: AppTest, exercise, variant, answer: Any) -> None:
    """Put `answer` into exercise's widgets as a learner would, then press its button."""
    spec = variant.answer
    if isinstance(spec, PickOne):
        at.radio(key=_key(at, exercise)).set_value(answer)
    elif isinstance(spec, Estimate):
        at.slider(key=_key(at, exercise)).set_value(answer)
    elif isinstance(spec, TypeNumber):
        at.text_input(key=_key(at, exercise)).input(answer)
    elif isinstance(spec, PickCells):
        for i in range(len(spec.rows)):
            at.pills(key=_key(at, exercise, i)).set_value(sorted(j for r, j in answer if r == i))
    elif isinstance(spec, EditMatrices):
        for name, text in answer.items():
            at.text_area(key=_key(at, exercise, name)).input(text)
    elif isinstance(spec, SetControls):
        for control in spec.controls:
            widget = None
            for kind in (at.toggle, at.selectbox, at.number_input):
                found = [w for w in kind if w.key == _key(at, exercise, control.name)]
                if found:
                    widget = found[0]
            widget.set_value(answer[control.name])
    if exercise.kind != "make":
        at.button(key=f"ex_check_{exercise.id}").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def _done(at: AppTest) -> list[str]:
    return at.session_state[DONE.key].split(".") if DONE.key in at.session_state else []


def _seed(at: AppTest, exercise) -> int:
    """The seed the page draws `exercise` from now (`progress.seed_of`)."""
    redrawn = REDRAWN.of(exercise.id).key
    times = at.session_state[redrawn] if redrawn in at.session_state else 0  # noqa: SIM401 - AppTest state has no get
    return SEED + 100_003 * times


def _numbers(variant) -> tuple:
    return (variant.prompt, tuple(tuple(np.ravel(m[1])) for m in variant.shown))


def _models(exercises):
    return [pytest.param(e, marks=[pytest.mark.slow] * e.needs_models, id=e.id) for e in exercises]


@pytest.mark.parametrize("exercise", _models(EXERCISES))
def test_each_exercise_wrong_then_solved_through_the_page(exercise):
    # a typical mistake first: told why, as the check says it, and not counted; then (new
    # numbers, for a guess already revealed) the computed solution: solved, why, counted
    at = _open(exercise.id)
    variant = exercise.make(_seed(at, exercise))
    wrong = exercise.wrong(variant)
    _enter(at, exercise, variant, wrong)
    assert exercise.check(variant, wrong).message in [w.value for w in at.warning]
    assert exercise.id not in _done(at)
    if exercise.kind == "predict":
        assert at.button(key=f"ex_check_{exercise.id}").disabled  # committed: final
        at.button(key=f"ex_new_{exercise.id}").click().run()
        variant = exercise.make(_seed(at, exercise))
        assert _numbers(variant) != _numbers(exercise.make(SEED))  # another variant
        if isinstance(variant.answer, PickOne):  # a new widget, empty: not the old guess
            assert at.radio(key=_key(at, exercise)).value is None
    _enter(at, exercise, variant, exercise.solution(variant))
    assert [s.value for s in at.success], (exercise.id, [w.value for w in at.warning])
    assert exercise.id in _done(at)
    assert any("**Why.**" in m.value for m in at.markdown)


def test_bad_input_is_answered_and_kept_as_typed():
    # a 10,000-character paste, text, NaN in a number field; a matrix of the wrong shape
    at = _open("1a")
    for typed, said in (("7" * 10_000, "10,000 characters long"), ("twelve", "is not a number"),
                        ("nan", "finite number")):  # fmt: skip
        at.text_input(key=_key(at, SCORE)).input(typed)
        at.button(key="ex_check_1a").click().run()
        assert any(said in w.value for w in at.warning), typed
        assert at.text_input(key=_key(at, SCORE)).value == typed  # nothing lost
    at = _open("2b")
    at.text_area(key=_key(at, SURE, "Q")).input("1 2\n3 4").run()
    assert any("Q must have 1 row of 3 numbers; it has 2 × 2" in w.value for w in at.warning)
    assert at.text_area(key=_key(at, SURE, "Q")).value == "1 2\n3 4"


@pytest.mark.parametrize("exercise_id", ["1a", "1b", "2b", "2c"])
def test_the_answer_is_a_fragment_of_its_own_apart_from_the_task_above_it(monkeypatch, exercise_id):
    # a check or an edit reruns only the answer's fragment: the task above it (its prompt, its
    # matrices as LaTeX) is not sent again, so the browser redraws less of the lesson's page;
    # "New numbers" is the exercise's (new numbers redraw the task too)
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    from attnviz.lessons.exercises import get_exercise

    drawn = []  # (kind, text, fragment id) of every element sent
    enqueue = ScriptRunContext.enqueue

    def recording(self, msg):
        if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            kind = element.WhichOneof("type")
            part = getattr(element, kind)
            text = getattr(part, "label", "") or getattr(part, "body", "")
            drawn.append((kind, text, msg.delta.fragment_id))
        return enqueue(self, msg)

    monkeypatch.setattr(ScriptRunContext, "enqueue", recording)
    at = _open(exercise_id)
    exercise = get_exercise(exercise_id)
    prompt = exercise.make(_seed(at, exercise)).prompt
    (task,) = {f for kind, text, f in drawn if kind == "markdown" and text == prompt}
    (renew,) = {f for kind, text, f in drawn if text == "New numbers"}
    answer = {f for kind, text, f in drawn if text in ("Check", "Commit my guess")}
    answer |= {f for kind, _, f in drawn if kind in ("text_area", "checkbox", "selectbox")}
    assert task and renew == task
    assert len(answer) == 1 and task not in answer and "" not in answer
