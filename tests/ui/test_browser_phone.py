"""End to end on a 390 × 844 phone screen, in headless Chromium: nothing covers a chart's title
or runs off the right edge, tick labels never overlap, and the line view answers a tap as it
answers a hover. Measured on the language model's page, which has every kind of element: bar
and heat maps, the model view, a head table, a formula, a line view and the KV cache's chart.
Also, on a phone and a desktop, a heatmap's printed values never run together.

Fixtures, the `App` helper and the labels live in `browser_support.py`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_support import WAIT_SECONDS, App  # fixtures: conftest's pytest_plugins
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE = {"width": 390, "height": 844}  # px: a phone's screen (an iPhone 12-15's CSS pixels)
CACHE_CHART = "every head over the cache"  # the end of the Generate tab's chart's title

# Every chart whose toolbar (plotly's modebar, always shown on a touch screen) covers its title:
# [title, the boxes' overlap in px].
TOOLBAR_ON_TITLE = """() => Array.from(document.querySelectorAll('.js-plotly-plot'), (div) => {
  const bar = div.querySelector('.modebar'), title = div.querySelector('.gtitle');
  if (!bar || !title || !title.textContent.trim()) return null;
  const a = bar.getBoundingClientRect(), b = title.getBoundingClientRect();
  const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
  const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
  return x > 0 && y > 0 ? [title.textContent, Math.round(x), Math.round(y)] : null;
}).filter((hit) => hit !== null)"""

# Every chart cut at its bottom by the box Streamlit sized for it (the toolbar's strip above
# the chart must make the box taller): [title, px cut].
CHART_CUT = """() => Array.from(document.querySelectorAll('.js-plotly-plot'), (div) => {
  const box = div.closest('[data-testid="stElementContainer"]');
  const cut = div.getBoundingClientRect().bottom - box.getBoundingClientRect().bottom;
  return cut > 1 ? [(div.querySelector('.gtitle') || {}).textContent, Math.round(cut)] : null;
}).filter((hit) => hit !== null)"""

# Every chart's height on the page, in px (a chart that keeps growing is sized from its own box).
CHART_HEIGHTS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'),
  (div) => Math.round(div.getBoundingClientRect().height))"""

# Every table's toolbar (Streamlit's, above its top right corner, always shown on a touch
# screen) that covers the element before it: [what it covers, the boxes' overlap in px].
TABLE_TOOLBAR_ON_ABOVE = """() => Array.from(
  document.querySelectorAll('[data-testid="stElementToolbar"]'), (bar) => {
    const element = bar.closest('[data-testid="stElementContainer"]');
    const above = element && element.previousElementSibling;
    if (!above) return null;
    const a = bar.getBoundingClientRect(), b = above.getBoundingClientRect();
    const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    return x > 0 && y > 0 ? [above.textContent.slice(0, 40), Math.round(y)] : null;
  }).filter((hit) => hit !== null)"""

# A table whose grid reaches out of its element's box, over what comes after it (the margin that
# leaves its toolbar room pushed the grid down inside a box of a fixed height): [the text after
# it, px over].
TABLE_OUT_OF_ITS_BOX = """() => Array.from(
  document.querySelectorAll('[data-testid="stDataFrame"]'), (grid) => {
    const element = grid.closest('[data-testid="stElementContainer"]');
    const over = grid.getBoundingClientRect().bottom - element.getBoundingClientRect().bottom;
    const after = element.nextElementSibling;
    return over > 1 ? [after ? after.textContent.slice(0, 40) : '', Math.round(over)] : null;
  }).filter((hit) => hit !== null)"""

# What runs off the right edge: the page wider than the screen, or a formula wider than its box
# (which then shows its start and scrolls sideways, a scroll bar a phone does not show): [what,
# px it needs, px it has].
OFF_THE_EDGE = """() => {
  const cut = [];
  const page = document.scrollingElement, main = document.querySelector('[data-testid="stMain"]');
  if (page.scrollWidth > innerWidth) cut.push(['page', page.scrollWidth, innerWidth]);
  if (main.scrollWidth > main.clientWidth) cut.push(['main', main.scrollWidth, main.clientWidth]);
  for (const box of document.querySelectorAll('.katex-display')) {
    const right = box.getBoundingClientRect().right;
    if (box.scrollWidth > box.clientWidth + 4 || right > innerWidth + 1) {
      cut.push([box.textContent.slice(0, 40), box.scrollWidth, box.clientWidth]);
    }
  }
  return cut;
}"""

