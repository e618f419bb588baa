"""A lesson's words, explained: its text and the thing to try, said for the view (where the
controls are), the answer to its questions one click away, and the words of the glossary it
uses with their definitions and a link to the glossary page. Also the glossary's line for one
term, which the glossary page lists. Our own texts: markdown, never HTML.
"""

from __future__ import annotations

import streamlit as st

from attnviz.lessons.glossary import Term, terms_in
from attnviz.lessons.path import Lesson, in_view
from attnviz.ui.frame.presenter import where_settings

GLOSSARY_PAGE = "glossary"  # the glossary page's URL path (the shell registers it)
ANSWER_LABEL = "The answer (try first)"  # the expander of a lesson's `why`
WORDS_LABEL = "Words in this lesson"  # the expander of the glossary's terms it uses


def term_line(term: Term) -> str:
    """One term and its definition, as markdown."""
    return f"**{term.name}**: {term.definition}"


def lesson_text(lesson: Lesson, pages: dict[str, st.Page]) -> None:
    """The lesson's text, the thing to try, its answer (closed) and its words (closed); `pages`
    are the app's pages by URL path (the glossary's among them)."""
    where = where_settings()
    st.markdown(in_view(lesson.text, where))
    st.info(f"**Try this.** {in_view(lesson.try_this, where)}", icon=":material/touch_app:")
    with st.expander(ANSWER_LABEL, icon=":material/lightbulb:"):
        st.markdown(in_view(lesson.why, where))
    _words(lesson, pages.get(GLOSSARY_PAGE))


def _words(lesson: Lesson, glossary: st.Page | None) -> None:
    """The glossary's terms the lesson's text, thing to try and answer use, in that order."""
    terms = terms_in("\n".join((lesson.text, lesson.try_this, lesson.why)))
    with st.expander(WORDS_LABEL, icon=":material/menu_book:"):
        st.markdown("\n\n".join(term_line(term) for term in terms))
        if glossary is not None:
            st.page_link(glossary, label="Every word in the glossary", icon=":material/menu_book:")
