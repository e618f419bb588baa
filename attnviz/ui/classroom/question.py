"""A class's question as the students' phones and the teacher's projector draw it: its task and
numbers (as the lesson draws them), the answer widget of its kind, the room's answers in the
chart's own terms (`drawing.room_answers`), and after the reveal the answer, marked. Drawing
only: the answers are checked and counted in `attnviz.classroom`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from attnviz.classroom import Tally
from attnviz.core.kept import Kept
from attnviz.drawing.plain_figure import frozen
from attnviz.drawing.room_answers import cell_shares, estimate_histogram, option_bars
from attnviz.lessons.exercises import Exercise, Reveal, Variant, Verdict
from attnviz.lessons.exercises.base import (
    EditMatrices,
    Estimate,
    PickCells,
    PickOne,
    SetControls,
    TypeNumber,
)
from attnviz.ui.exercises.view import (
    as_text,
    control_widget,
    reveal_chart,
    reveal_figure,
    shown_matrices,
)
from attnviz.ui.frame.charts import chart

ROOM_TITLE = "How the room answered"
SHARED = 256  # answers (and solutions) a server keeps checked and drawn (`_shared`)
_SHARED = Kept(SHARED)  # (exercise, seed, what) -> what every phone draws the same


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
    right = _solution(exercise, variant) if revealed else None
    fig = _room_figure(variant.answer, tally, right)
    if fig is not None:
        chart(fig, f"class-{exercise.id}", key=key)
    if revealed or fig is None:
        st.markdown(f"**{tally.solved} of {tally.answered}** answers hold.")


def _room_figure(spec: Any, tally: Tally, right: Any):
    """The room's answers in `spec`'s terms (None for a kind without a chart). Built once per
    server for the same counts: after the reveal every phone of the room draws the same chart,
    and building it was most of a phone's run. The figure is shared, so it is never changed
    (`chart` draws a changed copy for the projector)."""
    if isinstance(spec, PickOne):  # each of them `frozen`: its plain form built once too
        return _option_bars(spec.options, tuple(count for _, count in tally.options), right)
    if isinstance(spec, PickCells):
        cells = tuple(tuple(row) for row in np.asarray(tally.cells).tolist())  # (rows, cols)
        return _cell_shares(cells, tally.answered, spec.rows, spec.cols, tuple(sorted(right or ())))
    if isinstance(spec, Estimate):
        return _estimate_histogram(tuple(tally.edges), tuple(tally.counts), right)
    return None


@functools.lru_cache(maxsize=64)
def _option_bars(options: tuple[str, ...], counts: tuple[int, ...], right: str | None):
    return frozen(option_bars(options, counts, title=ROOM_TITLE, right=right))


@functools.lru_cache(maxsize=64)
def _cell_shares(cells: tuple, answered: int, rows: tuple, cols: tuple, right: tuple):
    title = f"{ROOM_TITLE}: the share who picked each cell"
    fig = cell_shares(np.array(cells), answered, rows, cols, title=title, right=list(right))
    return frozen(fig)


@functools.lru_cache(maxsize=64)
def _estimate_histogram(edges: tuple, counts: tuple, right: float | None):
    return frozen(estimate_histogram(edges, counts, title=ROOM_TITLE, right=right))


def revealed(exercise: Exercise, variant: Variant, answer: Any, key: str) -> None:
    """After the reveal: what the check says of `answer` (None: no answer), the exercise's chart
    with the answer marked, and why."""
    told = _shared(exercise, variant, ("revealed", _answer_key(answer)),
                   lambda: _reveal(exercise, variant, answer))  # fmt: skip
    if told.verdict is not None:
        (st.success if told.verdict.solved else st.warning)(told.verdict.message)
    if told.shown is not None:
        reveal_chart(told.shown, f"class-answer-{exercise.id}", key=key, fig=told.figure)
    st.markdown(f"**The answer:** {as_text(_solution(exercise, variant))}")
    st.markdown(f"**Why.** {told.why}")


@dataclass(frozen=True)
class Told:
    """What the reveal shows a phone that sent one answer: the same on every phone that sent
    it, so each server checks and draws it once (`_shared`)."""

    verdict: Verdict | None  # the check of the answer (None: no answer)
    shown: Reveal | None  # the exercise's revealed chart, if it has one
    figure: Any  # its heatmap, `frozen` (None without a chart)
    why: str  # the explanation (markdown)


def _reveal(exercise: Exercise, variant: Variant, answer: Any) -> Told:
    shown = exercise.reveal(variant, answer)
    return Told(
        None if answer is None else exercise.check(variant, answer), shown,
        None if shown is None else frozen(reveal_figure(shown)), exercise.explain(variant),
    )  # fmt: skip


def _solution(exercise: Exercise, variant: Variant) -> Any:
    return _shared(exercise, variant, ("solution",), lambda: exercise.solution(variant))


def _shared(exercise: Exercise, variant: Variant, what: tuple, build: Callable[[], Any]) -> Any:
    """`build()`, kept per server for `exercise` at `variant`'s seed and `what` (the last
    `SHARED`): after a reveal, and at each move after it, every phone of the room showed the
    same checks and charts, each phone building them again (the check runs attnviz's maths).
    Built each time if `what` cannot be a key (`_answer_key`: an answer that is not one)."""
    return _SHARED.get((exercise, variant.seed, *what), build)


def _answer_key(answer: Any) -> Any:
    """`answer` as a key of `_shared`, its kind with it (a dict as its sorted items); if it
    cannot be one, the answer itself (unhashable: `_shared` then builds each time)."""
    plain = tuple(sorted(answer.items())) if isinstance(answer, dict) else answer
    return (type(answer).__name__, plain)
