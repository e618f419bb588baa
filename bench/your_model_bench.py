"""Your model's model view: click a square of a head map → that head enlarged, for the 12-layer,
12-head encoder of `bench.inspect_bench` at 128 tokens, attnviz beside the floor app.

Shape letters: L layers, H heads, T queries, S keys.

The model: `inspect_bench.build_encoder()` (L = 12 blocks of `MultiHeadAttention`, H = 12,
D = 768; random weights from seed 0) saved as a `.keras` file in a temporary folder, opened as
`attnviz view` opens it (the server started with `ATTNVIZ_MODEL` set to the file); its page
`/model` is given the T = 128 token ids of `inspect_bench.token_ids()` (the last 8 padding, id
0) in the URL. attnviz draws one self-attention grid of 12 × 12 heads (thumbnails pooled to
32 × 32 cells), head summaries and a table, the rollout and the enlarged head (128 × 128). The
floor (bench/floor_model_view.py) at `/?layers=12&heads=12&ways=1&t=128&s=128` draws one grid
of 12 × 12 random 128 × 128 heatmaps at full resolution (its only way with `ways=1` is named
"cross"; unmasked, as the encoder's heads but for 8 padding keys), its head map and the
enlarged head, and no rollout.

A click is timed as `bench.model_view_bench` times it (its JavaScript: the release stamped in
the page, to the later of the enlarged chart showing the new head's title with its heatmap
drawn and the run's successful end on the websocket), alternating between layer 0 · head 1 and
layer 11 · head 11, and between the apps (the order swapping every round), after one untimed
warm-up click each. A plain call of the same model (`model(ids)`, in this process) is timed in
the same run, for scale.

Target: within 1.5× the floor (as the model view's: attnviz draws summaries, a table, the
rollout and a line view the floor leaves out).

    python -m bench.benchmark --only your_model    # 10 timed clicks per app (--quick: 3)
    python -m bench.your_model_bench [--quick]     # the same section on its own
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.inspect_bench import HEADS, LAYERS, TOKENS, build_encoder, token_ids
from bench.model_view_bench import (
    AFTER_RELEASE,
    ARM,
    CHARTS_DRAWN,
    COUNT_HEATMAPS,
    WAIT_ENLARGED,
)
from bench.pages import RunWatcher, close_page, launch_browser, new_page, settle, stamp_runs
from bench.report import Figure, run_alone
from deploy import servers

TARGET = 1.5  # most attnviz / floor ratio of the median click-to-repaint
CLICKS, QUICK_CLICKS = 10, 3
TIMEOUT_S = 300  # the first load builds 144 thumbnails
PLAIN_CALLS = 10  # timed plain calls of the model


def _apps(ids: str) -> dict[str, dict[str, str]]:
    """Per app: its query string, the head map's squares, the enlarged chart's title prefix."""
    return {
        "attnviz": {"query": f"model_text={ids}", "map": ".st-key-mv_map_self path.point",
                    "way": "self"},
        "floor-model-view": {"query": f"layers={LAYERS}&heads={HEADS}&ways=1&t={TOKENS}"
                             f"&s={TOKENS}", "map": ".st-key-mv-map-cross path.point",
                             "way": "cross"},
    }  # fmt: skip


async def _open(browser: Any, url: str) -> tuple[Any, RunWatcher]:
    page = await new_page(browser, TIMEOUT_S)
    await page.add_init_script(stamp_runs())
    watcher = RunWatcher(page)
    await page.goto(url)
    await settle(page, watcher, 1, TIMEOUT_S)
    await page.wait_for_function(CHARTS_DRAWN, polling=100, timeout=TIMEOUT_S * 1000)
    return page, watcher


async def _click(
    page: Any, watcher: RunWatcher, square: str, index: int, title: str
) -> tuple[float, float, float, float]:
    """Release the mouse over square `index`; ms to the later of the repaint and the run's end,
    to the repaint, to the run's end, to the rerun request."""
    point = page.locator(square).nth(index)
    await point.scroll_into_view_if_needed()
    box = await point.bounding_box()
    runs = watcher.finished + 1
    await page.evaluate(ARM)
    await page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    painted = await page.evaluate(WAIT_ENLARGED, {"title": title, "timeoutMs": TIMEOUT_S * 1000})
    if painted < 0:
        raise RuntimeError(f"square {index} on {page.url}: no repaint (expected {title!r})")
    await settle(page, watcher, runs, TIMEOUT_S)
    requested, ended = await page.evaluate(AFTER_RELEASE)
    if requested is None or ended is None:
        raise RuntimeError(f"square {index} on {page.url}: no rerun request or end seen")
    return max(painted, ended), painted, ended, requested


