"""First open: each page's first visit after the server's warm-up, until all its charts are
painted, attnviz beside a floor page drawing as many charts of the same heatmaps.

Shape letters: T rows, S columns of one heatmap.

A round starts an attnviz server and waits for its warm-up to end (the server logs
`WARMED_UP` when `attnviz/ui/app/warmup.py` is done); then it opens each page of `PAGES` once, in
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
from its own server: as many charts, each with as many heatmap traces of the same T × S, and for
each of the page's charts without heatmaps (curves, bars) a chart of as many lines of as many
points (random numbers, no TensorFlow, no labels or widgets). Its server runs from the start of
the section. Target: every first open within `RATIO` × the floor's new-tab open of the same
charts, in the same round. The pages are the explorer's (`PAGES`) and every lesson that draws
charts (`LESSON_PAGES`: lesson 9 draws none before its Train button is pressed).

Opened inside the app (`IN_APP`), as a class moves through it: a second server per round, after
its warm-up, and one tab that opens the start page and follows its link to each page (an
in-app navigation: no page load, the same websocket), or clicks a control of the page it is on
(a view first shown: "Trained on dates", the model view, a tab). The time runs from the click
(stamped by the page) to the later of all charts painted and the last run's end. The floor
follows its start page's one link to the same charts (`floor_charts.py`'s `/start`). The walk
ends with a lesson's **Next**, lesson after lesson (`LESSON_STEPS`), each beside the floor's
page switch to the same charts. Target: within `RATIO` × the floor's.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass
from typing import Any

from attnviz.lessons import LESSONS
from attnviz.ui.app.warmup import FINISHED as WARMED_UP  # the server's log line after its warm-up
from bench.floor_charts import LINK
from bench.pages import IDLE, VIEWPORT, RunWatcher, launch_browser, settle, stamp_runs
from bench.report import Figure, failed, progress
from deploy import servers

RATIO = 1.3  # most times the floor's time (same charts, same round) a first open may take
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
    Page("Language model", "language-model"),
)
NO_CHARTS = {9}  # lessons that draw no chart when opened (Learn, before Train is pressed)
LESSON_PAGES = tuple(
    Page(f"Lesson {lesson.number}", lesson.slug) for lesson in LESSONS
    if lesson.number not in NO_CHARTS
)  # fmt: skip

# Run before the page's own scripts: `window.__painted.since` is the performance.now() of the
# first animation frame since which the page shows the charts it shows now, every one drawn
# (an image in each subplot holding heatmaps); null while any is not drawn. A chart that is
# replaced or redrawn with other data starts the count again. `window.__painted.click` stamps
# the last click (capturing: before any handler runs).
TRACK_PAINT = """(() => {
  window.__painted = {since: null, shown: null, click: null};
  const ids = new WeakMap();
  let next = 0;
  const shown = () => {  // a key of the charts shown, or null while any is not drawn
    const boxes = document.querySelectorAll('[data-testid="stPlotlyChart"]');
    if (!boxes.length) return null;
    const keys = [];
    for (const box of boxes) {
      const div = box.querySelector('.js-plotly-plot');
      if (!div || !div._fullData) return null;
      const heatmaps = div._fullData.filter((t) => t.type === 'heatmap');
      const subplots = new Set(heatmaps.map((t) => `${t.xaxis}${t.yaxis}`));
      if (div.querySelectorAll('.heatmaplayer image').length < subplots.size) return null;
      if (!ids.has(div)) ids.set(div, next++);
      const z = (heatmaps[0] || {}).z || [[null]];
      keys.push(`${ids.get(div)}:${div._fullData.length}:${z.length}:${(z[0] || [])[0]}`);
    }
    return keys.join(',');
  };
  const tick = () => {
    const key = shown();
    if (key !== window.__painted.shown) {
      window.__painted.shown = key;
      window.__painted.since = key === null ? null : performance.now();
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  document.addEventListener('click', () => { window.__painted.click = performance.now(); },
                            {capture: true});
})()"""

# [ms to the first frame of the drawn state, ms to the last successful run end, ms to the first
# rerun request sent since the last click (or since the start), ms to the last click] (null
# where there is none), from the start of the navigation.
READINGS = """() => { const click = window.__painted.click;
  return [window.__painted.since, window.__runs.ended.at(-1) ?? null,
          window.__runs.requested.find((t) => click === null || t >= click) ?? null, click]; }"""

# Per plotly chart, in page order: "traces.T.S" for one holding heatmaps (T × S of its first), or
# "0.K.P" for one without (curves, bars): K traces that hold points, P points in the longest.
CHART_SPEC = """() => Array.from(document.querySelectorAll('.js-plotly-plot'), (div) => {
  const data = div._fullData || [];
  const heatmaps = data.filter((t) => t.type === 'heatmap');
  if (!heatmaps.length) {
    const sizes = data.map((t) => Math.max((t.x || []).length, (t.y || []).length))
      .filter((n) => n > 0);
    return `0.${Math.max(1, sizes.length)}.${Math.max(1, ...sizes)}`;
  }
  const z = heatmaps[0].z || [[0]];
  return `${heatmaps.length}.${Math.max(1, z.length)}.${Math.max(1, (z[0] || [0]).length)}`;
})"""


@dataclass(frozen=True)
class Visit:
    """What one first visit took and showed."""

    seconds: float  # its start to the later of all charts painted and the run's end
    painted: float  # its start to all charts painted, s
    ended: float  # its start to the last successful run end, s
    server: float  # the page's first rerun request to the last run's end: the server's part, s
    spec: tuple[str, ...]  # its charts, "traces.T.S" each ("0.K.P": a chart of K lines)
    problems: tuple[str, ...] = ()  # tracebacks or runs that ended otherwise


async def visit(context: Any, url: str) -> Visit:
    """Open `url` in a new tab of `context` (a new session); wait until its charts are drawn
    and the page stays idle. Times from the start of the navigation."""
    page, watcher = await _tab(context)
    try:
        await page.goto(url)
        return await _drawn(page, watcher, 1, url)
    finally:
        await page.close()


async def _tab(context: Any) -> tuple[Any, RunWatcher]:
    """A new tab of `context` that stamps its runs, its charts' painting and its clicks."""
    page = await context.new_page()
    await page.add_init_script(stamp_runs())
    await page.add_init_script(TRACK_PAINT)
    return page, RunWatcher(page)


async def _drawn(page: Any, watcher: RunWatcher, runs: int, what: str) -> Visit:
    """Wait until `runs` runs have finished, the page's charts are drawn and it stays idle for
    `QUIET_S`; the times from the last click (or, with none, from the navigation's start)."""
    deadline = time.monotonic() + TIMEOUT_S
    await watcher.wait_for(runs, TIMEOUT_S)
    while True:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not drawn and idle within {TIMEOUT_S:.0f} s")
        before = await page.evaluate(READINGS)
        idle = await page.evaluate(IDLE)
        if idle and before[0] is not None and before[1] is not None:
            await asyncio.sleep(QUIET_S)
            after = await page.evaluate(READINGS)
            if after == before and await page.evaluate(IDLE):
                break
        else:
            await asyncio.sleep(0.05)
    painted, ended, requested, click = before
    start = click or 0.0
    if painted < start:
        raise RuntimeError(f"{what}: the charts did not change after the click")
    spec = tuple(await page.evaluate(CHART_SPEC))
    problems = [f"{watcher.exceptions} traceback(s)"] if watcher.exceptions else []
    problems += [f"{watcher.other} run(s) ended otherwise"] if watcher.other else []
    server = (ended - requested) / 1000 if requested is not None else float("nan")
    return Visit((max(painted, ended) - start) / 1000, (painted - start) / 1000,
                 (ended - start) / 1000, server, spec, tuple(problems))  # fmt: skip


@dataclass(frozen=True)
class InApp:
    """One page or view opened inside the app: the start page's link to a page, or a control
    clicked on the page the previous step opened."""

    label: str  # what the report calls it
    link: str | None  # the text of the start page's link to follow; None: stay on the page
    control: tuple[str, str] | None = None  # (ARIA role, name) of the control clicked there
    path: str | None = None  # a page opened first (untimed) to click the control on


IN_APP_KEY = "in the app: "  # the steps' figures, kept apart from the new tabs'
IN_APP = (
    InApp("Matrices", "Matrices"),
    InApp("Sentences", "Sentences"),
    InApp("Cross", "Cross (two sentences)"),
    InApp("Multi-head", "Multi-head"),
    InApp("Multi-head, trained on dates", None, ("radio", "Trained on dates")),
    InApp("Decoder", "Decoder"),
    InApp("Decoder model view", None, ("radio", "Model view")),
    InApp("Learn", "Learn"),
    InApp("Learn: compare scores", None, ("tab", "Compare scores")),
    InApp("Language model", "Language model"),
)
NEXT = "Next: "  # how a lesson's link to the next one begins (then the next one's title)
LESSON_STEPS = tuple(  # a lesson's Next to every lesson that draws charts, from the one before
    InApp(f"Next, lesson {before.number} → {after.number}", None, ("link", NEXT + after.title),
          path=before.slug if before.number == 1 or before.number in NO_CHARTS else None)
    for before, after in zip(LESSONS, LESSONS[1:], strict=False)
    if after.number not in NO_CHARTS
)  # fmt: skip


async def _click(page: Any, watcher: RunWatcher, role: str, name: str, what: str) -> Visit:
    """Click the main area's control `name` (of ARIA `role`) on a settled page; its charts,
    timed from the click. (A lesson's link's name also holds its arrow icon's text.)"""
    runs = watcher.finished
    main = page.locator('[data-testid="stMain"]')
    exact = not name.startswith(NEXT)
    await main.get_by_role(role, name=name, exact=exact).first.click()
    return await _drawn(page, watcher, runs + 1, what)


async def walk_in_app(context: Any, server: servers.Server, floor: servers.Server,
                      visits: dict, floors: dict) -> None:  # fmt: skip
    """Every `IN_APP` and `LESSON_STEPS` step on `server` in one tab, each followed by the
    floor's link to the same charts (in another tab)."""
    page, watcher = await _tab(context)
    floor_page, floor_watcher = await _tab(context)
    try:
        for step in IN_APP + LESSON_STEPS:
            progress(f"first open in the app: {step.label}")
            await page.bring_to_front()  # each tab is timed in front, as a user sees it (a
            # background tab's timers and frames may be throttled)
            if step.path is not None:  # untimed: the page to click on, settled
                runs = watcher.finished
                await page.goto(f"{server.url}/{step.path}")
                await settle(page, watcher, runs + 1, TIMEOUT_S)
                await asyncio.sleep(QUIET_S)
            if step.link is not None:
                runs = watcher.finished
                await page.goto(f"{server.url}/")  # untimed: the start page, settled
                await _drawn(page, watcher, runs + 1, f"{server.url}/")
                seen = await _click(page, watcher, "link", step.link, step.label)
            else:
                role, name = step.control
                seen = await _click(page, watcher, role, name, step.label)
            visits.setdefault(IN_APP_KEY + step.label, []).append(seen)
            runs = floor_watcher.finished
            await floor_page.bring_to_front()
            await floor_page.goto(f"{floor.url}/start?next={','.join(seen.spec) or '1.1.1'}")
            await settle(floor_page, floor_watcher, runs + 1, TIMEOUT_S)
            floors.setdefault(IN_APP_KEY + step.label, []).append(
                await _click(floor_page, floor_watcher, "link", LINK, f"floor: {step.label}")
            )
    finally:
        await page.close()
        await floor_page.close()


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
                 floors: dict) -> list[float]:  # fmt: skip
    """Two attnviz servers on `port`, one after the other: on the first, every page's first
    visit in a new tab, each followed by the floor's; on the second, the walk inside the app
    (`walk_in_app`). Returns each warm-up's seconds from launch."""
    warm = []
    server = servers.wait_healthy(servers.start("attnviz", port))
    try:
        warm.append(await asyncio.to_thread(wait_warmed_up, server))
        for page in PAGES + LESSON_PAGES:
            progress(f"first open: {page.label}")
            seen = await visit(context, f"{server.url}/{page.path}")
            visits.setdefault(page.label, []).append(seen)
            spec = ",".join(seen.spec) or "1.1.1"
            floors.setdefault(page.label, []).append(
                await visit(context, f"{floor.url}/?spec={spec}")
            )
    finally:
        server.stop()
    server = servers.wait_healthy(servers.start("attnviz", port))
    try:
        warm.append(await asyncio.to_thread(wait_warmed_up, server))
        await walk_in_app(context, server, floor, visits, floors)
    finally:
        server.stop()
    return warm


async def _fill_cache(context: Any, port: int, floor: servers.Server) -> None:
    """Untimed: each app's scripts into the browser's cache (attnviz from a server on `port`
    that is stopped after)."""
    server = servers.wait_healthy(servers.start("attnviz", port))
    try:
        await visit(context, f"{server.url}/matrices")
        await visit(context, f"{floor.url}/?spec=1.16.16")
    finally:
        server.stop()


def _figure(name: str, visits: list[Visit], floors: list[Visit], warm: list[float]) -> Figure:
    """The figure `name` from its visits (new tabs, or steps inside the app)."""
    ours = statistics.median(v.seconds for v in visits)
    floor = statistics.median(v.seconds for v in floors)
    charts = sorted({len(v.spec) for v in visits})
    lines = sorted({sum(s.startswith("0.") for s in v.spec) for v in visits})
    heatmaps = sorted({sum(int(s.split(".")[0]) for s in v.spec) for v in visits})
    problems = sorted({p for v in visits for p in v.problems})
    note = (
        f"{len(visits)} first open(s) (one per server, after its warm-up: {_seconds(warm)} from "
        f"launch); attnviz {_seconds([v.seconds for v in visits])} (charts painted "
        f"{_seconds([v.painted for v in visits])}, run ended {_seconds([v.ended for v in visits])};"
        f" the server's part, request to run end: {_seconds([v.server for v in visits])}); "
        f"{'/'.join(map(str, charts))} charts ({'/'.join(map(str, lines))} of lines or bars), "
        f"{'/'.join(map(str, heatmaps))} heatmaps, drawn by the floor too"
        + (f"; WARNING: {', '.join(problems)}" if problems else "")
    )
    return Figure(name, ours, "floor", floor, "s", f"≤ {RATIO}× floor",
                  ours <= RATIO * floor, note)  # fmt: skip


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
                warm += await _round(context, port, floor, visits, floors)
        except Exception as error:  # noqa: BLE001 - the pages measured so far still count
            if not visits:
                return [failed("first open", f"≤ {RATIO}× floor", error)]
            progress(f"first open stopped early: {type(error).__name__}: {error}")
        finally:
            servers.stop_all()
            await browser.close()
    names = [(f"first open: {page.label}", page.label) for page in PAGES + LESSON_PAGES]
    names += [(f"first open in the app: {step.label}", IN_APP_KEY + step.label)
              for step in IN_APP + LESSON_STEPS]  # fmt: skip
    return [
        _figure(name, visits[key], floors[key], warm)
        for name, key in names
        if key in visits and key in floors
    ]


def run(quick: bool = False) -> list[Figure]:
    """Every page's first-open figure (attnviz beside the floor)."""
    return asyncio.run(run_async(quick))
