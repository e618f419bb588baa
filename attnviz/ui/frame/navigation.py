"""Going to another page: from a button's callback (`go_to`, taken by the next run's shell) or
from an old link. A callback cannot switch pages itself: it runs before the script, and the page
it leaves has already drawn the widgets whose values it sets. A page opens another prepared as a
lesson prepares it (`go_to(..., setup=...)`, the other page's `Mode.prepare` arguments), so that
no page imports another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from attnviz.ui.frame.state import slot

NEXT_PAGE = slot("next_page", None, kind=str, kept=True)  # the mode a callback asked for, or None
NEXT_FIELDS = slot("next_fields", None, kind=dict, kept=True)  # ... the URL fields it opens with
NEXT_SETUP = slot("next_setup", None, kind=dict, kept=True)  # ... how it is to be prepared


def go_to(
    mode: str, fields: Mapping[str, str] | None = None, setup: Mapping[str, Any] | None = None
) -> None:
    """Open the page of `mode` (its `Mode.name`) at the start of the next run, its URL with
    `fields` from the start: a page that wrote them itself as it opens would add a step to the
    browser's history (Streamlit 1.67), which Back would then stop at. `setup`: that page's
    `Mode.prepare` arguments, as a lesson gives them; the shell prepares the page with them
    before it switches."""
    NEXT_PAGE.set(mode)
    NEXT_FIELDS.set(dict(fields or {}))
    NEXT_SETUP.set(dict(setup or {}))


def take_request() -> str | None:
    """The page asked for since the last run, once (None when nothing was asked)."""
    mode = NEXT_PAGE.get()
    NEXT_PAGE.clear()
    return mode


def take_setup() -> dict[str, Any]:
    """How the page asked for is to be prepared (`go_to`'s `setup`), once ({}: as it is)."""
    setup = NEXT_SETUP.get() or {}
    NEXT_SETUP.clear()
    return setup


def take_fields() -> dict[str, list[str]]:
    """The URL fields the page asked for opens with (`go_to`), once."""
    fields = NEXT_FIELDS.get() or {}
    NEXT_FIELDS.clear()
    return {field: [value] for field, value in fields.items()}


def switch(page: st.Page, fields: Mapping[str, list[str]]) -> None:
    """Switch to `page` with the URL `fields`, but those a widget has bound: a bound field
    follows its widget, whose value the session keeps (Streamlit refuses to set it directly)."""
    st.switch_page(page, query_params={k: v for k, v in fields.items() if not _bound(k)})


def write_fields(fields: Mapping[str, str]) -> None:
    """Put `fields` in the URL, but those a widget has bound (its widget writes them)."""
    for field, value in fields.items():
        if not _bound(field):
            st.query_params[field] = value


def is_history_navigation() -> bool:
    """Whether this run opens a page from the browser's history (Back or Forward): the
    URL then says what the page showed, and bound controls take its values over the session's."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.is_history_navigation)


def _bound(field: str) -> bool:
    """Whether a widget of this session is bound to the URL field `field`. (Streamlit 1.67 keeps
    the bindings in the session's query-params state; there is no public call for it.)"""
    ctx = get_script_run_ctx()
    if ctx is None:
        return False
    with ctx.session_state.query_params() as params:
        return params.is_bound(field)
