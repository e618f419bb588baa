"""Take the README screenshots of the app in headless Chromium.

    python -m bench.screenshots                          # starts its own server, then stops it
    python -m bench.screenshots http://127.0.0.1:8601    # an app already running there

(from the repository root). Each shot opens a shared URL (the app keeps its settings in the
URL), waits for the charts and saves a PNG in `assets/screenshots/`.
"""

from __future__ import annotations

import sys
import time

from playwright.sync_api import sync_playwright

from deploy import servers
from deploy.chromium import CHROMIUM, CHROMIUM_ARGS

FOLDER = servers.ROOT / "assets" / "screenshots"  # where the README finds them

SHOTS = {  # file name: (URL query, page height)
    "heatmaps": ("", 1900),
    "step_by_step": ("?view=Step+by+step&cell_i=1", 1500),
    "compare": (
        "?pad_keys_0=0&compare=%E2%88%92%E2%88%9E+%2F+%E2%88%921e9"
        "&view=Compare&causal=true&mask_value=-1e9"
        "&q_text=1+0%0A0+1%0A1+1&k_text=1+0%0A0+1%0A1+1&v_text=1+0%0A0+1%0A1+1",
        1200,
    ),
    "sentences": ("?mode=Sentences&seq=1&causal=true", 1700),
    "multihead": ("?mode=Multi-head&way=causal", 1900),
    "decoder": ("?mode=Decoder", 1300),
}
MODEL_VIEW = "?mode=Learn&learn_arch=Transformer&learn_tview=Model+view&mv_by=alignment+score"
CLIPS = {  # file name: (the heading the clip starts at, the heading it ends before, or px)
    "model_view": ("Encoder–decoder attention (output × source)", "Attention rollout"),
    "model_view_head": ("One head, enlarged", 640),
}


def take(base: str) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name, (query, height) in SHOTS.items():
            page = browser.new_page(viewport={"width": 1400, "height": height})
            page.goto(base + "/" + query)
            page.wait_for_selector(".js-plotly-plot", timeout=60_000)
            page.wait_for_selector(
                '[data-testid="stStatusWidget"]', state="detached", timeout=60_000
            )
            time.sleep(2)  # let plotly finish its transitions
            page.screenshot(path=FOLDER / f"{name}.png")
            page.close()
        _model_view_clips(browser, base)
        browser.close()


def _model_view_clips(browser, base: str) -> None:
    """Parts of the Learn Transformer's model view, clipped between headings."""
    page = browser.new_page(viewport={"width": 1400, "height": 5200})
    page.goto(base + "/" + MODEL_VIEW)
    page.get_by_role("heading", name="One head, enlarged").wait_for(timeout=60_000)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=60_000)
    time.sleep(2)
    for name, (start, end) in CLIPS.items():
        top = page.get_by_role("heading", name=start).bounding_box()["y"] - 10
        if isinstance(end, str):
            height = page.get_by_role("heading", name=end).bounding_box()["y"] - 10 - top
        else:
            height = end
        clip = {"x": 290, "y": top, "width": 1090, "height": height}
        page.screenshot(path=FOLDER / f"{name}.png", clip=clip)
    page.close()


def main(argv: list[str]) -> int:
    """Shoot the app at the given URL, or at a server started (and stopped) here."""
    if argv:
        take(argv[0].rstrip("/"))
        return 0
    server = servers.launch("attnviz")
    try:
        take(server.url)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
