"""A class's question as the students' phones and the teacher's projector draw it: its task and
numbers (as the lesson draws them), the answer widget of its kind, the room's answers in the
chart's own terms (`drawing.room_answers`), and after the reveal the answer, marked. Drawing
only: the answers are checked and counted in `attnviz.classroom`."""

from __future__ import annotations

from typing import Any

import streamlit as st

from attnviz.classroom import Tally
from attnviz.drawing.room_answers import cell_shares, estimate_histogram, option_bars
from attnviz.lessons.exercises import Exercise, Variant
from attnviz.lessons.exercises.base import (
    EditMatrices,
    Estimate,
    PickCells,
    PickOne,
    SetControls,
    TypeNumber,
)
from attnviz.ui.exercises.view import as_text, control_widget, reveal_chart, shown_matrices
from attnviz.ui.frame.charts import chart


def task(variant: Variant) -> None:
    """The question's task and the matrices it gives."""
    st.markdown(variant.prompt)
    shown_matrices(variant)


def answer_widget(variant: Variant, key: str) -> Any:
    """The widget of the question's answer kind (`key`: this question's, so a new question
    starts empty); its answer as the exercise checks it."""
    spec = variant.answer
    if isinstance(spec, PickOne):
        return st.radio(spec.label, spec.options, index=None, horizontal=True, key=key)
    if isinstance(spec, PickCells):
        st.markdown(spec.label)
        return frozenset(
            (i, j)
            for i, row in enumerate(spec.rows)
            for j in st.pills(f"{row}:", range(len(spec.cols)), format_func=spec.cols.__getitem__,
                              selection_mode="multi", key=f"{key}_{i}") or ()
        )  # fmt: skip
    if isinstance(spec, Estimate):
        middle = round((spec.low + spec.high) / 2 / spec.step) * spec.step
        return st.slider(spec.label, spec.low, spec.high, middle, spec.step, key=key)
    if isinstance(spec, TypeNumber):
        return st.text_input(spec.label, key=key, max_chars=200, placeholder="a number, e.g. 2.5")
    if isinstance(spec, EditMatrices):
        return {name: st.text_area(name, start, key=f"{key}_{name}", height="content",
                                   max_chars=2_000) for name, start in spec.start}  # fmt: skip
    if isinstance(spec, SetControls):
        return {control.name: control_widget(control, f"{key}_{control.name}")
                for control in spec.controls}  # fmt: skip
    raise ValueError(f"A class's question takes no answer of kind {type(spec).__name__}.")


def room_answers(exercise: Exercise, variant: Variant, tally: Tally, revealed: bool, key: str):
    """How many answered, and how the room answered in the question's own terms; after the
    reveal, the answer marked on it."""
    st.markdown(f"### {tally.answered} of {tally.members} answered")
    right = exercise.solution(variant) if revealed else None
    spec, title = variant.answer, "How the room answered"
    if isinstance(spec, PickOne):
        counts = [count for _, count in tally.options]
        fig = option_bars(spec.options, counts, title=title, right=right)
    elif isinstance(spec, PickCells):
        fig = cell_shares(tally.cells, tally.answered, spec.rows, spec.cols,
                          title=f"{title}: the share who picked each cell",
                          right=sorted(right or ()))  # fmt: skip
    elif isinstance(spec, Estimate):
        fig = estimate_histogram(tally.edges, tally.counts, title=title, right=right)
    else:
        fig = None
    if fig is not None:
        chart(fig, f"class-{exercise.id}", key=key)
    if revealed or fig is None:
        st.markdown(f"**{tally.solved} of {tally.answered}** answers hold.")


def revealed(exercise: Exercise, variant: Variant, answer: Any, key: str) -> None:
    """After the reveal: what the check says of `answer` (None: no answer), the exercise's chart
    with the answer marked, and why."""
    if answer is not None:
        verdict = exercise.check(variant, answer)
        (st.success if verdict.solved else st.warning)(verdict.message)
    shown = exercise.reveal(variant, answer)
    if shown is not None:
        reveal_chart(shown, f"class-answer-{exercise.id}", key=key)
    st.markdown(f"**The answer:** {as_text(exercise.solution(variant))}")
    st.markdown(f"**Why.** {exercise.explain(variant)}")
