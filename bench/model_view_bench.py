"""Model view: click a square of a head map → that head enlarged, attnviz beside the floor app.

Shape letters: L layers, H heads, T queries (output steps), S keys (source tokens).

Two sizes, each page in its own browser context, both apps' servers running side by side:
- 2 × 4 heads: the shipped trained Transformer (dates) on the Learn page, attnviz at
  `/learn?learn_arch=Transformer&learn_tview=Model+view` (its default input: T = 11,
  S = 24; three ways: bidirectional, causal, cross); the floor
  (bench/floor_model_view.py) at `/?layers=2&heads=4&ways=3&t=11&s=24`.
- 6 × 12 heads: the Decoder page with random weights, attnviz at
  `/decoder?dec_view=Model+view&dec_h=12&dec_dmodel=96&dec_n=6&dec_batch=1` (T = S = 5;
  two ways: causal, cross); the floor at `/?layers=6&heads=12&ways=2&t=5&s=5`.

A click: the mouse is released over a square of the `cross` head map (a plotly scatter point,
`.st-key-mv_map_cross path.point`, index layer · H + head), alternating between layer 0 ·
head 1 and the last layer's last head, so every click changes the enlarged head. The time runs
from the release (stamped by a capturing `pointerup` listener) to the later of two ends: the
first animation frame in which the `mv-enlarged` chart's title reads the new head
("cross · layer <l> · head <h>") with its heatmap image drawn, and the arrival of the run's
successful `script_finished` message on the page's websocket. All three are stamped in the
page (`performance.now()`; the websocket's messages by a wrapper installed before the page's
scripts, `pages.STAMP_RUNS`), so Playwright's round trips are not counted; the note also gives the
time to the page's rerun request. The page must then be idle before the next click. One
untimed warm-up click per page, then clicks alternate between the apps (the order swaps every
round). The heatmap charts and traces on each page are counted after the warm-up and after the
last click and printed: the floor must draw as many as attnviz.
"""

from __future__ import annotations

import asyncio
import statistics
from dataclasses import dataclass
from typing import Any

from bench.pages import RunWatcher, close_page, launch_browser, new_page, settle, stamp_runs
from bench.report import Figure, failed, progress
from deploy import servers

APPS = ("attnviz", "floor-model-view")
CLICKS, QUICK_CLICKS = 10, 3  # timed clicks per app and size
TARGET = 1.5  # most attnviz / floor ratio of the median click-to-repaint
TIMEOUT_S = 120
MAP = ".st-key-mv_map_cross path.point"  # the cross-attention head map's squares


@dataclass(frozen=True)
class Size:
    """One model-view size and the two pages that show it."""

    layers: int
    heads: int
    attnviz: str  # attnviz's page path and query string
    floor: str  # the floor's (its one page's) query string

    @property
    def name(self) -> str:
        return f"model view click → enlarged head repainted, {self.layers}×{self.heads} heads"

    def heads_clicked(self) -> tuple[int, int]:
        """The two squares clicked in turn: layer 0 · head 1, and the last layer's last head."""
        return 1, self.layers * self.heads - 1

    def title(self, index: int) -> str:
        """The enlarged chart's title once square `index` was clicked."""
        layer, head = divmod(index, self.heads)
        return f"cross · layer {layer} · head {head}"


SIZES = (
    Size(2, 4, "learn?learn_arch=Transformer&learn_tview=Model+view",
         "?layers=2&heads=4&ways=3&t=11&s=24"),
    Size(6, 12, "decoder?dec_view=Model+view&dec_h=12&dec_dmodel=96&dec_n=6&dec_batch=1",
         "?layers=6&heads=12&ways=2&t=5&s=5"),
)  # fmt: skip

# Stamp the next release of a mouse button (capturing: before any handler, plotly's included).
ARM = """() => {
  window.__bench = {t0: null};
  document.addEventListener('pointerup', () => {
    if (window.__bench.t0 === null) window.__bench.t0 = performance.now();
  }, {capture: true, once: true});
}"""

