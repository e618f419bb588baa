"""The glossary page: every word the lessons and the pages use that a newcomer may not know, with
its plain-language definition (`attnviz.lessons.glossary`), from A to Z. Drawn by the shell.
"""

from __future__ import annotations

import streamlit as st

from attnviz.lessons.glossary import TERMS, Term
from attnviz.ui.frame.explained import term_line

INTRO = "Every word the lessons and pages use, in plain language, from A to Z."


def _sort_key(term: Term) -> str:
    """A term's place from A to Z, by its Latin letters ("θ (theta)" under T)."""
    latin = "".join(c for c in term.name.casefold() if c.isascii() and (c.isalnum() or c == " "))
    return " ".join(latin.split())


def draw_glossary() -> None:
    """The whole glossary page."""
    st.markdown(
        "Each lesson lists its own words under **Words in this lesson**; here are all of them."
    )
    st.markdown("\n\n".join(term_line(term) for term in sorted(TERMS, key=_sort_key)))
