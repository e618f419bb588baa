"""The teacher's side of a class, on a lesson page: "Start a class" (in the presenter view), then
on the projector the join code, a QR code of the join link (drawn by segno) and the link
itself; controls to move the class to this lesson or one of its exercises and to ask an
exercise's question; live, how many have answered and how the room answered, in the chart's
own terms; Reveal; End the class. The teacher's own link carries the class's secret
(`?class=...&key=...`); every action checks it."""

from __future__ import annotations

import io
from urllib.parse import urlencode, urlsplit, urlunsplit

import segno
import streamlit as st

from attnviz.classroom import ClassError
from attnviz.lessons import Lesson
from attnviz.ui.classroom import question
from attnviz.ui.classroom.session import (
    CODE_FIELD,
    POLL_SECONDS,
    TEACHING,
    room,
    stop_teaching,
    teacher_fields,
    teaching,
)
from attnviz.ui.classroom.student import PAGE
from attnviz.ui.exercises import progress
from attnviz.ui.frame import navigation
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import error, plain
from attnviz.ui.frame.presenter import presenting
from attnviz.ui.frame.state import slot

TARGET = slot("class_target", "", kept=True)  # where "Move" and "Ask" take the class
NOTE = slot("class_note", "", kept=True)  # what the last action said, when it failed
QR_PIXELS = 260  # the QR code's width on the page


def class_panel(lesson: Lesson) -> None:
    """The class panel of `lesson`'s page: "Start a class" in the presenter view, or the class
    this session teaches."""
    teacher = teaching()
    if NOTE.get():
        error(plain(NOTE.get()))
        NOTE.clear()
    if teacher is None:
        if presenting():
            st.button(
                "Start a class", icon=":material/groups:", on_click=_start, args=(lesson.number,),
                help="The room joins from their phones (a code and a QR code on the projector); "
                "you move them through the lesson and ask its questions.",
            )  # fmt: skip
        return
    navigation.write_fields(teacher_fields())  # the teacher's link: a reload keeps the class
    code, _ = teacher
    with st.container(border=True):
        _join_card(code)
        _controls(lesson)
        _live()


def _start(lesson: int) -> None:
    try:
        started = room().start(lesson)
    except ValueError as err:
        NOTE.set(str(err))
        return
    TEACHING.set((started.code, started.secret))


def join_link(code: str) -> str:
    """The students' link to class `code`: this site's /class page (beside the page open now)."""
    here = urlsplit(st.context.url or "")
    path = here.path.rsplit("/", 1)[0] + f"/{PAGE}"
    return urlunsplit((here.scheme, here.netloc, path, urlencode({CODE_FIELD: code}), ""))


def qr_png(link: str) -> bytes:
    """`link` as a QR code, a PNG (segno: error correction M, a quiet zone of 2 modules)."""
    out = io.BytesIO()
    segno.make(link, error="m").save(out, kind="png", scale=10, border=2)
    return out.getvalue()


def _join_card(code: str) -> None:
    words, picture = st.columns([2, 1], vertical_alignment="center")
    link = join_link(code)
    words.markdown(f"Join the class: scan the code, or open **{plain(link)}** and type")
    words.markdown(f"# `{code}`")
    words.caption("Keep this page's link to yourself: it carries the class's key.")
    picture.image(qr_png(link), width=QR_PIXELS, caption="Scan to join")


def _controls(lesson: Lesson) -> None:
    exercises = {e.id: e for e in room().exercises(lesson.number)}
    if TARGET.get() not in ("", *exercises):
        TARGET.clear()
    target = st.selectbox(
        "Where the class goes", ("", *exercises), key=TARGET.key,
        format_func=lambda i: f"Exercise {i}: {exercises[i].title}" if i else "The lesson's text",
    )  # fmt: skip
    move, ask, end = st.columns(3)
    move.button("Move the class here", on_click=_act, args=("move", lesson.number, target))
    ask.button("Ask this question", on_click=_act, args=("ask", lesson.number, target, _asked()),
               disabled=not target, type="primary")  # fmt: skip
    end.button("End the class", on_click=_act, args=("end",))


def _asked() -> int | None:
    """How many questions the class has been asked, as this page is drawn: its Ask button asks
    the next one only (a press that arrives twice asks once); None if the store is not
    answering (then every press asks)."""
    try:
        return room().state(TEACHING.get()[0]).question
    except ClassError:
        return None


def _act(action: str, lesson: int = 0, target: str = "", after: int | None = None) -> None:
    """A teacher's button: move, ask (`after`: the questions asked when it was drawn), reveal
    or end; a refusal is shown on the next run."""
    teacher = TEACHING.get()
    if teacher is None:  # the class ended by a press before this one
        return
    code, secret = teacher
    try:
        if action == "move":
            room().move(code, secret, lesson, target)
        elif action == "ask":
            room().ask(code, secret, target, progress.seed_of(target), after=after)
        elif action == "reveal":
            room().reveal(code, secret)
        else:
            room().end(code, secret)
            stop_teaching()
    except ValueError as err:
        NOTE.set(str(err))


@st.fragment(run_every=POLL_SECONDS)
def _live() -> None:
    """Where the class is and how the room answered, as it comes in."""
    teacher = TEACHING.get()
    if teacher is None:
        return
    try:
        state = room().state(teacher[0])
        members = room().members(state.code)
    except ClassError as err:  # a store not answering too: asked again in `POLL_SECONDS`
        error(plain(err))
        return
    place = f", exercise {state.exercise}" if state.exercise else ""
    st.caption(f"The class is at lesson {state.lesson}{place} · {len(members)} joined.")
    with st.expander("Who joined"):
        st.text(", ".join(name or "(no nickname)" for name in members.values()) or "No one yet.")
    if not state.question:
        return
    exercise, variant = room().question(state)
    st.markdown(f"#### Question {state.question}: {exercise.title} (exercise {exercise.id})")
    question.task(variant)
    tally = room().tally(state)  # counted as the answers came in: no maths here
    if not state.revealed:
        question.room_answers(exercise, variant, tally, False,
                              key=f"class_chart_tally_{state.question}")  # fmt: skip
        st.button("Reveal the answer", on_click=_act, args=("reveal",), type="primary",
                  key="class_reveal")  # fmt: skip
        return
    with back_end():  # the answer and its chart: attnviz's maths
        question.room_answers(exercise, variant, tally, True,
                              key=f"class_chart_tally_{state.question}")  # fmt: skip
        question.revealed(exercise, variant, None, key=f"class_chart_answer_{state.question}")
