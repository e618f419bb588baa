"""App: cold start and click-to-repaint in headless Chromium, attnviz beside the floor app.

Shape letters: N tokens (T = S = N), Dk = Dv = 64.

Both apps show random N × 64 Q, K, V (the same numbers: the same seed and draw). attnviz is
opened at `/matrices?source=Random&r_t=N&r_s=N&r_dk=64&r_dv=64` (Heatmaps tab), the
floor (bench/floor_app.py) at `/?r_t=N`. Every measurement alternates between the two apps.

- Cold start: from launching `streamlit run` until the first plotly heatmap is painted in a
  fresh browser context, at N = 16. The browser is already running; the server is stopped
  after each start.
- Click to repaint: click the "Causal (look-ahead) mask" toggle; time from the click until the
  "Attention weights" heatmap is painted with the new weights (`pages.timed_toggle`). Clicks
  alternate on / off; after each, the run must have finished (the server's `script_finished`
  message) and the page be idle before the next click. The charts on each page are counted in
  both states and printed: the floor must draw as many as attnviz. One untimed warm-up click per
  page first.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.pages import (
    FIRST_HEATMAP,
    RunWatcher,
    chart_titles,
    close_page,
    launch_browser,
    new_page,
    open_settled,
    settle,
    timed_toggle,
)
from bench.report import SIZES, Figure, failed, progress
from deploy import servers

CLICKS = {16: 10, 256: 10, 1024: 6, 4096: 4}  # timed clicks per app and size
QUICK_CLICKS = {16: 3, 256: 3, 1024: 2, 4096: 2}
COLD_STARTS, QUICK_COLD_STARTS = 5, 2
COLD_N = 16
TARGETS = {16: 1.25, 256: 1.25}  # most attnviz / floor ratio of the median click latency
MAX_4096_MS = 2000.0
MAX_COLD_S = 8.0
COLD_SLACK_S = 1.5  # most seconds a cold start may take beyond the floor's + TensorFlow's import
APPS = ("attnviz", "floor")


def url(server: servers.Server, n: int) -> str:
    """The page showing random N × 64 inputs, causal mask off."""
    if server.name == "attnviz":
        return f"{server.url}/matrices?source=Random&r_t={n}&r_s={n}&r_dk=64&r_dv=64"
    return f"{server.url}/?r_t={n}"


def round_order(i: int) -> tuple[str, ...]:
    """The apps in round `i`'s order: attnviz first in even rounds, the floor first in odd."""
    return APPS if i % 2 == 0 else APPS[::-1]


# Epoch milliseconds of the first animation frame showing the page's title and its causal toggle
# (the page is there to use), or null.
PAGE_SHOWN = """() => document.querySelector('h1') &&
  document.querySelector('[data-testid="stSidebar"] [role="switch"]')
  ? performance.timeOrigin + performance.now() : null"""


async def cold_start(browser: Any, name: str) -> tuple[float, float, float]:
    """Seconds from launch to the first painted heatmap, from launch to a healthy server, and
    from launch to the page's title and controls shown."""
    page = await new_page(browser)
    server = servers.start(name)
    try:
        servers.wait_healthy(server)
        await page.goto(url(server, COLD_N))
        shown = await page.wait_for_function(PAGE_SHOWN, polling="raf", timeout=120_000)
        visible = await shown.json_value() / 1000
        painted = await page.wait_for_function(FIRST_HEATMAP, polling="raf", timeout=120_000)
        first = await painted.json_value() / 1000
        return first - server.launched, server.healthy - server.launched, visible - server.launched
    finally:
        server.stop()
        await close_page(page)


