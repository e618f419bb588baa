"""Fixtures, helpers and labels for the end-to-end tests (`tests/ui/test_browser_*.py`).

The app runs in a real Streamlit server (one per test session) and is driven by Playwright
through Debian's Chromium (`/usr/bin/chromium`); nothing is ever downloaded. Without Chromium or
the `playwright` package the browser tests are skipped, unless `ATTNVIZ_REQUIRE_BROWSER=1`
(set by CI), which turns the skip into a failure.

Streamlit reruns are asynchronous, so every helper waits for a condition, never a fixed time:
Playwright's own waits (`page.wait_for_function` runs a JavaScript condition in the page every
`POLL_MS`; `expect` and locators wait for elements), never a sleep.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from attnviz.ui.frame.server_config import WARM_UP_ENV
from deploy import chromium, servers

REQUIRE_ENV = "ATTNVIZ_REQUIRE_BROWSER"
WAIT_SECONDS = 30  # most time any rerun may take
OPEN_SECONDS = 60  # most time a new tab may take to paint its charts: 6-9 s on a quiet machine
# (measured 2026-11-27), and a page opened while the other test process trains, on two cores,
# twice took just over 30 s in CI (a failure bound, not a timed assertion)
POLL_MS = 50  # how often a wait checks its condition in the page. Not Playwright's default,
# every animation frame: that keeps an idle page drawing 60 frames a second, ~13 % of a core
# here while a test waits (measured 2026-11-27), taken from the server and the other tests
SELECTION_S = 5  # most time a chart may take to select a clicked point (its own event, ~30 ms)
HOVER_S = 10  # most time a point under the mouse may take to show its hover label (~50 ms)
# Records which points a plotly chart selects next (its `plotly_selected` event), per attempt.
_LISTEN_FOR_SELECTION = """(chart, attempt) => {
  window.__attnvizPicked = window.__attnvizPicked || {};
  window.__attnvizPicked[attempt] = null;
  chart.once("plotly_selected", (event) => {
    const points = (event && event.points) || [];
    window.__attnvizPicked[attempt] = points.map((p) => p.pointIndex);
  });
}"""
VIEWPORT = {"width": 1400, "height": 1000}

# the labels of the controls the tests use, and the NumPy lab preset's weights
Q_LABEL = "Q (queries): one row per line"
K_LABEL = "K (keys): one row per line"
V_LABEL = "V (values): one row per line"
CAUSAL = "Causal (look-ahead) mask"
SENTENCES = "Sentences, one per line (shorter ones are padded with <pad>)"
WEIGHTS = "Attention weights"
NUMPY_LAB = [[0.150325, 0.849675], [0.150325, 0.849675]]  # the default matrices, no mask
NUMPY_LAB_CAUSAL = [[1.0, 0.0], [0.150325, 0.849675]]


def reference_weights(q: list, k: list, causal: bool = False) -> list[list[float]]:
    """softmax(Q Kᵀ / √Dk) in float64, with an optional causal mask."""
    q, k = np.asarray(q, float), np.asarray(k, float)
    scores = q @ k.T / np.sqrt(k.shape[1])  # (T, D) x (D, S) -> (T, S)
    if causal:
        scores = np.where(np.tril(np.ones_like(scores, bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).tolist()


# JavaScript run in the page: `PAGE` reads what the user sees. Charts are found by their title
# text; a chart's `z` gives null for blocked (NaN) cells, `weights` reads them as 0.
PAGE = """{
  chart(title) {
    for (const div of document.querySelectorAll('.js-plotly-plot')) {
      const t = div.querySelector('.gtitle');
      if (t && t.textContent.trim() === title && div._fullData) return div;
    }
    return null;
  },
  z(title) {
    const div = this.chart(title);
    if (!div || !div._fullData.length || !div._fullData[0].z) return null;
    return div._fullData[0].z.map(row => Array.from(row, x => Number.isFinite(x) ? x : null));
  },
  weights(title) {
    const z = this.z(title);
    return z && z.map(row => row.map(x => x === null ? 0 : x));
  },
  titles() {
    return Array.from(document.querySelectorAll('.js-plotly-plot .gtitle'),
                      e => e.textContent.trim());
  },
  ticks(title) {
    const div = this.chart(title);
    return div ? Array.from(div.querySelectorAll(
      '.xtick text, .ytick text, .x2tick text, .y2tick text'), e => e.textContent) : [];
  },
  widened() {
    // the titles of the charts whose margins plotly widened after drawing them (which makes
    // it draw the chart a second time): their figure left too little room for a label or bar
    return Array.from(document.querySelectorAll('.js-plotly-plot'), div => {
      const given = div.layout.margin || {}, used = div._fullLayout._size;
      const wider = ['l', 'r', 't', 'b'].some(side => Math.round(used[side]) > given[side]);
      return wider ? ((div.querySelector('.gtitle') || {}).textContent || '(untitled)') : null;
    }).filter(title => title !== null);
  },
  idle() { return !document.querySelector('[data-testid="stStatusWidget"]'); },
  close(actual, expected, tol) {
    return !!actual && actual.length === expected.length && actual.every((row, i) =>
      row.length === expected[i].length &&
      row.every((x, j) => Math.abs(x - expected[i][j]) <= tol));
  },
  query(key) { return new URLSearchParams(window.location.search).getAll(key); },
}"""


def in_page(condition: str) -> str:
    """A JavaScript function of one argument that calls `condition(page, arg)`, where `page` is
    `PAGE` (the readers above) and `arg` is what Playwright passes."""
    return f"(arg) => {{ const page = {PAGE}; return ({condition})(page, arg); }}"


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
    health check and clean-up at exit), with `ATTNVIZ_WARM_UP=0`; a server that does not come up
    fails the tests with its log's end."""
    # without the warm-up (tested in tests/ui/test_server.py and tests/project/test_project.py),
    # which would build every trained model while the browser and the other tests need the cores
    server = servers.wait_healthy(servers.start("attnviz", env={WARM_UP_ENV: "0"}))
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    """One headless Chromium for the session; the tests take their tabs from `tabs`."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_path, args=chromium.CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


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
        page.on("pageerror", self._on_error)

    def _on_dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _on_error(self, error: Any) -> None:
        self.errors.append(str(error))

    def detach(self) -> None:
        """Stop listening to the page (before `Tabs` hands it to another test)."""
        self.page.remove_listener("dialog", self._on_dialog)
        self.page.remove_listener("pageerror", self._on_error)

    # --- loading and waiting ---

    def open(
        self, address: str | None = None, charts: int = 4, timeout: float = OPEN_SECONDS
    ) -> App:
        """Load the page (default: the Matrices page) and wait, at most `timeout` seconds each,
        for its heading and for `charts` painted charts."""
        return self.start_loading(address).wait_opened(charts, timeout)

    def start_loading(self, address: str | None = None) -> App:
        """Navigate to the page (default: the Matrices page) and return once its document has
        loaded, before Streamlit draws it: several pages can then load at once."""
        self.page.goto(address or f"{self.url}/matrices")
        return self

    def wait_opened(self, charts: int = 4, timeout: float = OPEN_SECONDS) -> App:
        """Wait, at most `timeout` seconds each, for the loading page's heading and for `charts`
        painted charts."""
        self.page.get_by_role("heading", name="attnviz").wait_for(timeout=timeout * 1000)
        if charts:
            self.wait_for_charts(charts, timeout)
        return self

    def wait_until(
        self, condition: str, arg: Any = None, what: str = "", timeout: float = WAIT_SECONDS
    ) -> Any:
        """Wait until the JavaScript `condition(page, arg)` (see `in_page`) is truthy and return
        its value. Playwright evaluates it in the page every `POLL_MS`
        (`page.wait_for_function`); on a timeout the failure says what was awaited and what the
        condition gave last."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        script = in_page(condition)
        try:
            handle = self.page.wait_for_function(
                script, arg=arg, polling=POLL_MS, timeout=timeout * 1000
            )
        except PlaywrightTimeout:
            last = self.page.evaluate(script, arg)
            raise AssertionError(
                f"timed out after {timeout} s waiting for {what}; last: {last!r}"
            ) from None
        return handle.json_value()

    def read(self, reader: str, arg: Any = None) -> Any:
        """What the JavaScript `reader(page, arg)` gives now (see `in_page`)."""
        return self.page.evaluate(in_page(reader), arg)

    def wait_for_charts(self, count: int, timeout: float = WAIT_SECONDS) -> None:
        """Wait until at least `count` plotly charts are drawn and Streamlit is idle."""
        self.wait_until(
            "(page, count) => page.titles().length >= count && page.idle()", count,
            f"{count} charts", timeout,
        )  # fmt: skip

    def wait_for_chart(self, title: str) -> list[str]:
        """Wait until a chart called `title` is drawn and Streamlit is idle; all the titles."""
        return self.wait_until(
            "(page, title) => page.titles().includes(title) && page.idle() && page.titles()",
            title, f"the chart {title!r}",
        )  # fmt: skip

    def wait_for_titles(self, titles: list[str]) -> None:
        """Wait until the page's charts are exactly `titles` and Streamlit is idle (a view's old
        charts stay on the page until the run that replaces them has drawn its own)."""
        self.wait_until(
            "(page, titles) => page.idle()"
            " && JSON.stringify(page.titles()) === JSON.stringify(titles)",
            titles, f"the charts {titles!r}",
        )  # fmt: skip

    def wait_for_title_starting(self, prefix: str, timeout: float = WAIT_SECONDS) -> str:
        """Wait until a chart whose title starts with `prefix` is drawn and Streamlit is idle;
        that title."""
        return self.wait_until(
            "(page, prefix) => page.idle() && page.titles().find(t => t.startsWith(prefix))",
            prefix, f"a chart titled {prefix!r}...", timeout,
        )  # fmt: skip

    def wait_for_no_charts(self) -> None:
        """Wait until no chart is on the page."""
        self.wait_until("(page) => page.titles().length === 0", None, "the charts to go")

    def wait_for_ticks(self, title: str, token: str) -> list[str]:
        """Wait until the chart `title` has a tick label `token` and Streamlit is idle; the
        chart's tick labels."""
        return self.wait_until(
            "(page, [title, token]) => page.idle() && page.ticks(title).includes(token)"
            " && page.ticks(title)",
            [title, token], f"the token {token!r} in {title!r}",
        )  # fmt: skip

    def wait_for_query(self, wanted: dict[str, list[str] | None]) -> None:
        """Wait until the address bar's query has these values (None: the key is absent)."""
        self.wait_until(
            "(page, wanted) => Object.entries(wanted).every(([key, values]) =>"
            " JSON.stringify(page.query(key)) === JSON.stringify(values ?? []))",
            wanted, f"{wanted} in the URL",
        )  # fmt: skip

    def wait_for_alerts(self, present: bool = True) -> str:
        """Wait until the page shows an error message (or, `present=False`, none); their text."""
        selector = '[data-testid="stAlertContentError"]'
        self.wait_until(
            "(page, [selector, present]) =>"
            " (document.querySelectorAll(selector).length > 0) === present",
            [selector, present], "an error message" if present else "the error messages to go",
        )  # fmt: skip
        return " ".join(self.alerts())

    def idle(self) -> bool:
        """True when no script run is going on (Streamlit's status widget is gone)."""
        return self.read("(page) => page.idle()")

    def location(self) -> str:
        """The address bar now (`page.url` can lag behind Streamlit's history updates)."""
        return self.page.evaluate("window.location.href")

    def query(self) -> dict[str, list[str]]:
        """The address bar's query parameters, decoded."""
        return parse_qs(urlparse(self.location()).query)

    def chart_titles(self) -> list[str]:
        """The titles of the charts on the page, in page order."""
        return self.read("(page) => page.titles()")

    def widened_charts(self) -> list[str]:
        """The titles of the charts whose margins plotly had to widen, drawing them twice."""
        return self.read("(page) => page.widened()")

    def z(self, title: str) -> list[list[float | None]] | None:
        """The cell values of the chart called `title` (None for blocked/NaN cells)."""
        return self.read("(page, title) => page.z(title)", title)

    def weights(self, title: str = "Attention weights") -> list[list[float]] | None:
        """Attention weights read from a chart. Blocked cells whose weight is exactly 0 are
        drawn as grey NaN cells; they read as 0 here."""
        return self.read("(page, title) => page.weights(title)", title)

    def wait_for_weights(
        self, expected: list[list[float]], title: str = "Attention weights", tol: float = 1e-5
    ) -> list[list[float]]:
        """Wait until the chart `title` shows `expected` (within `tol`, blocked cells as 0)."""
        return self.wait_until(
            "(page, [title, expected, tol]) => {"
            " const w = page.weights(title); return page.close(w, expected, tol) && w; }",
            [title, expected, tol], f"{title!r} to show {expected}",
        )  # fmt: skip

    def wait_for_z(
        self, expected: list[list[float]], title: str, tol: float = 1e-5
    ) -> list[list[float | None]]:
        """Wait until the chart `title` holds the values `expected` (within `tol`)."""
        return self.wait_until(
            "(page, [title, expected, tol]) => {"
            " const z = page.z(title); return page.close(z, expected, tol) && z; }",
            [title, expected, tol], f"{title!r} to hold {expected}",
        )  # fmt: skip

    def ticks(self, title: str) -> list[str]:
        """The tick labels of the chart `title`, as the text the user sees."""
        return self.read("(page, title) => page.ticks(title)", title)

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
        from playwright.sync_api import expect

        switch = self.switch(label)
        if switch.is_checked() != on:
            self.page.locator("label").filter(has=switch).click()
        expect(switch).to_be_checked(checked=on, timeout=WAIT_SECONDS * 1000)

    def scroll_to(self, locator: Any, tries: int = 5) -> None:
        """Scroll `locator`'s element to the middle of the view. A rerun may redraw it meanwhile
        (Playwright then says it is no longer attached): the next try finds the new element."""
        from playwright.sync_api import Error as PlaywrightError

        for _ in range(tries):
            try:
                locator.evaluate("e => e.scrollIntoView({block: 'center'})")
                return
            except PlaywrightError as error:
                last = error
        raise AssertionError(f"could not scroll to {locator} in {tries} tries: {last}")

    def click_point(self, chart: Any, index: int, label: str) -> None:
        """Click point `index` of a plotly chart as a person does: scroll it into view, move the
        mouse onto it, wait for its hover label to name it (`label`), click, and see the chart
        select it. Plotly takes the clicked point from its latest hover, which it computes at
        most every 50 ms: a click sent with its own mouse move, while a hover of another point
        is still pending, picks that other point. If the page moved the point meanwhile (an
        element above it drawn late pushes it down), a rerun redrew the chart under the still
        mouse (plotly shows no hover until the mouse moves again) or the chart did not select
        it, it aims and clicks again, as a person would; what the app then does is the test's
        to check."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        point = chart.locator("path.point").nth(index)
        hover = chart.locator(".hoverlayer .hovertext").filter(has_text=label)
        seen = []
        for attempt in range(4):
            self.scroll_to(point)
            box = point.bounding_box()
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            self.page.mouse.move(x, y)
            try:
                hover.first.wait_for(timeout=HOVER_S * 1000)
            except PlaywrightTimeout:  # redrawn under a still mouse: plotly waits for a move
                seen.append("no hover")
                self.page.mouse.move(0, 0)
                continue
            if point.bounding_box() == box:  # still under the mouse
                chart.locator(".js-plotly-plot").evaluate(_LISTEN_FOR_SELECTION, attempt)
                self.page.mouse.down()
                self.page.mouse.up()
                try:
                    self.page.wait_for_function(
                        "([attempt, index]) => (window.__attnvizPicked[attempt] || [])"
                        ".includes(index)",
                        arg=[attempt, index],
                        polling=POLL_MS,
                        timeout=SELECTION_S * 1000,
                    )
                    return
                except PlaywrightTimeout:
                    seen.append(self.page.evaluate(f"() => window.__attnvizPicked[{attempt}]"))
            else:
                seen.append("moved")
            self.page.mouse.move(0, 0)  # off the chart: the next move hovers afresh
        raise AssertionError(f"clicking point {index} of {chart} did not select it: {seen}")

    def wait_for_text(self, label: str, text: str) -> None:
        """Wait until the text area `label` holds `text`."""
        from playwright.sync_api import expect

        area = self.page.get_by_label(label, exact=True)
        expect(area).to_have_value(text, timeout=WAIT_SECONDS * 1000)

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

    def open_page(self, label: str) -> None:
        """Open a mode's page from the navigation at the top, as a user would."""
        self.page.get_by_role("button", name="Pages").click()  # the menu beside the title
        self.page.get_by_role("link", name=label, exact=True).locator("visible=true").click()
        path = f"/{self._path_of(label)}"
        self.wait_until(
            "(page, path) => page.idle() && window.location.pathname.endsWith(path)", path, label
        )

    @staticmethod
    def _path_of(label: str) -> str:
        from attnviz.ui.pages import MODES

        return next(mode.name for mode in MODES if mode.label == label)

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


