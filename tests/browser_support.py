"""Fixtures and helpers for the end-to-end tests in `test_browser.py`.

The app runs in a real Streamlit server (one per test session) and is driven by Playwright
through Debian's Chromium (`/usr/bin/chromium`); nothing is ever downloaded. Without Chromium or
the `playwright` package the browser tests are skipped, unless `ATTNVIZ_REQUIRE_BROWSER=1`
(set by CI), which turns the skip into a failure.

Streamlit reruns are asynchronous, so every helper waits for a condition (`poll`), never a
fixed time.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from deploy import chromium, servers

REQUIRE_ENV = "ATTNVIZ_REQUIRE_BROWSER"
WAIT_SECONDS = 30  # most time any rerun may take
VIEWPORT = {"width": 1400, "height": 1000}

# JavaScript run in the page. Charts are found by their title text, as the user sees it.
_FIND_CHART = """(title) => {
  for (const div of document.querySelectorAll('.js-plotly-plot')) {
    const t = div.querySelector('.gtitle');
    if (t && t.textContent.trim() === title && div._fullData) return div;
  }
  return null;
}"""
_CHART_Z = (
    "(title) => { const div = (" + _FIND_CHART + ")(title); if (!div) return null;"
    " return div._fullData[0].z.map(row => Array.from(row, x => Number.isFinite(x) ? x : null)); }"
)
_CHART_TICKS = (
    "(title) => { const div = (" + _FIND_CHART + ")(title); if (!div) return null;"
    " return Array.from(div.querySelectorAll('.xtick text, .ytick text, .x2tick text,"
    " .y2tick text'), e => e.textContent); }"
)
_CHART_TITLES = (
    "() => Array.from(document.querySelectorAll('.js-plotly-plot .gtitle'),"
    " e => e.textContent.trim())"
)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's Chromium (`deploy.chromium`); skips (or, under ATTNVIZ_REQUIRE_BROWSER=1,
    fails) without it or without Playwright."""
    reason = chromium.browser_missing()
    if reason is None:
        return str(chromium.chromium_path())
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: browser tests must run)", pytrace=False)
    pytest.skip(f"{reason} to run the browser tests")


