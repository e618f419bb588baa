"""The site around every page (`attnviz/ui/app/shell.py`)."""

from __future__ import annotations

import app_support as ui

from attnviz.lessons import LESSONS
from attnviz.ui.app.shell import PAGES_MENU
from attnviz.ui.pages import MODES


def test_the_pages_menu_sends_its_links_only_while_open():
    at = ui.new_session("matrices")
    ui.assert_ok(at)
    assert not ui.pages_menu(at).get("page_link")  # closed: a run of the page sends no link
    labels = ui.menu_links(at, "matrices")
    assert labels[:3] == ["Start", "Glossary", "Class"]
    lessons, modes = labels[3 : 3 + len(LESSONS)], labels[3 + len(LESSONS) :]
    assert lessons == [f"{lesson.number}. {lesson.title}" for lesson in LESSONS]
    assert modes == [mode.label for mode in MODES]
    at.session_state[PAGES_MENU.of("matrices").key] = False  # closed again
    at.run()
    assert not ui.pages_menu(at).get("page_link")