class Tabs:
    """Browser tabs shared by the tests of a session, one test at a time.

    Each tab has its own browser context (its own cookies and storage). A test that ends hands
    its tabs back, emptied (storage and cookies cleared, on `about:blank`: the app's session
    ends); the next test loads the app in one of them, as a person reloads a page. A tab that
    has loaded the app before loads it again for about half the CPU (1.9 CPU-s against 4.0 for
    a new tab, measured 2026-11-27 over four loads each: its renderer keeps the compiled
    scripts), on the two cores the test processes, the server and Chromium share. A test that
    needs a tab that has never loaded anything asks `open_app(new_tab=True)`.
    """

    def __init__(self, browser: Any) -> None:
        self._browser = browser
        self._idle: list[Any] = []  # pages, each in its own context

    def take(self, new_tab: bool = False) -> Any:
        """A tab on `about:blank` with the default viewport and timeout."""
        if self._idle and not new_tab:
            return self._idle.pop()
        context = self._browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        context.set_default_timeout(WAIT_SECONDS * 1000)
        return context.new_page()

    def give_back(self, page: Any) -> None:
        """Empty the tab and keep it for the next test; a tab that cannot be emptied (closed,
        crashed, stuck) is closed instead."""
        from playwright.sync_api import Error as PlaywrightError

        try:
            if page.url.startswith("http"):
                page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
            page.goto("about:blank")  # the app's websocket closes: its session ends
            page.context.clear_cookies()
            page.set_viewport_size(VIEWPORT)
            page.mouse.move(0, 0)  # where a new tab's mouse is: no hover left on the next page
        except PlaywrightError:
            self.discard(page)
        else:
            self._idle.append(page)

    def discard(self, page: Any) -> None:
        """Close the tab's context (nothing of it is used again)."""
        from playwright.sync_api import Error as PlaywrightError

        with contextlib.suppress(PlaywrightError):  # already closed, or the browser is gone
            page.context.close()

    def close(self) -> None:
        for page in self._idle:
            self.discard(page)
        self._idle.clear()