@pytest.fixture(scope="session")
def app_url(chromium_path: str) -> Iterator[str]:
    """Base URL of a Streamlit server running `app.py`, stopped at the end of the session.

    Started as the benchmark and `deploy.run` start it (`deploy.servers`: the same command,
    health check and clean-up at exit); a server that does not come up fails the tests with its
    log's end."""
    server = servers.launch("attnviz")
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    """One headless Chromium for the session; each test opens its own context."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_path, args=chromium.CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


def poll(read: Callable[[], Any], what: str, timeout: float = WAIT_SECONDS) -> Any:
    """Call `read` until it returns something truthy; fail with `what` and the last value."""
    deadline = time.monotonic() + timeout
    value = None
    while True:
        value = read()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {value!r}")
        time.sleep(0.1)


def close(actual: list[list[float]] | None, expected: list[list[float]], tol: float = 1e-5) -> bool:
    """True if the matrices have the same shape and agree within `tol`."""
    if actual is None or len(actual) != len(expected):
        return False
    for row, want_row in zip(actual, expected, strict=True):
        if len(row) != len(want_row):
            return False
        if not all(math.isclose(a, b, abs_tol=tol) for a, b in zip(row, want_row, strict=True)):
            return False
    return True


class App:
    """The attnviz page in one browser context, with waits for Streamlit's reruns."""

    def __init__(self, page: Any, url: str) -> None:
        self.page = page
        self.url = url
        self.dialogs: list[str] = []  # messages of any alert/confirm/prompt the page opened
        self.errors: list[str] = []  # uncaught JavaScript errors
        page.on("dialog", self._on_dialog)
        page.on("pageerror", lambda err: self.errors.append(str(err)))

    def _on_dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    # --- loading and waiting ---

    def open(self, address: str | None = None, charts: int = 4) -> App:
        """Load the page (default: the app's root) and wait for `charts` painted heatmaps."""
        self.page.goto(address or f"{self.url}/")
        self.page.get_by_role("heading", name="attnviz").wait_for(timeout=WAIT_SECONDS * 1000)
        if charts:
            self.wait_for_charts(charts)
        return self

    def wait_for_charts(self, count: int) -> None:
        """Wait until at least `count` plotly charts are drawn and Streamlit is idle."""
        poll(
            lambda: len(self.chart_titles()) >= count and self.idle(),
            f"{count} charts",
        )

    def idle(self) -> bool:
        """True when no script run is going on (Streamlit's status widget is gone)."""
        return self.page.locator('[data-testid="stStatusWidget"]').count() == 0

    def location(self) -> str:
        """The address bar now (`page.url` can lag behind Streamlit's history updates)."""
        return self.page.evaluate("window.location.href")

    def query(self) -> dict[str, list[str]]:
        """The address bar's query parameters, decoded."""
        return parse_qs(urlparse(self.location()).query)

    def chart_titles(self) -> list[str]:
        """The titles of the charts on the page, in page order."""
        return self.page.evaluate(_CHART_TITLES)

    def z(self, title: str) -> list[list[float | None]] | None:
        """The cell values of the chart called `title` (None for blocked/NaN cells)."""
        return self.page.evaluate(_CHART_Z, title)

    def weights(self, title: str = "Attention weights") -> list[list[float]] | None:
        """Attention weights read from a chart. Blocked cells whose weight is exactly 0 are
        drawn as grey NaN cells; they read as 0 here."""
        z = self.z(title)
        return None if z is None else [[0.0 if x is None else x for x in row] for row in z]

    def wait_for_weights(
        self, expected: list[list[float]], title: str = "Attention weights"
    ) -> list[list[float]]:
        """Wait until the chart `title` shows `expected` (within 1e-5)."""
        try:
            poll(lambda: close(self.weights(title), expected), f"{title!r} to show {expected}")
        except AssertionError as err:
            raise AssertionError(f"{err}; it shows {self.weights(title)}") from None
        return self.weights(title)

    def ticks(self, title: str) -> list[str]:
        """The tick labels of the chart `title`, as the text the user sees."""
        return self.page.evaluate(_CHART_TICKS, title) or []

    # --- widgets ---

    def type_text(self, label: str, text: str) -> None:
        """Replace a text area's content and commit it (Ctrl+Enter), as a user would."""
        area = self.page.get_by_label(label, exact=True)
        area.fill(text)
        area.press("Control+Enter")

    def text(self, label: str) -> str:
        """The current content of a text area."""
        return self.page.get_by_label(label, exact=True).input_value()

    def switch(self, label: str) -> Any:
        """A toggle by its label."""
        return self.page.get_by_role("switch", name=label, exact=True)

    def set_switch(self, label: str, on: bool) -> None:
        """Turn a toggle on or off (clicking its label, as the input itself is covered)."""
        switch = self.switch(label)
        if switch.is_checked() != on:
            self.page.locator("label").filter(has=switch).click()
        poll(lambda: switch.is_checked() == on, f"{label!r} switched {'on' if on else 'off'}")

    def choose(self, group: str, option: str) -> None:
        """Pick an option of a radio group or segmented control by its label."""
        group_box = self.page.get_by_role("radiogroup", name=group)
        option_radio = self.page.get_by_role("radio", name=option, exact=True)
        radio = group_box.locator(option_radio)
        if radio.evaluate("e => e.tagName") == "INPUT":  # st.radio: the label takes the click
            radio = group_box.locator("label").filter(has=option_radio)
        radio.click()

    def select(self, label: str, option: str) -> None:
        """Pick an option of a select box by the text shown for it."""
        self.page.get_by_role("combobox", name=label, exact=True).click()
        self.page.get_by_role("option", name=option, exact=True).click()

    def set_number(self, label: str, value: int) -> None:
        """Type a number into a number input and commit it."""
        field = self.page.get_by_label(label, exact=True)
        field.fill(str(value))
        field.press("Enter")

    def open_tab(self, name: str) -> None:
        """Open one of the result tabs."""
        self.page.get_by_role("tab", name=name, exact=True).click()

    # --- page state ---

    def exceptions(self) -> int:
        """How many Streamlit exception boxes (tracebacks) the page shows."""
        return self.page.locator('[data-testid="stException"]').count()

    def alerts(self) -> list[str]:
        """The texts of the error messages (st.error) on the page."""
        return self.page.locator('[data-testid="stAlertContentError"]').all_inner_texts()


def screenshot_dir() -> Path:
    """Where failure screenshots go (one directory per test session)."""
    global _SHOTS
    if _SHOTS is None:
        _SHOTS = Path(tempfile.mkdtemp(prefix="attnviz-browser-"))
    return _SHOTS


_SHOTS: Path | None = None


@pytest.fixture
def open_app(
    browser: Any, app_url: str, request: pytest.FixtureRequest
) -> Iterator[Callable[[], App]]:
    """Opens the app in a fresh browser context (a new Streamlit session) each call; on
    failure every page is screenshotted; all contexts are closed at the end."""
    contexts: list[Any] = []

    def new_app() -> App:
        context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        context.set_default_timeout(WAIT_SECONDS * 1000)
        contexts.append(context)
        return App(context.new_page(), app_url)

    try:
        yield new_app
    finally:
        report = getattr(request.node, "rep_call", None)
        failed = report is not None and report.failed
        for n, context in enumerate(contexts):
            if failed:
                for page in context.pages:
                    _save_screenshot(page, request, n)
            context.close()


@pytest.fixture
def app(open_app: Callable[[], App]) -> App:
    """The app in a fresh browser context (not loaded yet: call `app.open()`)."""
    return open_app()


def _save_screenshot(page: Any, request: pytest.FixtureRequest, n: int) -> None:
    path = screenshot_dir() / f"{request.node.name}-{n}.png"
    try:
        page.screenshot(path=str(path))
    except Exception as err:  # noqa: BLE001 - a failed screenshot must not hide the failure
        message = f"could not save a screenshot of {request.node.nodeid}: {err}"
    else:
        message = f"screenshot of failed {request.node.nodeid}: {path} (page URL {page.url})"
    request.node.user_properties.append(("screenshot", str(path)))
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(message)
    else:
        print(message)