# Tick labels shown that overlap the one shown before them on their axis: [chart, label, label].
# Level labels overlap when their boxes do; two labels tilted by the same angle θ are parallel
# lines of text, which overlap when the distance between them across the text (their centres'
# distance along the axis × sin θ) is less than the glyphs' height (0.8 × the font size).
OVERLAPPING_TICKS = """() => {
  const hits = [];
  for (const div of document.querySelectorAll('.js-plotly-plot')) {
    const title = (div.querySelector('.gtitle') || {}).textContent || '(untitled)';
    const axes = new Map();  // each axis's labels (g.xtick, g.x2tick, g.ytick...) in order
    for (const text of div.querySelectorAll('g[class$="tick"] > text')) {
      const kind = text.parentNode.getAttribute('class');
      if (!/^[xy]\\d*tick$/.test(kind)) continue;
      if (!axes.has(text.parentNode.parentNode)) axes.set(text.parentNode.parentNode, []);
      axes.get(text.parentNode.parentNode).push(text);
    }
    for (const texts of axes.values()) {
      const across = texts[0].parentNode.getAttribute('class')[0] === 'x';
      let last = null;
      for (const text of texts) {
        const box = text.getBoundingClientRect();
        if (!box.width || getComputedStyle(text).display === 'none') continue;
        const size = parseFloat(getComputedStyle(text).fontSize);
        const turn = /rotate\\((-?[\\d.]+)/.exec(text.getAttribute('transform') || '');
        const angle = turn ? Math.abs(parseFloat(turn[1])) * Math.PI / 180 : 0;
        if (last) {
          let overlap;
          if (across && angle > 0.01) {
            const apart = Math.abs((box.left + box.right) - (last.box.left + last.box.right)) / 2;
            overlap = apart * Math.sin(angle) < 0.8 * size;
          } else {
            overlap = box.left < last.box.right && last.box.left < box.right
                      && box.top < last.box.bottom && last.box.top < box.bottom;
          }
          if (overlap) hits.push([title, last.text, text.textContent]);
        }
        last = {box, text: text.textContent};
      }
    }
  }
  return hits;
}"""


# A heatmap's printed values shown that touch the one before them in their row: [chart, value,
# value]; and how many values are shown and hidden in all.
TOUCHING_VALUES = """() => {
  const hits = [];
  let shown = 0, hidden = 0;
  for (const div of document.querySelectorAll('.js-plotly-plot')) {
    const title = (div.querySelector('.gtitle') || {}).textContent || '(untitled)';
    for (const text of div.querySelectorAll('g.hm g.heatmap-label > text')) {
      if (getComputedStyle(text).display === 'none'
          || getComputedStyle(text.parentNode).display === 'none') hidden += 1; else shown += 1;
    }
    const texts = Array.from(div.querySelectorAll('g.hm g.heatmap-label > text')).filter(
      (t) => getComputedStyle(t).display !== 'none'
             && getComputedStyle(t.parentNode).display !== 'none');
    for (let k = 1; k < texts.length; k++) {
      const a = texts[k - 1].getBoundingClientRect(), b = texts[k].getBoundingClientRect();
      if (Math.abs(a.top - b.top) < 1 && a.right > b.left && b.right > a.left) {
        hits.push([title, texts[k - 1].textContent, texts[k].textContent]);
      }
    }
  }
  return [hits, shown, hidden];
}"""
LONG_TOKENS = "Internationalization of extraordinarily incomprehensible characteristics happens"


@pytest.fixture
def phone(browser, app_url: str) -> Iterator[App]:
    """The app in a tab of a phone: its screen's size, a touch screen (no hover: plotly's and
    the tables' toolbars always shown), its own browser context (closed after the test)."""
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    context.set_default_timeout(WAIT_SECONDS * 1000)
    try:
        yield App(context.new_page(), app_url)
    finally:
        context.close()


