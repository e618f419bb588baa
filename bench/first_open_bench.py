"""First open: each page's first visit after the server's warm-up, until all its charts are
painted, attnviz beside a floor page drawing the same heatmaps.

Shape letters: T rows, S columns of one heatmap.

A round starts an attnviz server and waits for its warm-up to end (the server logs
`WARMED_UP` when `attnviz/ui/warmup.py` is done); then it opens each page of `PAGES` once, in
order, each in a new tab (a new Streamlit session), so every visit is the first of its page and
state on that server. The tabs share one browser whose HTTP cache already holds the app's
scripts (an untimed visit to another server on the same port first), as a student's browser
that has opened the app before: the figures are the server's and the page's work, not the
download of Streamlit's JavaScript. The time runs from the start of the navigation
(`performance.timeOrigin`) to the later of two ends, both stamped in the page:
the first animation frame since which every plotly chart on the page is drawn (each heatmap
with its image) and stays drawn, and the last successful `script_finished` on the page's
websocket. The page must then be idle and stay so for `QUIET_S`.

The floor (`bench/floor_charts.py`) then draws the same charts in a new tab of the same browser,
from its own server: as many charts, each with as many heatmap traces of the same T × S (random
numbers, no TensorFlow, no labels or widgets). Its server runs from the start of the section.
Target: every first open within `TARGET_S`.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass
from typing import Any

from attnviz.ui.warmup import FINISHED as WARMED_UP  # the server's log line after its warm-up
from bench.pages import IDLE, VIEWPORT, RunWatcher, launch_browser, stamp_runs
from bench.report import Figure, failed, progress
from deploy import servers

TARGET_S = 1.5  # most seconds from opening a page to all its charts painted
ROUNDS, QUICK_ROUNDS = 3, 1  # servers started, each visiting every page once
QUIET_S = 1.0  # the page must stay idle and drawn this long to count as done
TIMEOUT_S = 120.0  # most time a page may take
WARM_UP_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Page:
    """One page (and state) opened by a new visitor."""

    label: str  # what the report calls it
    path: str  # the URL path and query, e.g. "multihead?mh_weights=Trained+on+dates"


PAGES = (
    Page("Start", ""),
    Page("Matrices", "matrices"),
    Page("Sentences", "sentences"),
    Page("Cross", "cross"),
    Page("Multi-head", "multihead"),
    Page("Multi-head, trained on dates", "multihead?mh_weights=Trained+on+dates"),
    Page("Multi-head, trained on reverse", "multihead?mh_weights=Trained+on+reverse"),
    Page("Decoder", "decoder"),
    Page("Decoder model view, 12 × 16 heads", "decoder?dec_view=Model+view&dec_n=12&dec_h=16"),
    Page("Learn", "learn"),
    Page("Learn: compare scores", "learn?learn_view=Compare+scores"),
    Page("Learn: Transformer model view", "learn?learn_arch=Transformer&learn_tview=Model+view"),
)

# Run before the page's own scripts: `window.__painted.since` is the performance.now() of the
# first animation frame since which every plotly chart element holds a drawn plot with an image
# in each subplot holding heatmaps (null while any is not drawn).
TRACK_PAINT = """(() => {
  window.__painted = {since: null};
  const drawn = () => {
    const boxes = document.querySelectorAll('[data-testid="stPlotlyChart"]');
    if (!boxes.length) return false;
    for (const box of boxes) {
      const div = box.querySelector('.js-plotly-plot');
      if (!div || !div._fullData) return false;
      const subplots = new Set(div._fullData.filter((t) => t.type === 'heatmap')
        .map((t) => `${t.xaxis}${t.yaxis}`));  // each has an image once drawn
      if (div.querySelectorAll('.heatmaplayer image').length < subplots.size) return false;
    }
    return true;
  };
  const tick = () => {
    if (!drawn()) window.__painted.since = null;
    else if (window.__painted.since === null) window.__painted.since = performance.now();
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})()"""

# [ms to the first frame of the drawn state, ms to the last successful run end, ms to the first
# rerun request sent] (null where there is none), from the start of the navigation.
READINGS = """() => [window.__painted.since, window.__runs.ended.at(-1) ?? null,
  window.__runs.requested[0] ?? null]"""

# Per plotly chart holding heatmaps: "traces.T.S" (T × S of its first heatmap), in page order.
CHART_SPEC = """() => Array.from(document.querySelectorAll('.js-plotly-plot'), (div) => {
  const heatmaps = (div._fullData || []).filter((t) => t.type === 'heatmap');
  if (!heatmaps.length) return null;
  const z = heatmaps[0].z || [[0]];
  return `${heatmaps.length}.${Math.max(1, z.length)}.${Math.max(1, (z[0] || [0]).length)}`;
}).filter((spec) => spec !== null)"""


@dataclass(frozen=True)
class Visit:
    """What one first visit took and showed."""

    seconds: float  # navigation start to the later of all charts painted and the run's end
    painted: float  # navigation start to all charts painted, s
    ended: float  # navigation start to the last successful run end, s
    server: float  # the page's first rerun request to the last run's end: the server's part, s
    spec: tuple[str, ...]  # its heatmap charts, "traces.T.S" each
    problems: tuple[str, ...] = ()  # tracebacks or runs that ended otherwise


async def visit(context: Any, url: str) -> Visit:
    """Open `url` in a new tab of `context` (a new session); wait until its charts are drawn
    and the page stays idle."""
    page = await context.new_page()
    await page.add_init_script(stamp_runs())
    await page.add_init_script(TRACK_PAINT)
    watcher = RunWatcher(page)
    try:
        await page.goto(url)
        deadline = time.monotonic() + TIMEOUT_S
        await watcher.wait_for(1, TIMEOUT_S)
        while True:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url}: not drawn and idle within {TIMEOUT_S:.0f} s")
            before = await page.evaluate(READINGS)
            idle = await page.evaluate(IDLE)
            if idle and before[0] is not None and before[1] is not None:
                await asyncio.sleep(QUIET_S)
                after = await page.evaluate(READINGS)
                if after == before and await page.evaluate(IDLE):
                    break
            else:
                await asyncio.sleep(0.05)
        painted, ended, requested = before
        spec = tuple(await page.evaluate(CHART_SPEC))
        problems = [f"{watcher.exceptions} traceback(s)"] if watcher.exceptions else []
        problems += [f"{watcher.other} run(s) ended otherwise"] if watcher.other else []
        server = (ended - requested) / 1000 if requested is not None else float("nan")
        return Visit(max(painted, ended) / 1000, painted / 1000, ended / 1000, server, spec,
                     tuple(problems))  # fmt: skip
    finally:
        await page.close()


def wait_warmed_up(server: servers.Server) -> float:
    """Wait for the server's warm-up to end (its log line); seconds from launch."""
    deadline = time.monotonic() + WARM_UP_TIMEOUT_S
    while time.monotonic() < deadline:
        if WARMED_UP in server.log.read_text(errors="replace"):
            return time.time() - server.launched
        if server.died():
            break
        time.sleep(0.1)
    tail = server.log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"no {WARMED_UP!r} in the server's log; it ends:\n{tail}")


