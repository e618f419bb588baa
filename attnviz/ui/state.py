"""Session state and the shareable URL.

Controls are Streamlit widgets bound to the URL (`bind="query-params"`) and kept across reruns
(`persist_state="session"`). Typed inputs (matrix text, sentences) go into the URL by hand, and
only while they are small, so a copied link reopens the same view without growing without bound.
"""

from __future__ import annotations

import streamlit as st

URL_TEXT_KEYS = ("q_text", "k_text", "v_text", "sentences", "src_text", "target")
URL_TEXT_LIMIT = 1500  # most characters of typed input the URL carries


MARKDOWN_SPECIALS = "\\[]$"  # links and images need [ ], and $ starts LaTeX


def plain(text: str) -> str:
    """Text that may hold user input, made safe for Streamlit's markdown (messages, captions):
    a backslash before [ ] and $ so it can never become a link, an image or LaTeX. (Streamlit
    never renders HTML in markdown, so < and > show as typed.)"""
    return "".join("\\" + c if c in MARKDOWN_SPECIALS else c for c in str(text))


def bound(key: str) -> dict:
    """Widget keyword arguments that tie a control to the URL and keep it across reruns."""
    return {"key": key, "bind": "query-params", "persist_state": "session"}


def initial(key: str, value, arg: str = "value") -> dict:
    """`value=` (or `arg=`) for a widget's first draw, or nothing once its key holds a value (a
    preset set it): Streamlit warns when a widget gets both a default and a Session State value."""
    return {} if key in st.session_state else {arg: value}


def kept(key: str) -> dict:
    """Widget keyword arguments that keep an input across reruns and mode switches."""
    return {"key": key, "persist_state": "session"}


def restore_texts_from_url() -> None:
    """On a session's first run, fill the typed inputs from the URL (a shared link)."""
    if st.session_state.get("_url_restored"):
        return
    st.session_state["_url_restored"] = True
    for key in URL_TEXT_KEYS:
        if key in st.query_params:
            st.session_state[key] = st.query_params[key][: URL_TEXT_LIMIT * 4]


def store_texts_in_url(active: tuple[str, ...]) -> None:
    """Put the active typed inputs in the URL while they are small; drop the others."""
    total = sum(len(st.session_state.get(key) or "") for key in active)
    for key in URL_TEXT_KEYS:
        text = st.session_state.get(key) or ""
        wanted = key in active and total <= URL_TEXT_LIMIT and text
        if wanted and st.query_params.get(key) != text:
            st.query_params[key] = text
        elif not wanted and key in st.query_params:
            del st.query_params[key]