async def _measure(urls: dict[str, str], apps: dict, clicks: int) -> tuple[dict, dict]:
    """Timed clicks per app (ms), and each page's (heatmap charts, traces) after the warm-up."""
    from playwright.async_api import async_playwright

    times: dict[str, list[tuple[float, ...]]] = {name: [] for name in apps}
    counts: dict[str, tuple[int, int]] = {}
    squares = (1, LAYERS * HEADS - 1)  # layer 0 · head 1, the last layer's last head
    async with async_playwright() as playwright:
        browser = await launch_browser(playwright)
        shown = {}
        try:
            for name, app in apps.items():
                shown[name] = await _open(browser, f"{urls[name]}/{app['path']}?{app['query']}")
            for i in range(clicks + 1):  # click 0: the untimed warm-up
                index = squares[i % 2]
                layer, head = divmod(index, HEADS)
                for name in list(apps)[:: 1 if i % 2 == 0 else -1]:
                    title = f"{apps[name]['way']} · layer {layer} · head {head}"
                    ms = await _click(*shown[name], apps[name]["map"], index, title)
                    if i:
                        times[name].append(ms)
                    else:
                        counts[name] = tuple(await shown[name][0].evaluate(COUNT_HEATMAPS))
        finally:
            for page, _ in shown.values():
                await close_page(page)
            await browser.close()
    return times, counts


def _plain_call_ms(model: Any, ids: Any) -> float:
    """Median ms of a plain call of the model (after two warm-ups)."""
    for _ in range(2):
        model(ids, training=False)
    samples = []
    for _ in range(PLAIN_CALLS):
        start = time.perf_counter()
        model(ids, training=False)
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def measure(clicks: int) -> tuple[float, dict, dict]:
    """A plain call's median ms; per app, its timed clicks (ms: both ends, repaint, run end,
    rerun request) and its (heatmap charts, traces)."""
    from attnviz.ui.frame.server_config import MODEL_ENV

    model, ids = build_encoder(), token_ids()
    plain = _plain_call_ms(model, ids)
    with tempfile.TemporaryDirectory(prefix="attnviz-bench-") as folder:
        path = Path(folder) / "encoder.keras"
        model.save(path)
        apps = _apps("+".join(str(i) for i in ids[0]))
        apps["attnviz"]["path"], apps["floor-model-view"]["path"] = "model", ""
        started = {"attnviz": servers.start("attnviz", env={MODEL_ENV: str(path)}),
                   "floor-model-view": servers.start("floor-model-view")}  # fmt: skip
        try:
            urls = {name: servers.wait_healthy(server).url for name, server in started.items()}
            times, counts = asyncio.run(_measure(urls, apps, clicks))
        finally:
            servers.stop_all()
    return plain, times, counts


def run(quick: bool = False) -> list[Figure]:
    """The section's figure: attnviz's click beside the floor's, a plain call in the note."""
    clicks = QUICK_CLICKS if quick else CLICKS
    plain, times, counts = measure(clicks)
    medians = {name: [statistics.median(t[k] for t in samples) for k in range(4)]
               for name, samples in times.items()}  # fmt: skip
    (ours, *steps), (floor, *_) = medians["attnviz"], medians["floor-model-view"]
    spread = {name: f"{min(t[0] for t in s):.0f}–{max(t[0] for t in s):.0f} ms"
              for name, s in times.items()}  # fmt: skip
    note = (
        f"median of {clicks} clicks each after one untimed, alternating; range attnviz "
        f"{spread['attnviz']}, floor {spread['floor-model-view']}; attnviz's repaint / run end "
        f"/ rerun request {' / '.join(f'{x:.0f}' for x in steps)} ms; heatmap charts/traces "
        f"attnviz {'/'.join(map(str, counts['attnviz']))}, floor "
        f"{'/'.join(map(str, counts['floor-model-view']))}; a plain call of the model (in the "
        f"bench's process) {plain:.0f} ms, for scale"
    )
    name = f"click → enlarged head, {LAYERS} × {HEADS} heads, T = {TOKENS}"
    return [Figure(name, ours, "floor", floor, "ms", f"≤ {TARGET:.2f}× floor",
                   ours <= TARGET * floor, note)]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the section on its own and print its table."""
    return run_alone(
        "your_model", run, argv, prog="python -m bench.your_model_bench",
        description=" ".join(__doc__.split("\n\n")[0].split()), quick_help="fewer timed clicks",
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
