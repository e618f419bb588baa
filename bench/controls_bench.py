"""Today's controls: a click on each new mask or position control of the explorer, until the
weights are repainted, beside the floor app's causal toggle at the same size.

Shape letters: N tokens (T = S = N), Dk = Dv = 64.

attnviz is opened at the app benchmark's random N × 64 page (`bench.app_bench.url`) with the
state each control needs, one page per control; the floor (bench/floor_app.py) at `/?r_t=N`.
Each timed action changes the weights and is stamped in the page when the browser dispatches
it (a click, or the Enter that submits a typed number or text), until the "Attention weights"
heatmap is painted with the new data (`bench.pages`). Actions alternate between two states:

- prefix-LM, local window, attention sinks (with a window of 4, which the sinks punch through)
  and chunked attention: the control's switch, on / off;
- packed documents: the lengths, "N/2, N/2" / "N/4, 3N/4", typed and submitted with Enter;
- RoPE θ: the base θ under RoPE, 500 / 10000, typed and submitted with Enter;
- RoPE and ALiBi: the position scheme's option, RoPE (or ALiBi) / None.

Each control is measured on its own pair of pages (one attnviz, one floor), its actions
alternating one for one with the floor's causal toggles, the order alternating, as the app
benchmark's clicks do, once attnviz's warm-up (`attnviz/ui/app/warmup.py`, started by the first
page drawn) has ended; the causal switch on attnviz's page is measured the same way, as the
reference (the app benchmark's click). After each action the run must have finished and the page
be idle. One untimed warm-up round first, then `ROUNDS` actions (`SMALL_ROUNDS` up to `SMALL_N`
tokens). Target: each control's median within 1.25× the floor's.
"""

from __future__ import annotations

import asyncio
import functools
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bench import app_bench
from bench.first_open_bench import wait_warmed_up
from bench.pages import (
    RunWatcher,
    close_page,
    launch_browser,
    open_settled,
    settle,
    timed_action,
    timed_toggle,
    toggle,
)
from bench.report import Figure, failed, progress
from deploy import servers

SIZES = (16, 256, 1024)
ROUNDS, QUICK_ROUNDS = 8, 3  # timed actions per control and app
SMALL_N, SMALL_ROUNDS = 64, 16  # up to SMALL_N tokens, 16 actions: a click there is short,
# and the median of 8 moved by up to 0.3x the floor's between two runs of the same commit
TARGET = 1.25  # most attnviz / floor ratio of the median latency


@dataclass(frozen=True)
class Control:
    """One control the benchmark drives: the page's extra URL state and its two actions."""

    name: str  # the table's name for it
    state: str  # URL fields added to the random page ("&prefix_on=true&prefix=4")
    act: Callable[[Any, int, int], Awaitable[None]]  # act(page, n, i): the i-th change


def _switch(label: str) -> Callable[[Any, int, int], Awaitable[None]]:
    async def act(page: Any, n: int, i: int) -> None:
        await toggle(page, label)

    return act


def _typed(label: str, values: Callable[[int], tuple[str, str]]):
    """Type one of two values into the field `label` and submit it with Enter."""

    async def act(page: Any, n: int, i: int) -> None:
        field = page.locator(f'[data-testid="stSidebar"] input[aria-label="{label}"]')
        await field.fill(values(n)[i % 2])
        await field.press("Enter")

    return act


def _option(label: str) -> Callable[[Any, int, int], Awaitable[None]]:
    """Click the position scheme's option `label`, then "None", and so on."""

    async def act(page: Any, n: int, i: int) -> None:
        name = label if i % 2 == 0 else "None"
        radio = page.get_by_role("radiogroup", name="Position scheme")
        await radio.locator("label").filter(has_text=name).first.click()

    return act


