"""Exercises: an answer checked and its chart revealed, attnviz's lesson 1 beside a floor page
drawing the same chart (bench/floor_exercise.py).

Shape letters: T = S = 3 queries and keys, F = 3 features (lesson 1's exercises).

attnviz is opened at `/lesson-1?variant=VARIANT`, once its warm-up has ended, one page (a
session) per exercise, its tab opened; the floor at `/?exercise=<id>&variant=VARIANT`, which
draws the same numbers. Each exercise is drawn in an `st.fragment` on both pages. A round, on
each page:

- untimed, the answer: exercise 1b (predict, "Which key wins?") picks an option of the radio
  "Query i scores highest" (key 0, 1, 2 in turn: right and wrong guesses); exercise 1a
  (compute, "One score by hand") reads Q and K from the page's formulas and the cell from the
  field's label "Score of query i for key j", and types the score q_i · k_j, submitted with
  Enter; the fragment's run must have ended (a widget keeps what it shows after "New numbers":
  an answer it already shows is left as it is);
- timed, the check: a click on "Commit my guess" (1b) or "Check" (1a), from the click (stamped
  in the page) to the first animation frame in which the revealed heatmap ("Scores q · k: your
  guess and the largest", or "Scores q · k") is painted (`bench.pages.timed_action`); then the
  fragment's run must have ended and the page be idle;
- untimed, the reset: "New numbers" (the next variant's numbers, on both pages the same), until
  the chart is gone.

Rounds alternate between the apps (the order swapping every round, as the app benchmark's
clicks); round 0 is an untimed warm-up, then `ROUNDS` timed checks per app and exercise
(`--quick`: `QUICK_ROUNDS`). The note gives the server's part (the click's rerun request to the
fragment run's end, stamped on the page's websocket), the range, and the revealed charts of both
pages (title, height, outlines), which must agree. Target: each median within `TARGET` × the
floor's.
"""

from __future__ import annotations

import asyncio
import re
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.first_open_bench import wait_warmed_up
from bench.floor_exercise import TITLES, number
from bench.pages import (
    RunWatcher,
    close_page,
    launch_browser,
    new_page,
    settle,
    signature,
    stamp_runs,
    timed_action,
)
from bench.report import Figure, failed, progress, run_alone
from deploy import servers

APPS = ("attnviz", "floor-exercise")
VARIANT = 2026  # the numbers of round 0; each "New numbers" moves both pages on alike
ROUNDS, QUICK_ROUNDS = 12, 3  # timed checks per app and exercise
TARGET = 1.25  # most attnviz / floor ratio of the median check-to-reveal
TIMEOUT_S = 60.0  # most time one action may take (a wrong score would never reveal a chart)

# The LaTeX source of the formulas shown (KaTeX keeps it beside what it draws); an exercise in
# a tab not open is not shown.
SHOWN_LATEX = """() => Array.from(
  document.querySelectorAll('[data-testid="stMain"] annotation[encoding="application/x-tex"]'),
).filter((a) => a.closest('.katex').checkVisibility()).map((a) => a.textContent.trim())"""

# The revealed chart `title` as drawn: [title, height in px, heatmap rows x columns, its outlines
# as "solid" / "dash"], or null.
REVEALED = """(title) => {
  for (const div of document.querySelectorAll('.js-plotly-plot')) {
    const t = div.querySelector('.gtitle');
    if (!t || t.textContent.trim() !== title || !div._fullLayout) continue;
    const z = div._fullData.find((trace) => trace.type === 'heatmap').z;
    const dashes = (div._fullLayout.shapes || []).map((s) => s.line.dash).sort();
    return [t.textContent.trim(), div._fullLayout.height, `${z.length}x${z[0].length}`,
            dashes.join('+')];
  }
  return null;
}"""

# [ms from the stamped click to the first rerun request after it, to the first fragment run's
# successful end after it] (null where there is none).
AFTER_CLICK = """() => {
  const t0 = window.__bench.t0, first = (stamps) => stamps.find((t) => t >= t0);
  const ms = (t) => t === undefined ? null : t - t0;
  return [ms(first(window.__runs.requested)), ms(first(window.__runs.fragments))];
}"""


@dataclass(frozen=True)
class Task:
    """One exercise the benchmark answers: where it is, how it is answered, what it reveals."""

    id: str  # the exercise's id ("1b"): the floor's `exercise`
    name: str  # the table's name for its figure
    tab: str  # attnviz's tab of the exercise
    button: str  # the button timed
    answer: Callable[[Any, RunWatcher, int], Awaitable[None]]  # round i's answer, untimed
    # (page, its watcher, i), its run ended

    @property
    def title(self) -> str:
        """The revealed chart's title (attnviz's; a test checks the floor's is the same)."""
        return TITLES[self.id]


