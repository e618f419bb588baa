"""Learn in the app: other sessions while one trains, and switching shipped checkpoints.

Shape letters: N = 16 tokens, D = 64 features.

One attnviz server, headless Chromium, one browser context (a Streamlit session) per page:
- idle: page A (`/matrices`, random 16 × 64, as the app section) clicks the causal mask; the time
  from the click to the repainted weights heatmap (measured in the page, as `app_bench` does);
- while training: page B opens `/learn` and presses Train (dates, 10,000 pairs, up to 30 epochs);
  while its run trains, page A clicks again. Baseline: the idle clicks of the same run;
- checkpoint switch: page C opens `/learn` on the shipped dates models and switches the score
  function (dot ↔ general): the time from the click to the repainted output × input heatmap.
  Baseline: page A's idle mask click (a plain Matrices repaint).
"""

from __future__ import annotations

import asyncio
import statistics
from typing import Any

from bench.pages import (
    ARM,
    WAIT_REPAINT,
    RunWatcher,
    close_page,
    launch_browser,
    open_settled,
    settle,
    signature,
    timed_toggle,
)
from bench.report import Figure, progress
from deploy import servers

N = 16
CLICKS, QUICK_CLICKS = 12, 4
TRANSLATION = "Attention: output × input"
LEARN = "learn?task=Dates+%E2%86%92+ISO+8601"  # the dates task, by its title as the URL holds it
TRAIN = LEARN + "&learn_model=Train&learn_epochs=30&learn_pairs=10000"


async def _clicks(page: Any, watcher: RunWatcher, count: int) -> list[float]:
    """`count` timed causal-mask clicks on the Matrices page (milliseconds each)."""
    times = []
    for _ in range(count):
        runs = watcher.finished + 1
        times.append(await timed_toggle(page))
        await settle(page, watcher, runs)
    return times


async def _switch(page: Any, watcher: RunWatcher, score: str) -> float:
    """Click the score radio `score`; milliseconds until the translation heatmap repaints."""
    before = await signature(page, TRANSLATION)
    runs = watcher.finished + 1
    await page.evaluate(ARM)
    radio = page.get_by_role("radio", name=score, exact=True)
    await page.locator("label").filter(has=radio).click()
    args = {"title": TRANSLATION, "before": before, "timeoutMs": 120_000}
    elapsed = await page.evaluate(WAIT_REPAINT, args)
    if elapsed < 0:
        raise RuntimeError(f"switching to {score}: no repaint of {TRANSLATION!r}")
    await settle(page, watcher, runs)
    return float(elapsed)


async def _measure(browser: Any, server: servers.Server, clicks: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    matrices = f"{server.url}/matrices?source=Random&r_t={N}&r_s={N}&r_dk=64&r_dv=64"
    page_a, watch_a = await open_settled(browser, matrices)
    page_b, watch_b = await open_settled(browser, f"{server.url}/{TRAIN}")
    page_c, watch_c = await open_settled(browser, f"{server.url}/{LEARN}")
    try:
        await _clicks(page_a, watch_a, 1)  # warm-up
        progress("idle mask clicks")
        times["idle"] = await _clicks(page_a, watch_a, clicks)
        progress("checkpoint switches")
        times["switch"] = [
            await _switch(page_c, watch_c, ("general", "dot")[i % 2]) for i in range(clicks)
        ]
        await page_b.get_by_role("button", name="Train").click()
        await page_b.get_by_text("Training: epoch").wait_for(timeout=120_000)
        progress("mask clicks while another session trains")
        times["training"] = await _clicks(page_a, watch_a, clicks)
        still = await page_b.get_by_text("Training: epoch").count()
        times["trained_throughout"] = [float(still)]
        await page_b.get_by_role("button", name="Stop").click()
    finally:
        for page in (page_a, page_b, page_c):
            await close_page(page)
    return times


async def run_async(quick: bool) -> list[Figure]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await launch_browser(playwright)
        server = servers.launch("attnviz")
        try:
            times = await _measure(browser, server, QUICK_CLICKS if quick else CLICKS)
        finally:
            server.stop()
            await browser.close()
    idle = statistics.median(times["idle"])
    training = statistics.median(times["training"])
    switch = statistics.median(times["switch"])
    note = "" if times["trained_throughout"][0] else "training ended before the last click"
    return [
        Figure(
            f"mask click, N={N}, while another session trains", training,
            "the same click, idle", idle, "ms", "< 1,000 ms", training < 1000,
            note=f"{len(times['training'])} clicks; max {max(times['training']):.0f} ms. {note}",
        ),
        Figure(
            "Learn: switch shipped checkpoint (dot ↔ general) → heatmap", switch,
            f"mask click, N={N}, idle", idle, "ms", "", None,
            note=f"{len(times['switch'])} switches",
        ),
    ]  # fmt: skip


def run(quick: bool = False) -> list[Figure]:
    return asyncio.run(run_async(quick))


if __name__ == "__main__":
    from bench.report import table

    print(table("Learn in the app", run(quick=False)))