CONTROLS = (
    Control("causal switch (as before)", "", _switch("Causal (look-ahead) mask")),
    Control("prefix-LM switch", "&prefix=4", _switch("Prefix-LM (bidirectional prefix)")),
    Control("local window switch", "&window=4", _switch("Local window")),
    Control("attention sinks switch", "&window_on=true&window=4&sinks=2",
            _switch("Attention sinks")),
    Control("chunked attention switch", "&chunk=4", _switch("Chunked attention")),
    Control("packed documents (typed)", "",
            _typed("Packed documents (lengths)",
                   lambda n: (f"{n // 2}, {n - n // 2}", f"{n // 4}, {n - n // 4}"))),
    Control("RoPE θ (typed)", "&position=rope&rope_theta=10000",
            _typed("Base θ", lambda n: ("500", "10000"))),
    Control("RoPE option", "", _option("RoPE (rotary)")),
    Control("ALiBi option", "", _option("ALiBi (linear bias)")),
)  # fmt: skip


async def _measure(browser: Any, apps: dict, n: int, control: Control, rounds: int) -> dict:
    """Milliseconds of `control`'s actions and of the floor's causal toggles, alternating one
    for one as the app benchmark's clicks do, on one attnviz page and one floor page."""
    pages: dict[str, tuple[Any, RunWatcher]] = {}
    times: dict[str, list[float]] = {"floor": [], "attnviz": []}
    try:
        pages["floor"] = await open_settled(browser, app_bench.url(apps["floor"], n))
        address = app_bench.url(apps["attnviz"], n) + control.state
        pages["attnviz"] = await open_settled(browser, address)
        for i in range(rounds + 1):  # round 0 is the untimed warm-up
            for name in app_bench.round_order(i):
                page, watcher = pages[name]
                runs = watcher.finished + 1
                if name == "floor":
                    elapsed = await timed_toggle(page)
                else:
                    action = functools.partial(control.act, page, n, i)
                    elapsed = await timed_action(page, action, control.name)
                await settle(page, watcher, runs)
                if watcher.exceptions:
                    raise RuntimeError(f"{control.name} at N={n}: the page showed a traceback")
                if i:
                    times[name].append(elapsed)
    finally:
        for page, _ in pages.values():
            await close_page(page)
    return times


def _figure(n: int, control: Control, times: dict[str, list[float]]) -> Figure:
    ours, floor = (statistics.median(times[name]) for name in ("attnviz", "floor"))
    spread = ", ".join(f"{name} {min(times[name]):.0f}–{max(times[name]):.0f} ms"
                       for name in ("attnviz", "floor"))  # fmt: skip
    note = f"median of {len(times['attnviz'])} actions each, alternating; range {spread}"
    return Figure(f"{control.name} → weights repainted, N={n:,}", ours, "floor causal toggle",
                  floor, "ms", f"≤ {TARGET:.2f}× floor", ours <= TARGET * floor, note)  # fmt: skip


async def run(quick: bool = False, sizes: tuple[int, ...] = SIZES) -> list[Figure]:
    """Every control at every size, beside the floor's causal toggle."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await launch_browser(playwright)
        try:
            apps = {name: servers.launch(name) for name in app_bench.APPS}
            progress("attnviz's warm-up")  # a page drawn starts it; it takes a core a while
            page, _ = await open_settled(browser, app_bench.url(apps["attnviz"], 16))
            await asyncio.to_thread(wait_warmed_up, apps["attnviz"])
            await close_page(page)
            figures: list[Figure] = []
            for n in [n for n in sizes if n in SIZES]:
                rounds = QUICK_ROUNDS if quick else SMALL_ROUNDS if n <= SMALL_N else ROUNDS
                for control in CONTROLS:
                    progress(f"{control.name} at N={n:,}")
                    try:
                        times = await _measure(browser, apps, n, control, rounds)
                        figures.append(_figure(n, control, times))
                    except Exception as error:  # noqa: BLE001 - one must not hide the others
                        name = f"{control.name}, N={n:,}"
                        figures.append(failed(name, f"≤ {TARGET}× floor", error))
            return figures
        finally:
            servers.stop_all()
            await browser.close()