# Resolve with the milliseconds from the stamped release to the first animation frame in which
# the enlarged chart's title is `title` and its heatmap is drawn; -1 on timeout, -2 if no release
# was stamped.
WAIT_ENLARGED = """({title, timeoutMs}) => new Promise((resolve) => {
  const start = performance.now();
  const tick = () => {
    const now = performance.now();
    const div = document.querySelector('.st-key-mv-enlarged .js-plotly-plot');
    const text = div && div.querySelector('.gtitle');
    if (text && text.textContent.trim() === title && div.querySelector('.heatmaplayer image')) {
      resolve(window.__bench.t0 === null ? -2 : now - window.__bench.t0);
      return;
    }
    if (now - start > timeoutMs) { resolve(-1); return; }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})"""

# [ms from the stamped release to the first rerun request after it, to the first successful
# run end after it] (null where there is none).
AFTER_RELEASE = """() => {
  const t0 = window.__bench.t0, first = (stamps) => stamps.find((t) => t >= t0);
  const ms = (t) => t === undefined ? null : t - t0;
  return [ms(first(window.__runs.requested)), ms(first(window.__runs.ended))];
}"""

# True once every plotly chart element on the page holds a drawn plot.
CHARTS_DRAWN = """() => {
  const boxes = document.querySelectorAll('[data-testid="stPlotlyChart"]');
  return boxes.length > 0 && Array.from(boxes).every((box) => {
    const div = box.querySelector('.js-plotly-plot');
    return div && div._fullData;
  });
}"""

# [plotly charts holding a heatmap, heatmap traces in them].
COUNT_HEATMAPS = """() => {
  let charts = 0, traces = 0;
  for (const div of document.querySelectorAll('.js-plotly-plot')) {
    const n = (div._fullData || []).filter((trace) => trace.type === 'heatmap').length;
    if (n) { charts += 1; traces += n; }
  }
  return [charts, traces];
}"""


async def _open(browser: Any, url: str) -> tuple[Any, RunWatcher]:
    page = await new_page(browser, TIMEOUT_S)
    await page.add_init_script(stamp_runs())
    watcher = RunWatcher(page)
    await page.goto(url)
    await settle(page, watcher, 1, TIMEOUT_S)
    return page, watcher


async def _count(page: Any) -> tuple[int, int]:
    """(heatmap charts, heatmap traces) once every chart on the page is drawn."""
    await page.wait_for_function(CHARTS_DRAWN, polling=100, timeout=TIMEOUT_S * 1000)
    charts, traces = await page.evaluate(COUNT_HEATMAPS)
    return charts, traces


async def _click(
    page: Any, watcher: RunWatcher, index: int, title: str
) -> tuple[float, float, float, float]:
    """Release the mouse over square `index` of the cross head map. Milliseconds from the
    release to the later of the enlarged head's repaint and the run's end; to the repaint;
    to the run's end; to the page's rerun request (all stamped in the page)."""
    point = page.locator(MAP).nth(index)
    await point.scroll_into_view_if_needed()
    box = await point.bounding_box()
    runs = watcher.finished + 1
    await page.evaluate(ARM)
    await page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    painted = await page.evaluate(WAIT_ENLARGED, {"title": title, "timeoutMs": TIMEOUT_S * 1000})
    if painted < 0:
        why = "no release was seen" if painted == -2 else f"no repaint in {TIMEOUT_S} s"
        raise RuntimeError(f"square {index} on {page.url}: {why} (expected {title!r})")
    await settle(page, watcher, runs, TIMEOUT_S)
    requested, ended = await page.evaluate(AFTER_RELEASE)
    if requested is None or ended is None:
        raise RuntimeError(f"square {index} on {page.url}: the page saw no rerun request or end")
    return max(painted, ended), painted, ended, requested


def _order(i: int) -> tuple[str, ...]:
    return APPS if i % 2 == 0 else APPS[::-1]