def test_on_a_phone_nothing_covers_a_title_runs_off_the_edge_or_overlaps(phone: App):
    app = phone
    app.open(f"{app.url}/language-model", charts=4)
    app.wait_for_title_starting("Rollout")
    heights = app.read(CHART_HEIGHTS)
    app.page.wait_for_timeout(1500)  # the charts stay the height their figures give them
    assert app.read(CHART_HEIGHTS) == heights and max(heights) < 1000, heights
    assert app.read(TOOLBAR_ON_TITLE) == []
    assert app.read(CHART_CUT) == []
    assert app.read(TABLE_TOOLBAR_ON_ABOVE) == []
    assert app.read(TABLE_OUT_OF_ITS_BOX) == []  # the heads' table over "Attention rollout"
    assert app.read(OFF_THE_EDGE) == []
    assert app.read(OVERLAPPING_TICKS) == []
    _tap_a_token_of_the_line_view(app)
    app.open_tab("Generate")  # the KV cache: 8 heads over 27-32 cached keys, on 390 px
    title = app.wait_for_title_starting("Step ")
    assert title.endswith(CACHE_CHART)
    app.wait_until(
        "(page, title) => page.ticks(title).length > 10 && page.idle()", title, "its tick labels"
    )
    assert app.read(OVERLAPPING_TICKS) == []
    assert app.read(TOOLBAR_ON_TITLE) == []
    assert app.read(TABLE_TOOLBAR_ON_ABOVE) == []  # the next tokens' table, under the chart
    assert app.read(OFF_THE_EDGE) == []
    assert not app.errors


@pytest.mark.parametrize("screen", ["phone", "desktop"])
def test_a_heatmaps_printed_values_never_run_together(screen, phone: App, open_app):
    # Long tokens beside the cells leave each cell ~26 px on a phone and ~45 px in a desktop's
    # column: values like "-0.0751" ran into their neighbours ("-0.0751-0.0851"). They are
    # printed smaller, or not at all (a tap or the hover gives each cell's value).
    app = phone if screen == "phone" else open_app()
    app.open(f"{app.url}/sentences?sentences={LONG_TOKENS.replace(' ', '+')}", charts=6)
    app.wait_for_ticks("Attention weights", "happens")
    app.page.wait_for_timeout(500)  # the charts' script has run after their last draw
    hits, shown, hidden = app.read(TOUCHING_VALUES)
    assert hits == [], hits
    if screen == "desktop":  # room for most of them: printed, smaller where needed
        assert shown > hidden, (shown, hidden)
    assert not app.errors


def _tap_a_token_of_the_line_view(app: App) -> None:
    """A touch screen has no hover: a tap on a token (its click) keeps only its lines, also
    once the browser says the pointer left it (a touch elsewhere), until the next tap; a second
    tap on it shows every line again. The events are sent to the token itself: a tap's place
    on a page that a rerun may still move is not what this checks."""
    app.scroll_to(app.page.get_by_role("heading", name="One head, enlarged"))
    frame_box = app.page.locator('iframe[srcdoc*="Line opacity"]')
    for _ in range(20):  # Streamlit draws a frame once it is scrolled near: scroll down to it
        try:
            frame_box.wait_for(state="attached", timeout=1000)
            break
        except PlaywrightTimeout:
            app.page.mouse.wheel(0, 400)
    view = frame_box.element_handle()
    frame = view.content_frame()
    frame.wait_for_selector(".note")
    assert "Tap or hover a token" in frame.inner_text(".note")
    lines = frame.locator("line")
    every = lines.count()
    hidden = "ls => ls.filter(l => l.style.display === 'none').length"
    token = frame.locator("svg text").nth(3)  # the fourth query's label
    for event in ("mouseenter", "click", "mouseleave"):  # a tap, then a touch elsewhere
        token.dispatch_event(event)
    assert 0 < lines.evaluate_all(hidden) < every
    assert token.get_attribute("class") == "on"
    for event in ("mouseenter", "click", "mouseleave"):  # tapped again: every line
        token.dispatch_event(event)
    assert lines.evaluate_all(hidden) == 0