def import_tensorflow() -> float:
    """Seconds a bare `python -c "import tensorflow"` takes, in a new process (as a server's
    first import would)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import tensorflow"], check=True,
                   env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})  # fmt: skip
    return time.perf_counter() - start


async def _cold_figures(browser: Any, quick: bool) -> list[Figure]:
    first: dict[str, list[float]] = {name: [] for name in APPS}
    healthy: dict[str, list[float]] = {name: [] for name in APPS}
    shown: dict[str, list[float]] = {name: [] for name in APPS}
    imports: list[float] = []
    for i in range(QUICK_COLD_STARTS if quick else COLD_STARTS):
        for name in round_order(i):
            seconds, up, visible = await cold_start(browser, name)
            first[name].append(seconds)
            healthy[name].append(up)
            shown[name].append(visible)
        imports.append(import_tensorflow())
    ours, floor = (statistics.median(first[name]) for name in APPS)
    bare = statistics.median(imports)
    allowed = floor + bare + COLD_SLACK_S
    page_ours, page_floor = (statistics.median(shown[name]) for name in APPS)
    up = {name: statistics.median(healthy[name]) for name in APPS}
    note = (
        f"median of {len(first['attnviz'])} starts each, alternating; server healthy after "
        f"{up['attnviz']:.1f} s (attnviz) / {up['floor']:.1f} s (floor); attnviz starts "
        "importing TensorFlow once the first page has drawn its controls "
        "(attnviz/ui/app/warmup.py)"
    )
    return [
        Figure(f"cold start to first heatmap (N={COLD_N})", ours, "floor", floor, "s",
               f"< {MAX_COLD_S:.0f} s and ≤ 1.5× floor",
               ours < MAX_COLD_S and ours <= 1.5 * floor, note),
        Figure("cold start to page and controls shown", page_ours, "floor", page_floor, "s",
               "≤ floor + 1 s", page_ours <= page_floor + 1.0,
               "launch to the first frame with the title and the sidebar's causal toggle"),
        Figure("cold start to first heatmap vs floor + import tensorflow", ours,
               "floor + import tensorflow", floor + bare, "s",
               f"≤ floor + import tensorflow + {COLD_SLACK_S} s", ours <= allowed,
               f"floor {floor:.2f} s + a bare `python -c \"import tensorflow\"` {bare:.2f} s "
               f"(median of {len(imports)}, {min(imports):.2f}–{max(imports):.2f} s, one after "
               f"each round of starts); allowed {allowed:.2f} s"),
    ]  # fmt: skip


async def _clicks(browser: Any, apps: dict[str, servers.Server], n: int, clicks: int) -> dict:
    """Timed toggle clicks at size `n`, alternating apps: milliseconds, and the number of
    charts with the mask off and on, by app."""
    pages: dict[str, tuple[Any, RunWatcher]] = {}
    times: dict[str, list[float]] = {name: [] for name in APPS}
    charts: dict[str, list[int]] = {name: [0, 0] for name in APPS}  # [off, on]
    try:
        for name in APPS:
            pages[name] = await open_settled(browser, url(apps[name], n))
            charts[name][0] = len(await chart_titles(pages[name][0]))
        for i in range(clicks + 1):  # click 0 is the untimed warm-up
            for name in round_order(i):
                page, watcher = pages[name]
                runs = watcher.finished + 1
                elapsed = await timed_toggle(page)
                charts[name][(i + 1) % 2] = await settle(page, watcher, runs)
                if i:
                    times[name].append(elapsed)
    finally:
        for page, _ in pages.values():
            await close_page(page)
    return {"times": times, "charts": charts}


def _click_figure(n: int, result: dict) -> Figure:
    times = result["times"]
    ours, floor = (statistics.median(times[name]) for name in APPS)
    target = _click_target(n)
    met = None
    if n in TARGETS:
        met = ours <= TARGETS[n] * floor
    elif n == 4096:
        met = ours < MAX_4096_MS
    spread = ", ".join(f"{name} {min(times[name]):.0f}–{max(times[name]):.0f} ms" for name in APPS)
    counts = {name: "/".join(map(str, result["charts"][name])) for name in APPS}
    warning = "" if counts["attnviz"] == counts["floor"] else "WARNING: chart counts differ. "
    note = (
        f"{warning}median of {len(times['attnviz'])} clicks each (on/off alternating); range "
        f"{spread}; charts with the mask off/on: attnviz {counts['attnviz']}, floor "
        f"{counts['floor']}"
    )
    return Figure(f"click causal → weights repainted, N={n:,}", ours, "floor", floor, "ms",
                  target, met, note)  # fmt: skip


async def _guarded(name: str, target: str, measure: Callable[[], Awaitable]) -> list[Figure]:
    """Await `measure()` (figures); on failure, one failed row instead."""
    progress(name)
    try:
        return await measure()
    except Exception as error:  # noqa: BLE001 - one failed figure must not hide the others
        return [failed(name, target, error)]


async def _click_figures_retried(browser: Any, apps: dict, n: int, clicks: int) -> list[Figure]:
    """The click figure at size `n`; if a server was stopped from outside meanwhile (another
    program on a shared machine), restart it and measure the size once more, and say so."""
    try:
        return await _click_figures(browser, apps, n, clicks)
    except Exception:
        dead = [name for name, server in apps.items() if server.died()]
        if not dead:
            raise
    for name in dead:
        apps[name] = servers.launch(name)
    figure = (await _click_figures(browser, apps, n, clicks))[0]
    note = f"{' and '.join(dead)} server stopped from outside; restarted and measured again. "
    return [dataclasses.replace(figure, note=note + figure.note)]


def _click_target(n: int) -> str:
    if n in TARGETS:
        return f"≤ {TARGETS[n]:.2f}× floor"
    return f"< {MAX_4096_MS / 1000:.0f} s" if n == 4096 else ""


async def _click_figures(browser: Any, apps: dict, n: int, clicks: int) -> list[Figure]:
    return [_click_figure(n, await _clicks(browser, apps, n, clicks))]


async def run(
    quick: bool = False, sizes: tuple[int, ...] = SIZES, cold: bool = True
) -> list[Figure]:
    """Cold starts first (nothing else running), then the click latencies at every size."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await launch_browser(playwright)
        try:
            figures = []
            if cold:
                name = f"cold start to first heatmap (N={COLD_N})"
                starts = functools.partial(_cold_figures, browser, quick)
                figures += await _guarded(name, f"< {MAX_COLD_S:.0f} s", starts)
            apps = {name: servers.launch(name) for name in APPS}
            clicks = QUICK_CLICKS if quick else CLICKS
            for n in sizes:
                name = f"click causal → weights repainted, N={n:,}"
                measure = functools.partial(_click_figures_retried, browser, apps, n, clicks[n])
                figures += await _guarded(name, _click_target(n), measure)
            return figures
        finally:
            servers.stop_all()
            await browser.close()