def _order(i: int) -> tuple[str, ...]:
    """The apps in round `i`'s order: attnviz first in even rounds, the floor first in odd."""
    return APPS if i % 2 == 0 else APPS[::-1]


def _main(page: Any) -> Any:
    return page.locator('[data-testid="stMain"]')


async def _pick(page: Any, watcher: RunWatcher, i: int) -> None:
    """Pick key i mod 3 of the radio "Query q scores highest" (unless it is picked already:
    a widget keeps what it shows after "New numbers")."""
    radio = _main(page).get_by_role("radiogroup", name=re.compile(r"^Query \d+ scores highest$"))
    option = f"key {i % 3}"
    if not await radio.get_by_role("radio", name=option, exact=True).is_checked():
        await _in_fragment(page, watcher, radio.locator("label").filter(has_text=option).click)


async def _type_score(page: Any, watcher: RunWatcher, i: int) -> None:
    """Work out the score the field asks for from the Q and K shown; type it and press Enter
    (unless the field shows it already: it keeps its text after "New numbers")."""
    field = _main(page).get_by_role("textbox", name=re.compile(r"^Score of query \d+ for key \d+$"))
    row, col = (int(n) for n in re.findall(r"\d+", await field.get_attribute("aria-label")))
    shown = matrices(await page.evaluate(SHOWN_LATEX))
    text = number(shown["Q"][row] @ shown["K"][col])  # (F,) . (F,) -> a score
    if await field.input_value() != text:
        await field.fill(text)
        await _in_fragment(page, watcher, lambda: field.press("Enter"))


def matrices(latex: list[str]) -> dict[str, np.ndarray]:
    """The matrices of formulas "Q = \\begin{bmatrix} 1 & -2 \\\\ 0 & 3 \\end{bmatrix}", by
    name (other formulas are left out)."""
    found = {}
    for text in latex:
        match = re.fullmatch(r"(\w+) = \\begin\{bmatrix\}(.*)\\end\{bmatrix\}", text, re.S)
        if match:
            rows = match[2].split(r"\\")
            found[match[1]] = np.array([[float(x) for x in row.split("&")] for row in rows])
    return found


TASKS = (
    Task("1b", "1b predict: commit a guess → chart revealed", "2. Which key wins?",
         "Commit my guess", _pick),
    Task("1a", "1a compute: check a right score → verdict and chart", "1. One score by hand",
         "Check", _type_score),
)  # fmt: skip


async def _open(browser: Any, apps: dict[str, servers.Server], name: str, task: Task):
    """The exercise `task` on app `name`'s new page, settled (attnviz's tab open)."""
    page = await new_page(browser, TIMEOUT_S)
    await page.add_init_script(stamp_runs())
    watcher = RunWatcher(page)
    if name == "attnviz":
        await page.goto(f"{apps[name].url}/lesson-1?variant={VARIANT}")
        await settle(page, watcher, 1, TIMEOUT_S * 2)
        tab = _main(page).get_by_role("tab", name=task.tab)
        if await tab.get_attribute("aria-selected") != "true":  # its exercise drawn by a run
            await _in_fragment(page, watcher, tab.click)
    else:
        await page.goto(f"{apps[name].url}/?exercise={task.id}&variant={VARIANT}")
        await settle(page, watcher, 1, TIMEOUT_S)
    return page, watcher


async def _in_fragment(page: Any, watcher: RunWatcher, act: Callable[[], Awaitable]) -> Any:
    """`act()`, then wait until its fragment run has ended and the page is idle."""
    runs = watcher.fragments + 1
    result = await act()
    await settle(page, watcher, runs, TIMEOUT_S, fragments=True)
    if watcher.exceptions or watcher.other:
        raise RuntimeError(f"{page.url}: a traceback, or a run that did not end normally")
    return result


async def _round(page: Any, watcher: RunWatcher, task: Task, i: int) -> tuple:
    """Answer (untimed), check (timed), reset (untimed). Returns the check's milliseconds,
    [ms to the rerun request, ms to the fragment run's end] after the click, the revealed
    chart (`REVEALED`) and the formulas the exercise showed."""
    shown = await page.evaluate(SHOWN_LATEX)
    await task.answer(page, watcher, i)
    button = _main(page).get_by_role("button", name=task.button, exact=True)
    elapsed = await _in_fragment(
        page, watcher, lambda: timed_action(page, button.click, task.button, task.title, TIMEOUT_S)
    )
    steps, revealed = await page.evaluate(AFTER_CLICK), await page.evaluate(REVEALED, task.title)
    new = _main(page).get_by_role("button", name="New numbers", exact=True)
    await _in_fragment(page, watcher, new.click)
    if await signature(page, task.title) is not None:
        raise RuntimeError(f"{page.url}: the chart stayed after New numbers")
    return elapsed, steps, revealed, shown


