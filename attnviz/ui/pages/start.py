"""The start page: what attention does in three sentences and one picture, then the way in: the
lessons, or straight to a page. Drawn by the shell, which hands it the app's pages.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.drawing.focus_row import focus_row
from attnviz.lessons import LESSONS
from attnviz.lessons.first_look import first_look
from attnviz.ui.frame.charts import chart, line_view
from attnviz.ui.frame.mode import Mode
from attnviz.ui.frame.presenter import chart_columns

WHAT_ATTENTION_DOES = (
    "**Attention lets every token of a sequence look at the others and take what it needs.** "
    "Each token asks with a *query*, every token answers with a *key* and offers a *value*: "
    "the query is scored against every key, softmax turns the scores into weights that add up "
    "to 1, and the token receives the weighted average of the values. attnviz lets you build "
    "that by hand, watch every step, and see what trained models do with it."
)


def draw_start(pages: dict[str, st.Page], modes: tuple[Mode, ...]) -> None:
    """The whole start page; `pages` by URL path, `modes` the pages to explore."""
    st.markdown(WHAT_ATTENTION_DOES)
    _picture()
    st.subheader("Where to start")
    left, right = st.columns([2, 3])
    with left:
        st.page_link(
            pages[LESSONS[0].slug],
            label=f"Lessons: {len(LESSONS)} steps",  # short: a link's label never wraps
            icon=":material/school:",
        )
        st.caption("From one dot product to trained heads.")
        for lesson in LESSONS:
            st.page_link(pages[lesson.slug], label=f"{lesson.number}. {lesson.title}")
    with right:
        st.markdown("**Or go straight to a page**")
        for mode in modes:
            st.page_link(pages[mode.name], label=mode.label, icon=mode.icon)
            st.caption(mode.intro)


def _picture() -> None:
    look = first_look()
    st.markdown(
        f"**One query, its keys, the weights.** In *{' '.join(look.key_labels)}*, the token "
        f"*{look.query_label}* asks who sat and where; *cat* and *mat* answer best."
    )
    left, right = chart_columns([2, 3])
    with left:
        line_view(
            look.weights[None, :], [look.query_label], list(look.key_labels),
            row_positions=[look.query_position],
        )  # fmt: skip
    with right:
        chart(
            focus_row(
                look.weights,
                col_labels=look.key_labels,
                title=f"Weights of the query “{look.query_label}”",
            ),
            "first-look",
        )
    scores = ", ".join(
        f"{label} {s:.2f}" for label, s in zip(look.key_labels, look.scores, strict=True)
    )
    st.caption(
        f"Scores q · k: {scores}. Softmax: weight = e^score / Σ e^score, so the weights add "
        f"up to {np.sum(look.weights):.0f}."
    )
