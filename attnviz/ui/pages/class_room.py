"""The page /class: a student joins the teacher's class by its code (the QR code's link,
`?code=K7MQ2X`, fills it in) and follows it (`ui.classroom.student`). Drawn by the shell."""

from __future__ import annotations

import streamlit as st

from attnviz.ui.classroom.student import INTRO, PAGE, draw_class_page

__all__ = ["INTRO", "PAGE", "draw_class_room"]


def draw_class_room(pages: dict[str, st.Page]) -> None:
    """The whole /class page; `pages` are the site's pages by URL path."""
    draw_class_page(pages)
