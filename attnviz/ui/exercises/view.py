"""A lesson's exercises, one tab each: the task and its numbers, the answer widget, then what the
check says (`Exercise.check`, attnviz's maths on what the learner entered), the chart it
reveals with their answer marked, and why. Wiring and drawing only.

- **predict**: nothing that gives the answer away is drawn until the learner commits; the
  commit is final for these numbers ("New numbers" for another try).
- **compute**: checked when the learner presses Check; a wrong answer is told the step that went
  wrong, and they try again; "Show how" after a wrong try.
- **make**: checked on every change, saying how far off it is, until it holds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from attnviz.drawing.answer_chart import answer_heatmap, outline_key
from attnviz.lessons.exercises import KINDS, Exercise, Reveal, Variant, Verdict, exercises_of
from attnviz.lessons.exercises.base import (
    EditMatrices,
    Estimate,
    PickCells,
    PickOne,
    SetControls,
    TypeNumber,
    number_text,
)
from attnviz.ui.exercises import progress
from attnviz.ui.frame.charts import chart
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import plain
from attnviz.ui.frame.presenter import presenting
from attnviz.ui.frame.state import slot_family
from attnviz.ui.frame.tabs import open_tab

ANSWER = slot_family("ex_answer", None)  # the answer widgets: see `answer_slot`
COMMITTED = slot_family("ex_committed", None)  # ex_committed_<id>: the answer checked
OPEN_TAB = slot_family("ex_tab", "")  # ex_tab_<lesson>: the exercise tabs' widget (the title open)
SHOWN = slot_family("ex_shown", "", kept=True)  # ex_shown_<lesson>: the id of the exercise open
DONE_MARK = " ✓"
ANCHOR = "exercises"  # the heading's anchor: the lesson's text links to it


def answer_slot(exercise_id: str, part: object = None):
    """The slot of an exercise's answer widget (`part`: one of its boxes, controls or rows of
    cells): "ex_answer_<id>[_<part>]", and "_<n>" after the n-th "New numbers", a new widget
    that the browser shows empty (a widget of the same key would keep what it showed)."""
    times = progress.REDRAWN.of(exercise_id).get()
    name = exercise_id if part is None else f"{exercise_id}_{part}"
    return ANSWER.of(f"{name}_{times}" if times else name)


def exercises_link(lesson: int) -> str:
    """A line for the top of the lesson: its exercises, how many are done, and a link down."""
    exercises = exercises_of(lesson)
    done = sum(exercise.id in progress.done_ids() for exercise in exercises)
    return (
        f"Then try the [exercises](#{ANCHOR}) at the bottom of the page: {done} of "
        f"{len(exercises)} done."
    )


def draw_exercises(lesson: int) -> None:
    """Lesson `lesson`'s exercises under a heading that counts those solved."""
    exercises = exercises_of(lesson)
    if not exercises:
        return
    progress.write_url()  # a lesson opened by a link or the menu: its URL shows the progress
    done = progress.done_ids()
    solved = sum(exercise.id in done for exercise in exercises)
    st.subheader("Exercises", anchor=ANCHOR)
    st.caption(
        f"{solved} of {len(exercises)} done · variant {progress.variant()}: the same link gives "
        "the same numbers; someone beside you may have others."
    )
    if presenting() or progress.SOLUTIONS.get():
        st.toggle(
            "Show the solutions (teacher)",
            help="Each exercise's solution and why, for the teacher; a learner's link does not "
            "carry this switch.",
            **progress.SOLUTIONS.widget(),
        )
    titles = [f"{k + 1}. {e.title}{DONE_MARK * (e.id in done)}" for k, e in enumerate(exercises)]
    shown = [k for k, e in enumerate(exercises) if e.id == SHOWN.of(str(lesson)).get()]
    _exercise_tabs(lesson, tuple(titles), titles[shown[0] if shown else 0])


@st.fragment
def _exercise_tabs(lesson: int, titles: tuple[str, ...], first: str) -> None:
    """One tab per exercise; only the open tab's exercise is drawn (a tab opened reruns this
    fragment alone, not the lesson above it). Every exercise drawn at once was a third of a
    lesson's run and most of its page's elements (profiled): a make-it-happen task draws its
    chart, the others their widgets and matrices, all hidden but the first.

    The `titles` and the tab open `first` are the page run's, and the fragment reruns with
    them: Streamlit takes tabs of other titles or another first tab for new ones. A title gains
    its ✓ on the page's next run, and the tab last open (`SHOWN`) is the first one then."""
    opened = open_tab(titles, OPEN_TAB.of(str(lesson)).key, default=first)  # (drawn below it)
    exercise = exercises_of(lesson)[titles.index(opened)]
    SHOWN.of(str(lesson)).set(exercise.id)
    with back_end():  # the checks run attnviz's maths (TensorFlow; some, trained models)
        draw_exercise(exercise)


