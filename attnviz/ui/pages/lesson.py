"""A lesson's page: where it is on the path, its text, the thing to try, its answer and its words
(`frame.explained`), Previous / Next, and the page it prepares (showing the controls the lesson
talks about, the others folded away), drawn as that page draws itself (`Mode.draw`), in the
state the lesson asks for.

The lesson prepares its page when it is opened (by Next, Previous, the menu, a link, Back or
Forward), not on every rerun: its page starts from the lesson's prepared state, whatever another
lesson or page left behind, and what the learner changes on the page stays while they are on it.
"""

from __future__ import annotations

import streamlit as st

from attnviz.lessons import LESSONS, Lesson
from attnviz.ui.classroom.teacher import class_panel
from attnviz.ui.exercises import progress
from attnviz.ui.exercises.view import draw_exercises, exercises_link
from attnviz.ui.frame import navigation
from attnviz.ui.frame.explained import lesson_text
from attnviz.ui.frame.mode import Mode
from attnviz.ui.frame.presenter import controls_here
from attnviz.ui.frame.state import Slot, reset_for_lesson, slot, texts_from_url

PREPARED = slot("lesson_prepared", 0, kept=True)  # the lesson whose page is set up (0: none)
PREPARED_TEXTS = slot("lesson_texts", None, kind=dict, kept=True)  # its typed inputs, as set up


def draw_lesson(lesson: Lesson, mode: Mode, pages: dict[str, st.Page]) -> None:
    """The whole page of `lesson`, whose prepared page is `mode`; `pages` are the app's pages by
    URL path (for Previous / Next)."""
    if PREPARED.get() != lesson.number:
        _prepare(lesson, mode)
    st.header(f"{lesson.number}. {lesson.title}")
    class_panel(lesson)  # the teacher's class, if any (in the presenter view: "Start a class")
    lesson_text(lesson, pages)  # its text, the thing to try, the answer, its words
    st.markdown(exercises_link(lesson.number))
    _previous_next(lesson, pages)
    st.divider()
    controls_here(lesson.controls)  # the controls it talks about in view, the others folded;
    # presenting: under the lesson, on the projector
    mode.draw()
    st.divider()
    draw_exercises(lesson.number)
    _previous_next(lesson, pages)


def _prepare(lesson: Lesson, mode: Mode) -> None:
    """Put the page in the lesson's prepared state: every setting and input back to its default
    (what another lesson or page left behind goes), then what the lesson sets; then what the
    URL says on top (a link's fields, or the learner's changes that Back or Forward return to).

    The URL of a lesson carries only the learner's changes: the page writes nothing to it when
    it opens (each write would be one more entry in the browser's history), and a control the
    URL leaves out shows the lesson's value. A control takes a field of the URL over the
    prepared value when the page first draws it. On Back and Forward, though, Streamlit gives a
    control that the URL leaves out its own default, not the lesson's: there the page runs once
    more, as an ordinary run, before it draws anything."""
    reset_for_lesson()
    if mode.prepare is not None:
        mode.prepare(**lesson.setup)
    PREPARED.set(lesson.number)
    _texts_as_prepared_then_linked(mode)
    if navigation.is_history_navigation():
        st.rerun()


def _texts_as_prepared_then_linked(mode: Mode) -> None:
    """Note the typed inputs as the lesson set them (None: left to the page's first draw), then
    fill those the URL carries from it."""
    prepared = {text.key: text.get() if text.is_set() else None for text in mode.url_texts}
    for linked in texts_from_url(mode.url_texts):
        if prepared[linked.key] is None:
            del prepared[linked.key]  # the page's own first text is not known yet: changed
    PREPARED_TEXTS.set(prepared)


def changed_texts(mode: Mode) -> tuple[Slot[str], ...]:
    """The typed inputs of the lesson's page `mode` that differ from the lesson's (the learner's
    changes, or a link's): the ones its URL carries. A text the lesson leaves to its page
    (None) is the page's first text, as the page's first draw set it."""
    prepared = dict(PREPARED_TEXTS.get() or {})
    for text in mode.url_texts:
        if text.key in prepared and prepared[text.key] is None and text.is_set():
            prepared[text.key] = text.get()
    PREPARED_TEXTS.set(prepared)
    return tuple(
        text for text in mode.url_texts
        if text.key not in prepared
        or (prepared[text.key] is not None and text.get() != prepared[text.key])
    )  # fmt: skip


def _previous_next(lesson: Lesson, pages: dict[str, st.Page]) -> None:
    """Links to the lessons before and after, carrying the learner's progress and variant."""
    left, right = st.columns(2)
    n, fields = lesson.number, progress.link_fields()
    if n > 1:
        before = LESSONS[n - 2]
        left.page_link(
            pages[before.slug], label=f"Previous: {before.title}", icon=":material/arrow_back:",
            query_params=fields,
        )  # fmt: skip
    if n < len(LESSONS):
        after = LESSONS[n]
        right.page_link(
            pages[after.slug], label=f"Next: {after.title}", icon=":material/arrow_forward:",
            query_params=fields,
        )  # fmt: skip


def forget_prepared() -> None:
    """Leave the lesson path: the next lesson opened prepares its page again."""
    PREPARED.set(0)
