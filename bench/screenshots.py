"""Take the screenshots of the app that the docs and the README show, in headless Chromium.

    python -m bench.screenshots                          # starts its own server, then stops it
    python -m bench.screenshots http://127.0.0.1:8601    # an app already running there

(from the repository root). Each shot opens a shared URL (the app keeps its settings in the
URL: a page's path and its fields), waits for the charts and saves a PNG in
`assets/screenshots/`.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from playwright.sync_api import sync_playwright

from deploy import servers
from deploy.chromium import CHROMIUM, CHROMIUM_ARGS

FOLDER = servers.ROOT / "assets" / "screenshots"  # where the README and the docs find them
WIDE, WIDER, PHONE = 1400, 1600, 390  # px: the explorer's shots, the site's, a phone's


@dataclass(frozen=True)
class Shot:
    """One screenshot: a page in a window of the given size."""

    path: str  # the page's path and URL fields, e.g. "matrices?view=Compare"
    height: int  # px of the window (the whole window is taken)
    width: int = WIDE  # px of the window
    tab: str | None = None  # a results tab to click open first (its label), if any


SHOTS = {  # file name (without .png): the shot
    "heatmaps": Shot("matrices", 1900),
    "step_by_step": Shot("matrices?view=Step+by+step&cell_i=1&causal=true", 1500),
    "compare": Shot(
        "matrices?pad_keys_0=0&compare=%E2%88%92%E2%88%9E+%2F+%E2%88%921e9"
        "&view=Compare&causal=true&mask_value=-1e9"
        "&q_text=1+0%0A0+1%0A1+1&k_text=1+0%0A0+1%0A1+1&v_text=1+0%0A0+1%0A1+1",
        1200,
    ),
    "sentences": Shot("sentences?seq=1&causal=true", 1700),
    "multihead": Shot("multihead?way=causal", 1900),
    "decoder": Shot("decoder", 1300),
    "start": Shot("", 1500, WIDER),
    "start_phone": Shot("", 2400, PHONE),
    "lesson": Shot("lesson-4", 1700, WIDER),
    "qkv": Shot("sentences?view=Q%2C+K%2C+V", 2300, WIDER, tab="Q, K, V"),
    "presenter": Shot("sentences?present=true&causal=true", 1500, WIDER),
    "positions": Shot(
        "matrices?view=Positions&position=RoPE+%28rotary%29&source=Random"
        "&r_t=12&r_s=12&r_dk=8&r_dv=8",
        2050,
        WIDER,
        tab="Positions",
    ),
    "kv_cache": Shot(
        "matrices?view=KV+cache&cache_t=5&causal=true&source=Random&r_t=8&r_s=8&r_dk=8&r_dv=8",
        1500,
        WIDER,
        tab="KV cache",
    ),
    "tiled": Shot(
        "matrices?view=Tiled&causal=true&source=Random&r_t=8&r_s=8&r_dk=8&r_dv=8",
        1700,
        WIDER,
        tab="Tiled",
    ),
    "masks_today": Shot(
        "matrices?causal=true&window_on=true&window=2&sinks_on=true&sinks=1"
        "&source=Random&r_t=12&r_s=12&r_dk=8&r_dv=8",
        2500,
        WIDER,
    ),
    "lm_learned": Shot("language-model?lm_view=How+it+learned", 1500, WIDER),
    "lm_ablation": Shot("language-model?lm_view=Switch+heads+off", 1900, WIDER),
}
MODEL_VIEW = "learn?learn_arch=Transformer&learn_tview=Model+view&mv_by=alignment+score"
CLIPS = {  # file name: (the heading the clip starts at, the heading it ends before, or px)
    "model_view": ("Encoder–decoder attention (output × source)", "Attention rollout"),
    "model_view_head": ("One head, enlarged", 640),
}
IDLE = '[data-testid="stStatusWidget"]'  # shown while a script run goes on


def _settle(page) -> None:
    """Wait until the page's run has ended and plotly has finished its transitions."""
    page.wait_for_selector(IDLE, state="detached", timeout=60_000)
    time.sleep(2)


def take(base: str, only: tuple[str, ...] = ()) -> None:
    """Take every shot (or those named in `only`) of the app at `base`."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name, shot in SHOTS.items():
            if only and name not in only:
                continue
            page = browser.new_page(viewport={"width": shot.width, "height": shot.height})
            page.goto(f"{base}/{shot.path}")
            page.wait_for_selector(".js-plotly-plot", timeout=60_000)
            if shot.tab is not None:  # a tab bound to the URL opens on its own; make sure
                tab = page.get_by_role("tab", name=shot.tab, exact=True)
                if tab.get_attribute("aria-selected") != "true":
                    tab.click()
            _settle(page)
            page.screenshot(path=FOLDER / f"{name}.png")
            page.close()
        if not only or set(only) & set(CLIPS):
            _model_view_clips(browser, base)
        browser.close()


def _model_view_clips(browser, base: str) -> None:
    """Parts of the Learn Transformer's model view, clipped between headings."""
    page = browser.new_page(viewport={"width": WIDE, "height": 5200})
    page.goto(f"{base}/{MODEL_VIEW}")
    page.get_by_role("heading", name="One head, enlarged").wait_for(timeout=60_000)
    _settle(page)
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
    """Shoot the app at the URL given first (or at a server started and stopped here); any
    other arguments name the shots to take (default: all)."""
    url = argv[0] if argv and argv[0].startswith("http") else None
    only = tuple(a for a in argv if a != url)
    unknown = sorted(set(only) - set(SHOTS) - set(CLIPS))
    if unknown:
        print(f"Unknown shots {unknown}; choose from {[*SHOTS, *CLIPS]}.", file=sys.stderr)
        return 2
    if url:
        take(url.rstrip("/"), only)
        return 0
    server = servers.launch("attnviz")
    try:
        take(server.url, only)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