async def _measure(browser: Any, apps: dict, task: Task, rounds: int) -> tuple[dict, ...]:
    """Round-robin checks of `task` on both apps. By app: the timed checks' ms, their [request,
    run end] ms, the revealed chart as round 0 drew it, and the runs seen (full, fragment)."""
    pages: dict[str, tuple[Any, RunWatcher]] = {}
    times: dict[str, list[float]] = {name: [] for name in APPS}
    steps: dict[str, list[list]] = {name: [] for name in APPS}
    charts: dict[str, Any] = {}
    try:
        for name in APPS:
            pages[name] = await _open(browser, apps, name, task)
        for i in range(rounds + 1):  # round 0 is the untimed warm-up
            shown = {}
            for name in _order(i):
                elapsed, after, revealed, shown[name] = await _round(*pages[name], task, i)
                if i:
                    times[name].append(elapsed)
                    steps[name].append(after)
                else:
                    charts[name] = revealed
            _same_numbers(shown, i)
        runs = {name: (w.finished, w.fragments) for name, (_, w) in pages.items()}
    finally:
        for page, _ in pages.values():
            await close_page(page)
    return times, steps, charts, runs


def _same_numbers(shown: dict[str, list[str]], i: int) -> None:
    """Both pages showed the same Q and K in round `i` (the floor draws attnviz's numbers)."""
    ours, floor = (matrices(shown[name]) for name in APPS)
    for m in ("Q", "K"):
        if m not in ours or m not in floor or not np.array_equal(ours[m], floor[m]):
            raise RuntimeError(f"round {i}: the pages showed other numbers: {shown}")


def _server_part(steps: list[list]) -> str:
    """ "12 / 85 ms": the medians of [request, fragment run's end] after the click."""
    medians = [statistics.median(s[k] for s in steps if s[k] is not None) for k in range(2)]
    return f"{medians[0]:.0f} / {medians[1]:.0f} ms"


def _figure(task: Task, times: dict, steps: dict, charts: dict, runs: dict) -> Figure:
    ours, floor = (statistics.median(times[name]) for name in APPS)
    spread = ", ".join(f"{label} {min(times[name]):.0f}–{max(times[name]):.0f} ms"
                       for label, name in zip(("attnviz", "floor"), APPS, strict=True))  # fmt: skip
    drawn = {name: " · ".join(map(str, charts[name])) if charts[name] else "none" for name in APPS}
    warning = "" if charts["attnviz"] == charts[APPS[1]] else "WARNING: the charts differ. "
    note = (
        f"{warning}median of {len(times['attnviz'])} checks each, alternating, from the click to "
        f"the revealed chart painted; range {spread}; from the click to the rerun request / the "
        f"fragment run's end: attnviz {_server_part(steps['attnviz'])}, floor "
        f"{_server_part(steps[APPS[1]])}; revealed chart (title · height px · cells · "
        f"outlines): attnviz {drawn['attnviz']}, floor {drawn[APPS[1]]}; runs (whole page / "
        f"fragment): attnviz {'/'.join(map(str, runs['attnviz']))}, floor "
        f"{'/'.join(map(str, runs[APPS[1]]))}"
    )
    return Figure(task.name, ours, "floor", floor, "ms", f"≤ {TARGET:.2f}× floor",
                  ours <= TARGET * floor, note)  # fmt: skip


async def run_async(quick: bool) -> list[Figure]:
    from playwright.async_api import async_playwright

    figures: list[Figure] = []
    async with async_playwright() as playwright:
        browser = await launch_browser(playwright)
        try:
            apps = {name: servers.launch(name) for name in APPS}
            progress("attnviz's warm-up")  # a page drawn starts it; it takes a core a while
            page = await new_page(browser, TIMEOUT_S * 2)
            await page.goto(f"{apps['attnviz'].url}/lesson-1?variant={VARIANT}")
            await asyncio.to_thread(wait_warmed_up, apps["attnviz"])
            await close_page(page)
            rounds = QUICK_ROUNDS if quick else ROUNDS
            for task in TASKS:
                progress(task.name)
                try:
                    measured = await _measure(browser, apps, task, rounds)
                    figures.append(_figure(task, *measured))
                except Exception as error:  # noqa: BLE001 - one must not hide the other
                    figures.append(failed(task.name, f"≤ {TARGET:.2f}× floor", error))
        finally:
            servers.stop_all()
            await browser.close()
    return figures


def run(quick: bool = False) -> list[Figure]:
    """Each exercise's check-to-reveal figure (attnviz beside the floor page)."""
    return asyncio.run(run_async(quick))


def main(argv: list[str] | None = None) -> int:
    """Run the section on its own and print its table."""
    return run_alone(
        "exercises", run, argv, prog="python -m bench.exercises_bench",
        description=" ".join(__doc__.split("\n\n")[0].split()), quick_help="fewer timed checks",
    )  # fmt: skip


if __name__ == "__main__":
    import sys

    sys.exit(main())
