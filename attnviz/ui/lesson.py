"""A lesson's page: where it is on the path, its text, the thing to try, Previous / Next, and the
page it prepares, drawn as that page draws itself (`Mode.draw`), in the state the lesson asks for.

The lesson prepares its page when it is opened, not on every rerun: what the learner changes on
the page stays until they open another lesson (or this one again from the menu).
"""

from __future__ import annotations

import streamlit as st

from attnviz.lessons import LESSONS, Lesson
from attnviz.ui.mode import Mode
from attnviz.ui.state import slot

PREPARED = slot("lesson_prepared", 0)  # the lesson whose page state is set up (0: none)


def draw_lesson(lesson: Lesson, mode: Mode, pages: dict[str, st.Page]) -> None:
    """The whole page of `lesson`, whose prepared page is `mode`; `pages` are the app's pages by
    URL path (for Previous / Next)."""
    if PREPARED.get() != lesson.number and mode.prepare is not None:
        mode.prepare(**lesson.setup)
        PREPARED.set(lesson.number)
    st.header(f"{lesson.number}. {lesson.title}")
    st.markdown(lesson.text)
    st.info(f"**Try this.** {lesson.try_this}", icon=":material/touch_app:")
    _previous_next(lesson, pages)
    st.divider()
    mode.draw()


def _previous_next(lesson: Lesson, pages: dict[str, st.Page]) -> None:
    left, right = st.columns(2)
    n = lesson.number
    if n > 1:
        before = LESSONS[n - 2]
        left.page_link(
            pages[before.slug], label=f"Previous: {before.title}", icon=":material/arrow_back:"
        )
    if n < len(LESSONS):
        after = LESSONS[n]
        right.page_link(
            pages[after.slug], label=f"Next: {after.title}", icon=":material/arrow_forward:"
        )


def forget_prepared() -> None:
    """Leave the lesson path: the next lesson opened prepares its page again."""
    PREPARED.set(0)
