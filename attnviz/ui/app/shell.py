"""The site around every page: page set-up, the navigation (start, lessons, pages to explore), old
links, the title, the presenter switch, the error boundary and the typed inputs in the URL.
Wiring only.

Nothing imported here loads TensorFlow: each page draws its controls first and then imports what
computes inside `with loading.back_end():`, so on a cold start the page is usable at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

import streamlit as st

from attnviz.lessons import LESSONS, Lesson
from attnviz.ui.app.turns import PAGE_TURNS
from attnviz.ui.app.warmup import note_while_loading
from attnviz.ui.classroom.student import back_link as back_to_class
from attnviz.ui.exercises import progress
from attnviz.ui.frame import navigation
from attnviz.ui.frame.explained import GLOSSARY_PAGE
from attnviz.ui.frame.loading import new_run, page_run
from attnviz.ui.frame.messages import error
from attnviz.ui.frame.mode import Mode
from attnviz.ui.frame.presenter import PRESENT, presenter_switch, presenting
from attnviz.ui.frame.state import (
    Slot,
    restore_texts_from_url,
    slot,
    slot_family,
    store_texts_in_url,
    upgrade_old_links,
)
from attnviz.ui.pages import MODES, MODES_BY_NAME, find_mode
from attnviz.ui.pages import lesson as lesson_page
from attnviz.ui.pages.class_room import INTRO as CLASS_INTRO
from attnviz.ui.pages.class_room import PAGE as CLASS_PAGE
from attnviz.ui.pages.class_room import draw_class_room
from attnviz.ui.pages.glossary import INTRO as GLOSSARY_INTRO
from attnviz.ui.pages.glossary import draw_glossary
from attnviz.ui.pages.start import draw_start

START = "start"  # the start page's name; it is the site's default page, at `/`
OLD_MODE_FIELD = "mode"  # where links made before the pages had their own paths named the mode
SITE_FIELDS = (PRESENT.key,)  # URL fields of the site itself, on every page
PAGES_MENU = slot_family("pages_menu", None)  # pages_menu_<page>: that page's Pages menu
URL_RESTORED = slot("_url_restored", False, kept=True)  # the typed inputs were read from the URL
URL_TEXTS = tuple(dict.fromkeys(text for mode in MODES for text in mode.url_texts))
INTRO = "See attention, step by step: build it by hand, then look inside trained models."


def _page_frame(
    draw: Callable[[], None],
    intro: str,
    pages: dict[str, st.Page],
    name: str,
    mode: Mode | None = None,
    texts: Callable[[], tuple[Slot[str], ...]] | None = None,
) -> None:
    """Everything a page shares: the title and its introduction, every page a tap away (a phone
    folds the navigation into the sidebar), the presenter switch, the error boundary, the typed
    inputs in the URL; `draw` draws the page itself, `name` is its URL path; `texts` gives the
    typed inputs its URL carries after drawing (default: all of `mode`'s)."""
    title, menu, switch = st.columns([4, 1, 1.5], vertical_alignment="bottom")  # the switch's
    # label fits the presenter view's larger text
    title.title("attnviz")
    with menu:
        _pages_menu(pages, name)
    with switch:
        presenter_switch()
    st.caption(intro)
    back_to_class(pages, name)  # a student in a class, exploring: one tap back to it
    with note_while_loading():  # a server warming up: what loads, until the page is drawn
        try:
            draw()
        except Exception as err:  # noqa: BLE001 - the page must stay up whatever happens
            logging.getLogger("attnviz").exception("unexpected error while drawing the page")
            error(
                f"Something went wrong ({type(err).__name__}). Your inputs are kept; change a "
                "setting or an input to try again."
            )
    store_texts_in_url(texts() if texts else mode.url_texts if mode else (), URL_TEXTS)


@st.fragment
def _pages_menu(pages: dict[str, st.Page], name: str) -> None:
    """The "Pages" menu: every page a tap away. Its links are drawn only while it is open
    (opening or closing it reruns this menu alone): a page's every run drew them, hidden, 26 of
    the ~115 elements each run sends. A new menu on each page (`name`): the one a link was taken
    from is left behind, closed."""
    with st.popover(
        "Pages", icon=":material/menu:", key=PAGES_MENU.of(name).key, on_change="rerun"
    ) as menu:
        if not menu.open:
            return
        for section, listed in _sections(pages).items():
            if section:
                st.caption(section)
            for page in listed:
                st.page_link(page)


def _run_mode(mode: Mode, pages: dict[str, st.Page]) -> None:
    lesson_page.forget_prepared()  # a lesson opened later prepares its page again
    _page_frame(mode.draw, mode.intro, pages, mode.name, mode)


def _run_lesson(lesson: Lesson, pages: dict[str, st.Page]) -> None:
    mode = MODES_BY_NAME[lesson.mode]
    intro = f"Lesson {lesson.number} of {len(LESSONS)}, on the {mode.label} page."
    _page_frame(
        partial(lesson_page.draw_lesson, lesson, mode, pages), intro, pages, lesson.slug, mode,
        partial(lesson_page.changed_texts, mode),
    )  # fmt: skip


def _run_start(pages: dict[str, st.Page]) -> None:
    lesson_page.forget_prepared()
    _page_frame(partial(draw_start, pages, MODES), INTRO, pages, START)


def _run_glossary(pages: dict[str, st.Page]) -> None:
    lesson_page.forget_prepared()
    _page_frame(draw_glossary, GLOSSARY_INTRO, pages, GLOSSARY_PAGE)


def _run_class(pages: dict[str, st.Page]) -> None:
    lesson_page.forget_prepared()
    _page_frame(partial(draw_class_room, pages), CLASS_INTRO, pages, CLASS_PAGE)


def _pages() -> dict[str, st.Page]:
    """Every page of the site by URL path: the start page (the default, at `/`), the glossary,
    the lessons and the modes."""
    pages: dict[str, st.Page] = {}
    pages[START] = st.Page(
        partial(_run_start, pages), title="Start", icon=":material/home:", url_path=START,
        default=True,
    )  # fmt: skip
    pages[GLOSSARY_PAGE] = st.Page(
        partial(_run_glossary, pages), title="Glossary", icon=":material/menu_book:",
        url_path=GLOSSARY_PAGE,
    )  # fmt: skip
    pages[CLASS_PAGE] = st.Page(
        partial(_run_class, pages), title="Class", icon=":material/groups:", url_path=CLASS_PAGE
    )
    for lesson in LESSONS:
        finished = " ✓" if progress.lesson_finished(lesson.number) else ""
        pages[lesson.slug] = st.Page(
            partial(_run_lesson, lesson, pages),
            title=f"{lesson.number}. {lesson.title}{finished}",
            url_path=lesson.slug,
        )
    for mode in MODES:
        pages[mode.name] = st.Page(
            partial(_run_mode, mode, pages), title=mode.label, icon=mode.icon, url_path=mode.name
        )
    return pages


def _sections(pages: dict[str, st.Page]) -> dict[str, list[st.Page]]:
    """The navigation's menus: the start page and the glossary, the lessons in order, the
    pages to explore."""
    return {
        "": [pages[START], pages[GLOSSARY_PAGE], pages[CLASS_PAGE]],
        "Lessons": [pages[lesson.slug] for lesson in LESSONS],
        "Explore": [pages[mode.name] for mode in MODES],
    }


def _follow_links(pages: dict[str, st.Page], current: st.Page) -> None:
    """Open the page a button asked for (prepared as it asked); the page an old `?mode=` link
    names; or, for an old link to `/` carrying the explorer's fields (from before `/` was the
    start page), the Matrices page, keeping the link's other fields."""
    asked = navigation.take_request()
    setup = navigation.take_setup()
    if asked in pages:
        mode = MODES_BY_NAME.get(asked)
        if setup and mode is not None and mode.prepare is not None:
            mode.prepare(**setup)
        navigation.switch(pages[asked], navigation.take_fields())
    old = st.query_params.get(OLD_MODE_FIELD)
    if old is not None:
        mode = find_mode(old)
        target = pages[(mode or MODES[0]).name]
        navigation.switch(target, _fields(drop=(OLD_MODE_FIELD,)))
    if current is pages[START] and _fields(drop=SITE_FIELDS):
        navigation.switch(pages[MODES[0].name], _fields(drop=()))


def _fields(drop: tuple[str, ...]) -> dict[str, list[str]]:
    return {key: st.query_params.get_all(key) for key in st.query_params if key not in drop}


def main() -> None:
    """Draw the whole page, in this run's turn among the server's page runs (`turns`)."""
    with PAGE_TURNS.turn():
        _draw()


def _draw() -> None:
    st.set_page_config(
        page_title="attnviz — see attention",
        page_icon="🔍",
        layout="wide",
        initial_sidebar_state="collapsed" if presenting() else "auto",
    )
    new_run()  # no model built, no chart-code script drawn yet (`loading`)
    upgraded = not URL_RESTORED.get() and upgrade_old_links()
    restore_texts_from_url(URL_TEXTS, URL_RESTORED)
    progress.read_url()
    pages = _pages()
    current = st.navigation(_sections(pages), position="top")
    _follow_links(pages, current)
    if upgraded:
        st.rerun()  # the widgets read the link as the run began: this page again, upgraded
    with page_run():  # the server's warm-up lets it go first (`warmup.after_page_runs`)
        current.run()