async def _measure(browser: Any, apps: dict[str, servers.Server], size: Size, clicks: int):
    """Timed clicks at one size, alternating apps: (both, repaint, run end, request) ms per
    click (see `_click`), the heatmap counts after the warm-up and after the last click, and
    the runs seen, by app."""
    shown: dict[str, tuple[Any, RunWatcher]] = {}
    times: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name in APPS}
    counts: dict[str, list[tuple[int, int]]] = {name: [] for name in APPS}
    first, second = size.heads_clicked()
    try:
        for name in APPS:
            query = size.attnviz if name == "attnviz" else size.floor
            shown[name] = await _open(browser, f"{apps[name].url}/{query}")
        for i in range(clicks + 1):  # click 0 is the untimed warm-up
            index = second if i % 2 else first
            for name in _order(i):
                result = await _click(*shown[name], index, size.title(index))
                if i:
                    times[name].append(result)
                else:
                    counts[name].append(await _count(shown[name][0]))
        for name in APPS:
            counts[name].append(await _count(shown[name][0]))
        runs = {name: (w.finished, w.other, w.exceptions) for name, (_, w) in shown.items()}
    finally:
        for page, _ in shown.values():
            await close_page(page)
    return times, counts, runs


def _steps(medians: list[float]) -> str:
    """The steps "request / run end / repaint ms" from [both, repaint, run end, request]."""
    return f"{medians[3]:.0f} / {medians[2]:.0f} / {medians[1]:.0f} ms"


def _figure(size: Size, times: dict, counts: dict, runs: dict) -> Figure:
    medians = {name: [statistics.median(t[k] for t in times[name]) for k in range(4)]
               for name in APPS}  # fmt: skip
    ours, floor = medians["attnviz"][0], medians[APPS[1]][0]
    n = len(times["attnviz"])
    seen = {  # "charts/traces", or "a/b then c/d" if they changed
        name: " then ".join(f"{c}/{t}" for c, t in dict.fromkeys(counts[name])) for name in APPS
    }
    warning = "" if seen["attnviz"] == seen[APPS[1]] else "WARNING: heatmap counts differ. "
    spread = ", ".join(
        f"{label} {min(t[0] for t in times[name]):.0f}–{max(t[0] for t in times[name]):.0f} ms"
        for label, name in zip(("attnviz", "floor"), APPS, strict=True)
    )
    later = sum(t[2] > t[1] for t in times["attnviz"])
    # successful runs: the first load, the warm-up and one per click; no other end, no traceback
    trouble = {name: r for name, r in runs.items() if r != (n + 2, 0, 0)}
    note = (
        f"{warning}median of {n} clicks each (cross head map, two heads in turn), each to the "
        f"later of the enlarged head's repaint and the run's end; medians from the release to "
        f"the rerun request / run end / repaint: attnviz {_steps(medians['attnviz'])}, floor "
        f"{_steps(medians[APPS[1]])} (attnviz's run ended after its repaint in {later} of {n}); "
        f"range {spread}; heatmap charts/traces: attnviz "
        f"{seen['attnviz']}, floor {seen[APPS[1]]}; target: within {TARGET}× the floor, which "
        "draws the same heatmaps but no summaries, tables, line view or other widgets"
        + (f"; WARNING: runs finished / ended otherwise / tracebacks: {trouble}" if trouble else "")
    )
    return Figure(size.name, ours, "floor", floor, "ms", f"≤ {TARGET:.2f}× floor",
                  ours <= TARGET * floor, note)  # fmt: skip


async def run_async(quick: bool) -> list[Figure]:
    from playwright.async_api import async_playwright

    figures = []
    async with async_playwright() as playwright:
        browser = await launch_browser(playwright)
        try:
            apps = {name: servers.launch(name) for name in APPS}
            for size in SIZES:
                progress(size.name)
                try:
                    measured = await _measure(
                        browser, apps, size, QUICK_CLICKS if quick else CLICKS
                    )
                    figures.append(_figure(size, *measured))
                except Exception as error:  # noqa: BLE001 - one failed size must not hide the other
                    figures.append(failed(size.name, f"≤ {TARGET:.2f}× floor", error))
        finally:
            servers.stop_all()
            await browser.close()
    return figures


def run(quick: bool = False) -> list[Figure]:
    """Both sizes' click-to-repaint figures (attnviz beside the floor app)."""
    return asyncio.run(run_async(quick))


if __name__ == "__main__":
    import sys

    from bench.report import table

    print(table("Model view", run(quick="--quick" in sys.argv)))