async def _round(context: Any, port: int, floor: servers.Server, visits: dict,
                 floors: dict) -> float:  # fmt: skip
    """One attnviz server on `port`: every page's first visit, each followed by the floor's;
    returns the warm-up's seconds from launch."""
    server = servers.wait_healthy(servers.start("attnviz", port))
    try:
        warm = await asyncio.to_thread(wait_warmed_up, server)
        for page in PAGES:
            progress(f"first open: {page.label}")
            seen = await visit(context, f"{server.url}/{page.path}")
            visits.setdefault(page.label, []).append(seen)
            spec = ",".join(seen.spec) or "1.1.1"
            floors.setdefault(page.label, []).append(
                await visit(context, f"{floor.url}/?spec={spec}")
            )
        return warm
    finally:
        server.stop()


async def _fill_cache(context: Any, port: int, floor: servers.Server) -> None:
    """Untimed: each app's scripts into the browser's cache (attnviz from a server on `port`
    that is stopped after)."""
    server = servers.wait_healthy(servers.start("attnviz", port))
    try:
        await visit(context, f"{server.url}/matrices")
        await visit(context, f"{floor.url}/?spec=1.16.16")
    finally:
        server.stop()


def _figure(page: Page, visits: list[Visit], floors: list[Visit], warm: list[float]) -> Figure:
    ours = statistics.median(v.seconds for v in visits)
    floor = statistics.median(v.seconds for v in floors)
    charts = sorted({len(v.spec) for v in visits})
    heatmaps = sorted({sum(int(s.split(".")[0]) for s in v.spec) for v in visits})
    problems = sorted({p for v in visits for p in v.problems})
    note = (
        f"{len(visits)} first visit(s) (one per server, after its warm-up: {_seconds(warm)} from "
        f"launch); attnviz {_seconds([v.seconds for v in visits])} (charts painted "
        f"{_seconds([v.painted for v in visits])}, run ended {_seconds([v.ended for v in visits])};"
        f" the server's part, request to run end: {_seconds([v.server for v in visits])}); "
        f"{'/'.join(map(str, charts))} heatmap charts, {'/'.join(map(str, heatmaps))} heatmaps, "
        "drawn by the floor too" + (f"; WARNING: {', '.join(problems)}" if problems else "")
    )
    return Figure(f"first open: {page.label}", ours, "floor", floor, "s", f"< {TARGET_S} s",
                  ours < TARGET_S, note)  # fmt: skip


def _seconds(values: list[float]) -> str:
    """ "0.41, 0.52 s"."""
    return ", ".join(f"{v:.2f}" for v in values) + " s"


async def run_async(quick: bool) -> list[Figure]:
    from playwright.async_api import async_playwright

    visits: dict[str, list[Visit]] = {}
    floors: dict[str, list[Visit]] = {}
    warm: list[float] = []
    async with async_playwright() as playwright:
        browser = await launch_browser(playwright)
        context = await browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(TIMEOUT_S * 1000)
        try:
            port, floor = servers.free_port(), servers.launch("floor-charts")
            await _fill_cache(context, port, floor)
            for _ in range(QUICK_ROUNDS if quick else ROUNDS):
                warm.append(await _round(context, port, floor, visits, floors))
        except Exception as error:  # noqa: BLE001 - the pages measured so far still count
            if not visits:
                return [failed("first open", f"< {TARGET_S} s", error)]
            progress(f"first open stopped early: {type(error).__name__}: {error}")
        finally:
            servers.stop_all()
            await browser.close()
    return [
        _figure(page, visits[page.label], floors[page.label], warm)
        for page in PAGES
        if page.label in visits and page.label in floors
    ]


def run(quick: bool = False) -> list[Figure]:
    """Every page's first-open figure (attnviz beside the floor)."""
    return asyncio.run(run_async(quick))