@st.fragment
def draw_exercise(exercise: Exercise) -> None:
    """One exercise, as a fragment: answering it reruns only the exercise, not the lesson's
    page above it (its charts stay as they are). The counts in the heading and the tabs follow
    on the page's next run."""
    variant = exercise.variant(progress.seed_of(exercise.id))
    st.caption(f"{KINDS[exercise.kind]} · exercise {exercise.id}")
    st.markdown(variant.prompt)
    shown_matrices(variant)
    _answer_part(exercise, variant)
    st.button(  # here, not in the answer's fragment: new numbers redraw the task too
        "New numbers", key=f"ex_new_{exercise.id}", on_click=_new_numbers, args=(exercise.id,),
        help="Another variant of this exercise.",
    )  # fmt: skip
    if progress.SOLUTIONS.get():
        with st.container(border=True):
            st.markdown(f"**Solution:** {as_text(exercise.solution(variant))}")
            st.markdown(f"**Why:** {exercise.explain(variant)}")
    elif exercise.kind != "make" and not exercise.needs_models:
        exercise.solution(variant)  # the maths of these numbers, worked out while the learner
        # thinks (what is drawn above is sent already): the check then finds it computed


@st.fragment
def _answer_part(exercise: Exercise, variant: Variant) -> None:
    """The learner's answer and what its check says, a fragment inside the exercise's: a check
    or an edit reruns only this, not the task above it (its prompt, its matrices as LaTeX), so
    the browser redraws less of the lesson's page. "New numbers" is the exercise's."""
    if exercise.kind == "make":
        _make_it_happen(exercise, variant)
    else:
        _answer_then_check(exercise, variant)


def shown_matrices(variant: Variant) -> None:
    """The task's matrices side by side (stacked on a phone), each with what its rows and
    columns are."""
    if not variant.shown:
        return
    for place, (name, matrix, rows, cols) in zip(
        st.columns(len(variant.shown)), variant.shown, strict=True
    ):
        body = r" \\ ".join(" & ".join(number_text(x) for x in row) for row in np.asarray(matrix))
        place.latex(rf"{name} = \begin{{bmatrix}} {body} \end{{bmatrix}}")
        place.caption(f"{name}: rows are {_span(rows)}; columns are {_span(cols)}.")


def _span(labels: tuple[str, ...]) -> str:
    return labels[0] if len(labels) == 1 else f"{labels[0]} to {labels[-1]}"


# ---- predict and compute: answer, then check -----------------------------------------------


def _answer_then_check(exercise: Exercise, variant: Variant) -> None:
    committed = COMMITTED.of(exercise.id)
    final = exercise.kind == "predict" and committed.get() is not None
    _answer_widget(exercise, variant, disabled=final)
    label = "Commit my guess" if exercise.kind == "predict" else "Check"
    st.button(
        label, key=f"ex_check_{exercise.id}", disabled=final, type="primary",
        on_click=_commit, args=(exercise.id, variant.answer),
    )  # fmt: skip
    if committed.get() is None:
        return
    verdict = exercise.check(variant, committed.get())
    _verdict(verdict)
    if exercise.kind == "compute" and not verdict.solved:
        with st.expander("Show how"):
            st.markdown(exercise.explain(variant))
        return
    progress.answered(exercise.id, verdict.solved)
    _reveal(exercise, variant, committed.get(), why=True)


def _answer_widget(exercise: Exercise, variant: Variant, disabled: bool) -> Any:
    spec, key = variant.answer, answer_slot(exercise.id).key
    if isinstance(spec, PickOne):
        return st.radio(spec.label, spec.options, index=None, horizontal=True, key=key,
                        disabled=disabled)  # fmt: skip
    if isinstance(spec, Estimate):
        middle = round((spec.low + spec.high) / 2 / spec.step) * spec.step
        return st.slider(spec.label, spec.low, spec.high, middle, spec.step, key=key,
                         disabled=disabled)  # fmt: skip
    if isinstance(spec, TypeNumber):
        text = st.text_input(spec.label, key=key, disabled=disabled,
                             placeholder="a number, e.g. 2.5")  # fmt: skip
        st.caption(f"Counted right within ±{number_text(spec.tolerance, 4)}.")
        return text
    if isinstance(spec, PickCells):
        return _cells_widget(exercise.id, spec, disabled)
    raise ValueError(f"Exercise {exercise.id}: {type(spec).__name__} is not a predict answer.")


def _commit(exercise_id: str, spec) -> None:
    """The answer in the widgets, kept as the one checked (a callback: the page then draws
    the committed state at once, a guess's widgets already locked)."""
    if isinstance(spec, PickCells):
        rows = (answer_slot(exercise_id, i).get() or () for i in range(len(spec.rows)))
        answer = frozenset((i, j) for i, picked in enumerate(rows) for j in picked)
    else:
        answer = answer_slot(exercise_id).get()
    COMMITTED.of(exercise_id).set(answer)