@pytest.fixture(scope="session")
def tabs(browser: Any) -> Iterator[Tabs]:
    """The session's shared tabs (`Tabs`)."""
    shared = Tabs(browser)
    try:
        yield shared
    finally:
        shared.close()


@pytest.fixture
def open_app(
    tabs: Tabs, app_url: str, request: pytest.FixtureRequest
) -> Iterator[Callable[..., App]]:
    """Opens the app in another tab each call (not loaded yet: call `App.open`), each tab in
    its own browser context, so each load is a new Streamlit session; `new_tab=True` for a tab
    that has never loaded the app (see `Tabs`). At the end the tabs are handed back; after a
    failure every tab is screenshotted and closed."""
    opened: list[App] = []

    def new_app(new_tab: bool = False) -> App:
        opened.append(App(tabs.take(new_tab), app_url))
        return opened[-1]

    try:
        yield new_app
    finally:
        report = getattr(request.node, "rep_call", None)
        failed = report is not None and report.failed
        for n, app in enumerate(opened):
            app.detach()
            if failed:
                _save_screenshot(app.page, request, n)
                tabs.discard(app.page)
            else:
                tabs.give_back(app.page)


@pytest.fixture
def app(open_app: Callable[..., App]) -> App:
    """The app in a tab of its own (not loaded yet: call `app.open()`)."""
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
