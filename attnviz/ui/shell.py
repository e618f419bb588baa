"""The page around every mode: page set-up, the navigation, old links, the title, the error
boundary and the typed inputs in the URL. Wiring only.

Nothing imported here loads TensorFlow: each mode draws its controls first and then waits for the
back end (`loading.back_end`), so on a cold start the page is usable at once.
"""

from __future__ import annotations

import logging
from functools import partial

import streamlit as st

from attnviz.ui import navigation
from attnviz.ui.loading import run_builds_models
from attnviz.ui.messages import error
from attnviz.ui.mode import Mode
from attnviz.ui.modes import MODES, find_mode
from attnviz.ui.state import restore_texts_from_url, slot, store_texts_in_url

OLD_MODE_FIELD = "mode"  # where links made before the pages had their own paths named the mode
URL_RESTORED = slot("_url_restored", False)  # the typed inputs were read from the URL once
URL_TEXTS = tuple(dict.fromkeys(text for mode in MODES for text in mode.url_texts))


def _run_mode(mode: Mode) -> None:
    """Draw one mode's page: its title and intro, then the mode; never let it take the page
    down."""
    run_builds_models(mode.builds_models)
    st.title("attnviz")
    st.caption(mode.intro)
    try:
        mode.draw()
    except Exception as err:  # noqa: BLE001 - the page must stay up whatever happens
        logging.getLogger("attnviz").exception("unexpected error while drawing the page")
        error(
            f"Something went wrong ({type(err).__name__}). Your inputs are kept; change a "
            "setting or an input to try again."
        )
    store_texts_in_url(mode.url_texts, URL_TEXTS)


def _pages() -> dict[str, st.Page]:
    """One page per mode, the first the default (at `/`)."""
    return {
        mode.name: st.Page(
            partial(_run_mode, mode),
            title=mode.label,
            icon=mode.icon,
            url_path=mode.name,
            default=mode is MODES[0],
        )
        for mode in MODES
    }


def _follow_old_link_or_request(pages: dict[str, st.Page]) -> None:
    """Open the page a button asked for, or the one an old `?mode=` link names (keeping the
    link's other fields)."""
    asked = navigation.take_request()
    if asked in pages:
        navigation.switch(pages[asked], {})
    old = st.query_params.get(OLD_MODE_FIELD)
    if old is not None:
        mode = find_mode(old)
        target = pages[mode.name] if mode else pages[MODES[0].name]
        navigation.switch(target, _fields(drop=(OLD_MODE_FIELD,)))


def _fields(drop: tuple[str, ...]) -> dict[str, list[str]]:
    return {key: st.query_params.get_all(key) for key in st.query_params if key not in drop}


def main() -> None:
    """Draw the whole page."""
    st.set_page_config(page_title="attnviz — see attention", page_icon="🔍", layout="wide")
    run_builds_models(False)  # until a mode that builds models runs
    restore_texts_from_url(URL_TEXTS, URL_RESTORED)
    pages = _pages()
    navigation_menu = st.navigation(list(pages.values()), position="top")
    _follow_old_link_or_request(pages)
    navigation_menu.run()
