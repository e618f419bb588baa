"""End to end, the views beyond the Matrices page in headless Chromium: sentences and their
padding, HTML typed as a sentence, the multi-head grid and line view, a folded expander, zooming
a heatmap, and the KV cache's slider.

Fixtures, the `App` helper and the labels live in `browser_support.py`.
"""

from __future__ import annotations

import numpy as np
import pytest
from app_support import grid_blocks
from browser_support import (  # fixtures: conftest's pytest_plugins
    POLL_MS,
    SENTENCES,
    VIEWPORT,
    WAIT_SECONDS,
    WEIGHTS,
    App,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from attnviz.ui.pages.multihead import HEADS_TITLE

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WORKED = '[class*="st-key-worked-"] [data-testid="stText"]'  # messages.worked's text


def test_sentences_show_padding_tokens_as_text(app: App):
    app.open()
    app.open_page("Sentences")  # from the menu, as a person goes there
    app.page.get_by_label(SENTENCES, exact=True).wait_for()
    app.type_text(SENTENCES, "The dog barked loudly today.\nHi there.")
    ticks = app.wait_for_ticks(WEIGHTS, "barked")  # sentence 0
    assert "<pad>" not in ticks  # the longer sentence needs no padding

    app.set_number("View sentence (0 – 1)", 1)
    ticks = app.wait_for_ticks(WEIGHTS, "Hi")  # sentence 1
    assert "<pad>" in ticks  # shown as text...
    assert app.page.locator(".js-plotly-plot pad").count() == 0  # ...not parsed as a tag
    html = app.page.locator(".js-plotly-plot .xtick text, .js-plotly-plot .x2tick text")
    assert "&lt;pad&gt;" in html.evaluate_all("ticks => ticks.map(t => t.innerHTML)")
    weights = np.asarray(app.weights())  # Hi there . <pad> <pad> <pad>
    assert weights.shape == (6, 6)
    np.testing.assert_allclose(weights[:, 3:], 0)  # the padding mask hides the pads
    np.testing.assert_allclose(weights.sum(axis=1), 1, atol=1e-5)


def test_html_in_a_sentence_is_shown_as_text_and_runs_nothing(open_app):
    app = open_app()
    app.open(f"{app.url}/sentences")  # (the way there from the menu: the test above)
    app.page.get_by_label(SENTENCES, exact=True).wait_for()
    attack = "<img src=x onerror=alert(1)>"
    app.type_text(SENTENCES, attack)
    ticks = app.wait_for_ticks(WEIGHTS, "onerror")
    app.wait_for_charts(4)
    assert {"<", "img", "src", "=", "x", "onerror", "alert", "(", "1", ")", ">"} <= set(ticks)
    assert app.text(SENTENCES) == attack
    assert_harmless(app)
    app.open_tab("Step by step")  # tokens also appear in captions and the arithmetic
    app.page.locator(WORKED).filter(has_text="(<)").first.wait_for()
    assert_harmless(app)

    app.wait_for_query({"sentences": [attack]})
    shared = open_app().open(app.location())  # the same text arriving by a link
    shared.wait_for_text(SENTENCES, attack)
    shared.wait_for_ticks(WEIGHTS, "onerror")
    assert_harmless(shared)


def test_worked_arithmetic_is_plain_monospace_text_without_the_code_highlighter(open_app):
    # Lesson 1 opens on the step view: a cell's arithmetic, its columns lined up by spaces, in
    # the code font; a new tab loads no syntax highlighter for it (1.5 MB, ~0.3 s to compile)
    app = open_app(new_tab=True)
    app.open(f"{app.url}/lesson-1")
    box = app.page.locator(WORKED).first
    box.wait_for()
    text = box.inner_text()
    assert "1. score    " in text and "\n6. weight   " in text, text  # spaces and lines kept
    font = box.locator("span").evaluate("e => getComputedStyle(e).fontFamily")
    assert "Source Code Pro" in font, font
    loaded = app.page.evaluate("performance.getEntriesByType('resource').map((e) => e.name)")
    assert not [name for name in loaded if "SyntaxHighlighter" in name], loaded
    assert app.errors == []


def assert_harmless(app: App) -> None:
    """No injected element, no dialog, no script error."""
    assert app.page.locator('img[src="x"]').count() == 0
    assert app.page.evaluate("document.querySelectorAll('[onerror]').length") == 0
    assert app.dialogs == []
    assert app.errors == []


# The values of a head grid's "weights" trace (NaN as None): every head's block, gaps between.


GRID_VALUES = """(page, title) => { const div = page.chart(title);
  const trace = div && div._fullData.find((t) => t.name === 'weights');
  return trace && trace.z.map((row) => Array.from(row, (x) => Number.isFinite(x) ? x : null)); }"""


def test_multihead_grid_and_line_view_hover(app: App):
    """Issue 5's views in a real browser: every head (one chart, a block of cells per head), the
    enlarged head, and the line view, where hovering a query token leaves only that token's
    lines visible."""
    app.open(f"{app.url}/?mode=Multi-head&mh_h=2", charts=4)
    for title in (HEADS_TITLE, "Head 0 (enlarged)", "Average of the heads"):
        titles = app.wait_for_chart(title)  # the page draws other charts above the grid first
    assert {HEADS_TITLE, "Head 0 (enlarged)", "Average of the heads"} <= set(titles)
    grid = np.array(app.read(GRID_VALUES, HEADS_TITLE), dtype=float)  # (1 + T, 2S + 1)
    head0, head1 = np.nan_to_num(grid_blocks(grid, 1, 2)[0])  # blocked cells weigh 0
    assert np.allclose(head0, np.array(app.weights("Head 0 (enlarged)"), dtype=float), atol=1e-5)
    average = np.array(app.weights("Average of the heads"), dtype=float)
    assert np.allclose(average, (head0 + head1) / 2, atol=1e-5)
    assert np.isnan(grid[1:, (grid.shape[1] - 1) // 2]).all()  # the gap between the blocks
    frame = app.page.locator("iframe").first.element_handle().content_frame()
    frame.wait_for_selector("svg text")  # the line view
    texts = frame.locator("svg text")
    total = frame.locator("svg line").count()
    assert total > 0
    texts.first.hover()  # the first query token: its lines stay, the others get display: none
    visible = frame.wait_for_function(
        "(total) => { const n = Array.from(document.querySelectorAll('svg line'))"
        ".filter(l => l.style.display !== 'none').length; return n < total && n; }",
        arg=total, polling=POLL_MS, timeout=WAIT_SECONDS * 1000,
    ).json_value()  # fmt: skip
    assert 0 < visible < total  # only this token's lines remain
    # On a phone an 8 × 8 head prints no values (they ran into each other); on a wide page it
    # prints all 64 (presenter.NARROW_STYLE, a media query: no rerun)
    shown = (
        "(page, title) => Array.from(page.chart(title).querySelectorAll('g.heatmap-label'))"
        ".filter((g) => getComputedStyle(g).display !== 'none').length"
    )
    assert app.read(shown, "Head 0 (enlarged)") == 64
    app.page.set_viewport_size({"width": 390, "height": 900})
    app.wait_until(f"(page, title) => ({shown})(page, title) === 0", "Head 0 (enlarged)",
                   "the phone's page to hide the values")  # fmt: skip
    app.wait_until(  # and its titles in a smaller font (a long one was cut), each in its chart
        "(page) => Array.from(document.querySelectorAll('.js-plotly-plot .gtitle')).every((t) =>"
        " getComputedStyle(t).fontSize === '12px' && t.getBoundingClientRect().right <="
        " t.closest('.js-plotly-plot').getBoundingClientRect().right + 1)",
        None, "every chart's title in 12 px, within its chart, on a phone",
    )  # fmt: skip
    app.page.set_viewport_size(VIEWPORT)
    assert app.dialogs == [] and app.errors == []


def test_a_folded_expander_draws_its_charts_when_opened(app: App):
    """How the enlarged head's Q, K and V are made: nothing drawn while folded (its nine charts
    cost every run), drawn when a person opens it, kept open for another head."""
    app.open(f"{app.url}/multihead?mh_h=2", charts=4)
    app.wait_for_chart(HEADS_TITLE)
    assert "W_Q (d_model × 8)" not in app.chart_titles()
    app.page.get_by_text("How the enlarged head's Q, K and V are made from the tokens").click()
    for title in ("W_Q (d_model × 8)", "Q = X · W_Q", "K = X · W_K", "V = X · W_V"):
        app.wait_for_chart(title)  # each chart appears once plotly has drawn it
    assert app.dialogs == [] and app.errors == []


def test_zoom_keeps_the_token_labels_on_their_cells(app: App):
    app.open(f"{app.url}/sentences")
    app.page.get_by_label(SENTENCES, exact=True).wait_for()
    app.type_text(SENTENCES, "The cat sat on the mat")
    app.wait_for_ticks(WEIGHTS, "mat")  # the sentence's labels
    chart = app.page.locator(".js-plotly-plot").filter(has_text=WEIGHTS).first
    full = [[-0.5, 5.5], [-0.5, 5.5], [5.5, -0.5], [5.5, -0.5]]  # x, x2, y, y2: every cell
    for attempt in range(3):  # a late redraw of the page may swallow a drag: drag again
        app.wait_until("(page) => page.idle()", None, "the page to be idle")
        app.scroll_to(chart)
        drag = chart.locator(".nsewdrag").first
        drag.wait_for(state="visible")
        box = drag.bounding_box()
        if box is None:  # redrawn between the wait and the read: drag again
            continue
        app.page.mouse.move(box["x"] + box["width"] * 0.05, box["y"] + box["height"] * 0.05)
        app.page.mouse.down()
        app.page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5, steps=8)
        app.page.mouse.up()
        try:
            zoomed = "(r, full) => r[0][0] !== full[0][0]"
            x, x2, y, y2 = _wait_for_ranges(app, chart, zoomed, full, 10 if attempt < 2 else 30)
            break
        except PlaywrightTimeout:
            continue
    else:
        raise AssertionError("three drags never zoomed the chart")
    assert x == x2 and y == y2  # the label axes moved with the cells
    assert x[1] - x[0] < 4 and y[0] - y[1] < 4  # and it did zoom in
    unzoomed = "(r, full) => JSON.stringify(r) === JSON.stringify(full)"
    for attempt in range(3):  # a double click plotly reads as two clicks: double-click again
        chart.locator(".nsewdrag").first.dblclick()
        try:
            _wait_for_ranges(app, chart, unzoomed, full, 10 if attempt < 2 else 30)
            break
        except PlaywrightTimeout:
            continue
    else:
        raise AssertionError("a double click never reset the zoom to every cell")


def _wait_for_ranges(app: App, chart, condition: str, full: list, seconds=WAIT_SECONDS) -> list:
    """Wait until the ranges of the chart's four axes meet `condition(ranges, full)`; them."""
    script = (
        "([d, full]) => { const r = ['xaxis', 'xaxis2', 'yaxis', 'yaxis2']"
        f".map(a => d._fullLayout[a].range); return ({condition})(r, full) && r; }}"
    )
    handle = chart.element_handle()
    return app.page.wait_for_function(
        script, arg=[handle, full], polling=POLL_MS, timeout=seconds * 1000
    ).json_value()


def test_the_kv_cache_slider_steps_through_decoding(app: App):
    # Today's attention in the browser: a causal sentence decoded with a KV cache, one step
    # further with the keyboard: one more cached key, one more weight.
    app.open(f"{app.url}/sentences?causal=true&view=KV+cache&cache_t=2", charts=3)
    title = app.wait_for_title_starting("Step 2's weights")
    assert len(app.read("(page, t) => page.chart(t)._fullData[0].x", title)) == 3
    slider = app.page.get_by_role("slider", name="Decoding step t (the token being generated)")
    slider.focus()
    slider.press("ArrowRight")
    title = app.wait_for_title_starting("Step 3's weights")
    assert len(app.read("(page, t) => page.chart(t)._fullData[0].x", title)) == 4
    assert app.exceptions() == 0 and app.errors == []