def _cells_widget(exercise_id: str, spec: PickCells, disabled: bool) -> frozenset[tuple[int, int]]:
    st.markdown(spec.label)
    cells = set()
    for i, row in enumerate(spec.rows):
        picked = st.pills(
            f"{row}:", range(len(spec.cols)), format_func=lambda j: spec.cols[j],
            selection_mode="multi", key=answer_slot(exercise_id, i).key, disabled=disabled,
        )  # fmt: skip
        cells |= {(i, j) for j in picked or ()}
    return frozenset(cells)


def _new_numbers(exercise_id: str) -> None:
    """Another variant of one exercise: its widgets new and empty, nothing committed."""
    mine = ANSWER.of(exercise_id).key
    for member in ANSWER.members():  # the old widgets' values: forgotten
        if member.key == mine or member.key.startswith(f"{mine}_"):
            member.clear()
    COMMITTED.of(exercise_id).clear()
    progress.redraw(exercise_id)


# ---- make it happen: checked on every change -----------------------------------------------


def _make_it_happen(exercise: Exercise, variant: Variant) -> None:
    answer = _edit_widgets(exercise, variant)
    verdict = exercise.check(variant, answer)
    if verdict.close is not None and not verdict.solved:
        st.progress(min(1.0, max(0.0, verdict.close)), text="How close you are")
    _verdict(verdict)
    if verdict.solved:
        progress.answered(exercise.id, True)
    _reveal(exercise, variant, answer, why=verdict.solved)


def _edit_widgets(exercise: Exercise, variant: Variant) -> dict[str, Any]:
    spec = variant.answer
    answer: dict[str, Any] = {}
    if isinstance(spec, EditMatrices):
        for name, start in spec.start:
            box = answer_slot(exercise.id, name)
            box.setdefault(start)
            answer[name] = st.text_area(name, key=box.key, height="content")
        return answer
    if isinstance(spec, SetControls):
        for control in spec.controls:
            answer[control.name] = control_widget(
                control, answer_slot(exercise.id, control.name).key
            )
        return answer
    raise ValueError(f"Exercise {exercise.id}: {type(spec).__name__} is not a make answer.")


def control_widget(control, key: str) -> Any:
    """The widget of one control of a `SetControls` answer: a switch, a choice or a whole
    number; its value."""
    if set(control.options) == {False, True}:
        return st.toggle(control.label, value=bool(control.default), key=key)
    if control.options:
        index = control.options.index(control.default) if control.default in control.options else 0
        return st.selectbox(control.label, control.options, index=index, key=key,
                            format_func=str)  # fmt: skip
    start = control.default if control.default is not None else control.low
    return st.number_input(control.label, control.low, control.high, int(start), 1, key=key)


# ---- what the check says -------------------------------------------------------------------


def _verdict(verdict: Verdict) -> None:
    if verdict.solved:
        st.success(verdict.message, icon=":material/check_circle:")
    else:
        st.warning(verdict.message, icon=":material/lightbulb:")


def _reveal(exercise: Exercise, variant: Variant, answer: Any, why: bool) -> None:
    """The exercise's chart for `answer`, and (`why`) the explanation."""
    shown = exercise.reveal(variant, answer)
    if shown is not None:
        reveal_chart(shown, f"exercise-{exercise.id}", key=f"ex_chart_{exercise.id}")
    if why:
        st.markdown(f"**Why.** {exercise.explain(variant)}")


def reveal_chart(shown: Reveal, name: str, key: str, fig=None) -> None:
    """An exercise's revealed chart (`Exercise.reveal`), its outlines named under it; saved as
    attnviz-`name`. `fig`: `reveal_figure(shown)`, if built already."""
    chart(reveal_figure(shown) if fig is None else fig, name, key=key)
    if words := outline_key(bool(shown.guessed), bool(shown.right)):
        st.caption(words)


def reveal_figure(shown: Reveal):
    """The heatmap of an exercise's revealed chart, its answer's cells outlined."""
    return answer_heatmap(
        shown.matrix, shown.rows, shown.cols, title=shown.title, kind=shown.kind,
        allowed=shown.allowed, guessed=shown.guessed, right=shown.right,
    )  # fmt: skip


# ---- the teacher's view -------------------------------------------------------------------


def as_text(answer: Any) -> str:
    """A solution as words: a number, an option, cells, the matrices or controls."""
    if isinstance(answer, dict):
        return "; ".join(f"{name} = `{plain(value)}`" for name, value in answer.items())
    if isinstance(answer, frozenset | set):
        return ", ".join(f"query {i} · key {j}" for i, j in sorted(answer)) or "none"
    if isinstance(answer, float):
        return number_text(answer)
    return plain(answer)
