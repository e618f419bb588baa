"""Memory: the server's resident memory (RSS) over many reruns with changing sizes.

One browser page per app drives reruns through the widgets, as a user would: attnviz cycles
"Queries T", "Keys S" (through 8, 16, 32, 64, 128) and the causal toggle; the floor app, which
has one size, cycles "Queries T" and the causal toggle. The two apps are driven side by side.

Every action is one rerun: the next action waits for the server's `script_finished` message of
the previous run on the page's websocket, so only whole, successful runs are counted. The
server does all its usual work (attention, figures, sending them), but the pages do not draw
the charts: their plotly bundle is blocked. Drawing is what the app section measures; here it
would only slow the reruns down about threefold on a 2-core machine.

RSS is read from /proc/<pid>/status after every 50 reruns, each time after 2 s of rest. The
figure is the growth from rerun 50 (after warm-up: first-use allocations, Streamlit's caches
filling) to rerun 500: what a leak (retraced functions, a cache without bound) would show. The
note lists every reading, so a steady climb shows even when it stays under the target.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bench.pages import CAUSAL, RunWatcher, close_page, launch_browser, new_page, toggle
from bench.report import Figure, failed, progress
from deploy import servers

SIZES = (8, 16, 32, 64, 128)
RERUNS, QUICK_RERUNS = 500, 60
WARMUP = 50
QUICK_WARMUP = 20
MAX_GROWTH_MB = 50.0
REST_S = 2.0


def actions(name: str, count: int) -> list[tuple[str, int]]:
    """The widget actions, in order: ("Queries T", 8), ("Keys S", 8), ("causal", 0), ..."""
    labels = ("Queries T", "Keys S", "causal") if name == "attnviz" else ("Queries T", "causal")
    steps = []
    for i in range(count):
        label = labels[i % len(labels)]
        steps.append((label, SIZES[(i // len(labels)) % len(SIZES)]))
    return steps


def url(server: servers.Server) -> str:
    """Start at T = S = 128, so the first action (T = 8) changes the size."""
    if server.name == "attnviz":
        return f"{server.url}/matrices?source=Random&r_t=128&r_s=128&r_dk=64&r_dv=64"
    return f"{server.url}/?r_t=128"


async def rerun(page: Any, watcher: RunWatcher, label: str, value: int) -> None:
    """One widget action; returns when the run it started has finished."""
    done = watcher.finished + 1
    if label == "causal":
        await toggle(page, CAUSAL)
    else:
        field = page.get_by_label(label, exact=True)
        await field.fill(str(value))
        await field.press("Enter")
    await watcher.wait_for(done)


async def _drive(page: Any, watcher: RunWatcher, steps: list[tuple[str, int]]) -> None:
    for label, value in steps:
        await rerun(page, watcher, label, value)


async def _open(browser: Any, server: servers.Server) -> tuple[Any, RunWatcher]:
    page = await new_page(browser)
    await page.route("**/PlotlyChart.*.js", lambda route: route.abort())  # no chart drawing
    watcher = RunWatcher(page)
    await page.goto(url(server))
    await watcher.wait_for(1)
    return page, watcher


async def _measure(browser: Any, quick: bool) -> dict[str, dict[str, Any]]:
    """Drive both apps in blocks of `warmup` reruns; RSS after each block (after a rest)."""
    apps = {name: servers.launch(name) for name in ("attnviz", "floor")}
    total, warmup = (QUICK_RERUNS, QUICK_WARMUP) if quick else (RERUNS, WARMUP)
    pages = {name: await _open(browser, server) for name, server in apps.items()}
    steps = {name: actions(name, total) for name in apps}
    rss: dict[str, dict[str, Any]] = {
        n: {"start": s.rss_mb(), "trace": []} for n, s in apps.items()
    }
    start = time.monotonic()
    for first in range(0, total, warmup):
        last = min(first + warmup, total)
        await asyncio.gather(*(_drive(*pages[n], steps[n][first:last]) for n in apps))
        await asyncio.sleep(REST_S)
        for name, server in apps.items():
            rss[name]["trace"].append(server.rss_mb())
        progress(f"memory: {last} reruns each after {time.monotonic() - start:.0f} s")
    for name, server in apps.items():
        page, watcher = pages[name]
        trace = rss[name]["trace"]
        rss[name].update(warm=trace[0], end=trace[-1], peak=server.peak_rss_mb())
        rss[name].update(seconds=time.monotonic() - start, runs=watcher.finished)
        rss[name].update(other=watcher.other, errors=watcher.exceptions)
        await close_page(page)
    return rss


async def run(quick: bool = False) -> list[Figure]:
    """RSS growth of attnviz beside the floor app's, over the same number of reruns."""
    from playwright.async_api import async_playwright

    total, warmup = (QUICK_RERUNS, QUICK_WARMUP) if quick else (RERUNS, WARMUP)
    name = f"RSS growth, rerun {warmup} → {total}"
    async with async_playwright() as playwright:
        browser = await launch_browser(playwright)
        try:
            rss = await _measure(browser, quick)
        except Exception as error:  # noqa: BLE001 - report it as a failed figure
            dead = servers.died()
            if dead:
                error = RuntimeError(f"{', '.join(dead)} server stopped from outside: {error}")
            return [failed(name, f"< {MAX_GROWTH_MB:.0f} MB", error)]
        finally:
            servers.stop_all()
            await browser.close()
    ours, floor = (rss[n]["end"] - rss[n]["warm"] for n in ("attnviz", "floor"))
    a, f = rss["attnviz"], rss["floor"]
    trace = " ".join(f"{mb:.0f}" for mb in a["trace"])
    note = (
        f"RSS at start {a['start']:.0f} MB, then every {warmup} reruns: {trace} MB (peak "
        f"{a['peak']:.0f}); floor {f['start']:.0f} → {f['warm']:.0f} → {f['end']:.0f} MB; "
        f"{a['seconds']:.0f} s of browser-driven reruns (sizes 8–128, causal on/off); finished "
        f"runs incl. first load: attnviz {a['runs']:.0f}, floor {f['runs']:.0f}; other run ends "
        f"{a['other'] + f['other']:.0f}, tracebacks {a['errors'] + f['errors']:.0f}"
    )
    return [
        Figure(name, ours, "floor", floor, "MB", f"< {MAX_GROWTH_MB:.0f} MB",
               ours < MAX_GROWTH_MB, note, compare=False),
        Figure(f"RSS after {total} reruns", a["end"], "floor", f["end"], "MB", "", None),
    ]  # fmt: skip
