"""End to end, in headless Chromium: the browser's Back and Forward over the lessons restore
every page as it was (ui/pages/lesson.py: a lesson is its prepared state plus what its URL says).

Fixtures, the `App` helper and the labels live in `browser_support.py`.
"""

from __future__ import annotations

import pytest
from browser_support import OPEN_SECONDS, App  # fixtures: conftest's pytest_plugins
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OPEN_HEAD = "Open this head step by step in the Matrices explorer"
# the options a keyed segmented control shows as chosen
CHOSEN = """(page, key) => Array.from(
  document.querySelectorAll(`.st-key-${key} button`),
  b => ((b.getAttribute('kind') || '').includes('Active')
        || b.getAttribute('aria-checked') === 'true' || b.getAttribute('aria-pressed') === 'true')
       ? b.innerText.trim() : null
).filter(t => t)"""


def _wait_for_lesson(app: App, number: int, title: str) -> None:
    heading = app.page.get_by_role("heading", name=f"{number}. {title}")
    expect(heading).to_be_visible(timeout=OPEN_SECONDS * 1000)
    app.wait_until(
        "(page, slug) => page.idle() && window.location.pathname.endsWith('/' + slug)",
        f"lesson-{number}", f"lesson {number}'s page", OPEN_SECONDS,
    )  # fmt: skip


def test_back_after_opening_a_head_step_by_step_returns_to_lesson_10_as_it_was(app: App):
    # Lesson 10 prepares Learn's shipped Transformer in its model view; "Open this head step by
    # step" opens the enlarged head in the explorer. Back: lesson 10 again, the Transformer and
    # its model view with the same head enlarged (not the GRU, Learn's default, as the URL
    # does not name the model). Forward: the explorer on that head again.
    app.open(f"{app.url}/lesson-9", charts=0)
    app.page.get_by_role(
        "link", name="Next: What trained heads do"
    ).first.click()  # as a class does
    _wait_for_lesson(app, 10, "What trained heads do")
    enlarged = app.wait_for_title_starting("cross · ", OPEN_SECONDS)
    assert app.read(CHOSEN, "learn_arch") == ["Transformer"]
    app.page.get_by_role("button", name=OPEN_HEAD).click()
    app.wait_until(
        "(page) => page.idle() && window.location.pathname.endsWith('/matrices')"
        " && page.weights('Attention weights')", None, "the explorer on the head", OPEN_SECONDS,
    )  # fmt: skip
    opened = app.weights()
    expect(app.page.get_by_role("tab", name="Step by step", selected=True)).to_be_visible()
    app.page.go_back()
    _wait_for_lesson(app, 10, "What trained heads do")
    assert app.wait_for_title_starting("cross · ", OPEN_SECONDS) == enlarged
    assert app.read(CHOSEN, "learn_arch") == ["Transformer"]
    expect(app.page.get_by_role("button", name=OPEN_HEAD)).to_be_visible()
    expect(app.page.locator(".st-key-mv_map_cross")).to_be_visible()  # the model view's head map
    app.page.go_forward()
    app.wait_until(
        "(page, opened) => page.idle() && window.location.pathname.endsWith('/matrices')"
        " && page.close(page.weights('Attention weights'), opened, 1e-6)",
        opened, "the explorer on the same head", OPEN_SECONDS,
    )  # fmt: skip
    # on the tab it was opened on (the URL names it), not the explorer's first
    expect(app.page.get_by_role("tab", name="Step by step", selected=True)).to_be_visible()
    assert app.exceptions() == 0 and app.alerts() == [] and app.errors == []


def test_one_back_leaves_a_page_opened_by_a_link_after_a_change(app: App):
    # A control changed on the Matrices page (the score), then another page opened by a link:
    # that page writes its own fields as it opens, which Streamlit pushed as a second entry, so
    # Back stayed on the new page once (ui/app/history.py). One Back returns to Matrices with
    # the change; Forward returns to the page opened.
    app.open(f"{app.url}/matrices", charts=4)
    app.page.get_by_text("general", exact=True).first.click()
    app.wait_until(
        "(page) => page.idle() && window.location.search.includes('score=general')", None,
        "the general score in the URL", OPEN_SECONDS,
    )  # fmt: skip
    before = app.read("() => window.history.length")
    app.page.get_by_role("button", name="Pages").click()
    app.page.get_by_role("link", name="Multi-head").click()
    app.wait_until(
        "(page) => page.idle() && window.location.pathname.endsWith('/multihead')"
        " && page.titles().length > 0", None, "the Multi-head page", OPEN_SECONDS,
    )  # fmt: skip
    assert app.read("() => window.history.length") == before + 1  # one entry for the switch
    app.page.go_back()
    app.wait_until(
        "(page) => page.idle() && window.location.pathname.endsWith('/matrices')"
        " && window.location.search.includes('score=general')", None,
        "the Matrices page, general score, after one Back", OPEN_SECONDS,
    )  # fmt: skip
    app.page.go_forward()
    app.wait_until(
        "(page) => page.idle() && window.location.pathname.endsWith('/multihead')", None,
        "the Multi-head page again", OPEN_SECONDS,
    )  # fmt: skip
    assert app.exceptions() == 0 and app.errors == []
