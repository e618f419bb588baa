"""Model view: click a square of a head map → that head enlarged, attnviz beside the floor app.

Shape letters: L layers, H heads, T queries (output steps), S keys (source tokens).

Two sizes, each page in its own browser context, both apps' servers running side by side:
- 2 × 4 heads: the shipped trained Transformer (dates) in Learn mode, attnviz at
  `/?mode=Learn&learn_arch=Transformer&learn_tview=Model+view` (its default input: T = 11,
  S = 24; three ways: encoder self, decoder self, cross); the floor
  (bench/floor_model_view.py) at `/?layers=2&heads=4&ways=3&t=11&s=24`.
- 6 × 12 heads: the Decoder mode with random weights, attnviz at
  `/?mode=Decoder&dec_view=Model+view&dec_h=12&dec_dmodel=96&dec_n=6&dec_batch=1` (T = S = 5;
  two ways: decoder self, cross); the floor at `/?layers=6&heads=12&ways=2&t=5&s=5`.

A click: the mouse is released over a square of the `cross` head map (a plotly scatter point,
`.st-key-mv-map-cross path.point`, index layer · H + head), alternating between layer 0 ·
head 1 and the last layer's last head, so every click changes the enlarged head. The time runs
from the release (stamped in the page by a capturing `pointerup` listener) to the later of two
ends: the first animation frame in which the `mv-enlarged` chart's title reads the new head
("cross · layer <l> · head <h>") with its heatmap image drawn, and the arrival of the run's
`script_finished` message on the page's websocket (stamped in Python, moved onto the page's
clock by an offset measured with round trips). The page must then be idle before the next
click. One untimed warm-up click per page, then clicks alternate between the apps (the order
swaps every round). The heatmap charts and traces on each page are counted after the warm-up
and after the last click and printed: the floor must draw as many as attnviz.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass
from typing import Any

import servers
from pages import RunWatcher, close_page, launch_browser, new_page, settle
from report import Figure, failed, progress

APPS = ("attnviz", "floor-model-view")
CLICKS, QUICK_CLICKS = 10, 3  # timed clicks per app and size
TARGET = 1.5  # most attnviz / floor ratio of the median click-to-repaint
TIMEOUT_S = 120
MAP = ".st-key-mv-map-cross path.point"  # the cross-attention head map's squares


@dataclass(frozen=True)
class Size:
    """One model-view size and the two pages that show it."""

    layers: int
    heads: int
    attnviz: str  # attnviz's query string
    floor: str  # the floor's query string

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
    Size(2, 4, "mode=Learn&learn_arch=Transformer&learn_tview=Model+view",
         "layers=2&heads=4&ways=3&t=11&s=24"),
    Size(6, 12, "mode=Decoder&dec_view=Model+view&dec_h=12&dec_dmodel=96&dec_n=6&dec_batch=1",
         "layers=6&heads=12&ways=2&t=5&s=5"),
)  # fmt: skip

# Stamp the next release of a mouse button (capturing: before any handler, plotly's included).
ARM = """() => {
  window.__bench = {t0: null};
  document.addEventListener('pointerup', () => {
    if (window.__bench.t0 === null) window.__bench.t0 = performance.now();
  }, {capture: true, once: true});
}"""

# Resolve with {ms, clickEpoch}: the milliseconds from the stamped release to the first
# animation frame in which the enlarged chart's title is `title` and its heatmap is drawn, and
# the release in epoch milliseconds; ms -1 on timeout, -2 if no release was stamped.
WAIT_ENLARGED = """({title, timeoutMs}) => new Promise((resolve) => {
  const start = performance.now();
  const tick = () => {
    const now = performance.now();
    const div = document.querySelector('.st-key-mv-enlarged .js-plotly-plot');
    const text = div && div.querySelector('.gtitle');
    if (text && text.textContent.trim() === title && div.querySelector('.heatmaplayer image')) {
      const t0 = window.__bench.t0;
      resolve(t0 === null ? {ms: -2} : {ms: now - t0, clickEpoch: performance.timeOrigin + t0});
      return;
    }
    if (now - start > timeoutMs) { resolve({ms: -1}); return; }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})"""

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

NOW = "() => performance.timeOrigin + performance.now()"


class StampedWatcher(RunWatcher):
    """A `RunWatcher` that also notes when each successful run's end arrived and each rerun
    request left (epoch seconds, stamped in Python as Playwright reports the frames)."""

    def __init__(self, page: Any) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        self.ended: list[float] = []  # time.time() at each FINISHED_SUCCESSFULLY, in order
        self.requested: list[float] = []  # time.time() at each rerun request sent
        self._parse_back = BackMsg.FromString
        super().__init__(page)
        page.on("websocket", lambda ws: ws.on("framesent", self._on_sent))

    def _on_sent(self, payload: Any) -> None:
        if not isinstance(payload, bytes | bytearray):
            return
        if self._parse_back(bytes(payload)).WhichOneof("type") == "rerun_script":
            self.requested.append(time.time())

    def _on_frame(self, payload: Any) -> None:
        before = self.finished
        super()._on_frame(payload)
        if self.finished > before:
            self.ended.append(time.time())


@dataclass
class _Page:
    page: Any
    watcher: StampedWatcher
    offset_ms: float  # page epoch ms − Python epoch ms


async def _clock_offset(page: Any, trips: int = 7) -> float:
    """Milliseconds to add to Python's `time.time()` · 1000 to read the page's epoch clock (the
    round trip with the shortest time; its error is at most half of it, ~1 ms)."""
    best = (float("inf"), 0.0)
    for _ in range(trips):
        sent = time.time()
        page_ms = await page.evaluate(NOW)
        back = time.time()
        best = min(best, (back - sent, page_ms - 500 * (sent + back)))
    return best[1]


async def _open(browser: Any, url: str) -> _Page:
    page = await new_page(browser, TIMEOUT_S)
    watcher = StampedWatcher(page)
    await page.goto(url)
    await settle(page, watcher, 1, TIMEOUT_S)
    return _Page(page, watcher, await _clock_offset(page))


async def _count(page: Any) -> tuple[int, int]:
    """(heatmap charts, heatmap traces) once every chart on the page is drawn."""
    await page.wait_for_function(CHARTS_DRAWN, polling=100, timeout=TIMEOUT_S * 1000)
    charts, traces = await page.evaluate(COUNT_HEATMAPS)
    return charts, traces


async def _click(shown: _Page, index: int, title: str) -> tuple[float, float, float, float]:
    """Release the mouse over square `index` of the cross head map. Milliseconds from the
    release to the later of the enlarged head's repaint and the run's end; to the repaint;
    to the run's end; to the page's rerun request."""
    page, watcher = shown.page, shown.watcher
    point = page.locator(MAP).nth(index)
    await point.scroll_into_view_if_needed()
    box = await point.bounding_box()
    runs, requests = watcher.finished + 1, len(watcher.requested)
    await page.evaluate(ARM)
    await page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    painted = await page.evaluate(WAIT_ENLARGED, {"title": title, "timeoutMs": TIMEOUT_S * 1000})
    if painted["ms"] < 0:
        why = "no release was seen" if painted["ms"] == -2 else f"no repaint in {TIMEOUT_S} s"
        raise RuntimeError(f"square {index} on {page.url}: {why} (expected {title!r})")
    await watcher.wait_for(runs, TIMEOUT_S)
    ended, requested = (
        stamp * 1000 + shown.offset_ms - painted["clickEpoch"]
        for stamp in (watcher.ended[runs - 1], watcher.requested[requests])
    )
    await settle(page, watcher, runs, TIMEOUT_S)
    return max(painted["ms"], ended), painted["ms"], ended, requested


def _order(i: int) -> tuple[str, ...]:
    return APPS if i % 2 == 0 else APPS[::-1]


async def _measure(browser: Any, apps: dict[str, servers.Server], size: Size, clicks: int):
    """Timed clicks at one size, alternating apps: (both, repaint, run end, request) ms per
    click (see `_click`), the heatmap counts after the warm-up and after the last click, and
    the runs seen, by app."""
    shown: dict[str, _Page] = {}
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in APPS}
    counts: dict[str, list[tuple[int, int]]] = {name: [] for name in APPS}
    first, second = size.heads_clicked()
    try:
        for name in APPS:
            query = size.attnviz if name == "attnviz" else size.floor
            shown[name] = await _open(browser, f"{apps[name].url}/?{query}")
        for i in range(clicks + 1):  # click 0 is the untimed warm-up
            index = second if i % 2 else first
            for name in _order(i):
                result = await _click(shown[name], index, size.title(index))
                if i:
                    times[name].append(result)
                else:
                    counts[name].append(await _count(shown[name].page))
        for name in APPS:
            counts[name].append(await _count(shown[name].page))
        runs = {name: (s.watcher.finished, s.watcher.other, s.watcher.exceptions)
                for name, s in shown.items()}  # fmt: skip
    finally:
        for page in shown.values():
            await close_page(page.page)
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
    trouble = {name: r for name, r in runs.items() if r[1] or r[2]}
    note = (
        f"{warning}median of {n} clicks each (cross head map, two heads in turn), each to the "
        f"later of the enlarged head's repaint and the run's end; medians from the release to "
        f"the rerun request / run end / repaint: attnviz {_steps(medians['attnviz'])}, floor "
        f"{_steps(medians[APPS[1]])} (attnviz's run ended after its repaint in {later} of {n}); "
        f"range {spread}; heatmap charts/traces: attnviz "
        f"{seen['attnviz']}, floor {seen[APPS[1]]}; target: within {TARGET}× the floor, which "
        "draws the same heatmaps but no summaries, tables, line view or other widgets"
        + (f"; runs not successful / tracebacks: {trouble}" if trouble else "")
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

    from report import table

    print(table("Model view", run(quick="--quick" in sys.argv)))
