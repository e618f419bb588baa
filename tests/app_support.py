"""Helpers for the AppTest tests: run the app, read its charts back as numbers."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

from attnviz.ui.explorer.results import VIEW
from attnviz.ui.frame.navigation import NEXT_PAGE

APP = str(Path(__file__).parents[1] / "attnviz/ui/app/page.py")  # the page app.py serves
FIRST_RUN_TIMEOUT = 180  # the first run imports TensorFlow (about 5 s, more on a busy box)
# the pages that build or load a model when they open (their walk-throughs are `slow`)
LOADS_MODELS = frozenset({"decoder", "learn", "language-model"})


def quick_unless_loading(page: str, value: Any = None) -> Any:
    """A test parameter, `value` (default: `page`) for the page `page`, marked `slow` if that
    page loads models (`LOADS_MODELS`)."""
    import pytest

    marks = [pytest.mark.slow] if page in LOADS_MODELS else []
    return pytest.param(page if value is None else value, marks=marks)


def assert_ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def decode(data) -> np.ndarray:
    """A plotly array as float64: plain (nested) lists, or plotly's typed `bdata` encoding."""
    if isinstance(data, dict):
        flat = np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
        shape = [int(n) for n in str(data.get("shape", len(flat))).split(",")]
        return flat.reshape(shape).astype(np.float64)
    return np.array(data, dtype=np.float64)  # None (a gap) becomes NaN


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def specs(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def titles(at: AppTest) -> list[str]:
    return [spec["layout"]["title"]["text"] for spec in specs(at)]


def chart(at: AppTest, title: str) -> dict:
    """The one chart whose title starts with `title`."""
    found = [s for s in specs(at) if s["layout"]["title"]["text"].startswith(title)]
    assert len(found) == 1, (title, titles(at))
    return found[0]


def values(at: AppTest, title: str) -> np.ndarray:
    """Trace 0 of a heatmap: the values, NaN where the cell is drawn as blocked."""
    return decode(chart(at, title)["data"][0]["z"])


def weights(at: AppTest) -> np.ndarray:
    """The attention weights chart; cells drawn as blocked hold weight 0."""
    return np.nan_to_num(values(at, "Attention weights"), nan=0.0)


def grid_blocks(z, layers: int, heads: int) -> np.ndarray:
    """`(L, H, R, C)` every head's cells of a model view grid's one heatmap `z`: a strip row on
    top, then each layer's rows and a gap row; each head's columns and a gap column."""
    z = np.asarray(z, dtype=float)
    rows, cols = z.shape[0] // layers - 1, (z.shape[1] + 1) // heads - 1
    return np.stack([
        np.stack([z[1 + layer * (rows + 1):][:rows, head * (cols + 1):][:, :cols]
                  for head in range(heads)])
        for layer in range(layers)
    ])  # fmt: skip


def ticks(spec: dict, axis: str) -> list[str]:
    """The visible tick labels of the key ("x") or query ("y") axis."""
    return spec["layout"][f"{axis}axis2"]["ticktext"]


def open_view(at: AppTest, name: str) -> None:
    """Open a tab: AppTest cannot click one, so set the keyed tabs' state as a click does."""
    at.session_state[VIEW.key] = name
    at.run()
    assert_ok(at)


def new_session(mode: str = "matrices", timeout: float = FIRST_RUN_TIMEOUT, **fields) -> AppTest:
    """A fresh session opened on a mode's page (by a `?mode=` link), with URL `fields`."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"mode": mode, **fields})
    at.run(timeout=timeout)
    return at


def open_mode(at: AppTest, name: str) -> None:
    """Open a mode's page, as a link to it does (`name`: its URL name or its label)."""
    at.query_params["mode"] = name  # the shell opens the page a `?mode=` link names
    at.run()


def current_mode(at: AppTest) -> str:
    """The URL name of the page on screen (the mode whose introduction is shown)."""
    from attnviz.ui.pages import MODES

    shown = {c.value for c in at.caption}
    return next(mode.name for mode in MODES if mode.intro in shown)


def preset_box(at: AppTest):
    """The Matrices page's preset box (its key changes whenever the page changes its choice)."""
    return next(box for box in at.selectbox if box.label == "Preset")


def open_page(at: AppTest, name: str) -> None:
    """Open any page of the site by its URL path ("lesson-4", "start", a mode's name), as the
    shell does when a button asks for one."""
    at.session_state[NEXT_PAGE.key] = name
    at.run()


def menu_links(at: AppTest, page: str) -> list[str]:
    """Open the Pages menu of the page at URL path `page`, as a tap on it does (the menu draws
    its links only while open), and return the labels of the links in it."""
    from attnviz.ui.app.shell import PAGES_MENU

    at.session_state[PAGES_MENU.of(page).key] = True
    at.run()
    return [link.proto.label for link in pages_menu(at).get("page_link")]


def pages_menu(at: AppTest):
    """The Pages menu beside the title (its popover block)."""
    (menu,) = [p for p in at.get("popover") if p.proto.popover.label == "Pages"]
    return menu


def follow_link(at: AppTest, url_path: str, **fields: str) -> None:
    """Open the page at `url_path` ("lesson-7") as a link to it does (Next, Previous and the
    menu's links carry no `fields`: an empty query string). (`AppTest.switch_page` takes page
    files; the site's pages are functions.)"""
    at._page_hash = next(  # noqa: SLF001 - the page the next run asks for, as switch_page sets it
        page for page, info in at._registered_pages.items()  # noqa: SLF001
        if info.get("url_pathname") == url_path
    )  # fmt: skip
    at.query_params.clear()
    at.query_params.update(fields)
    at.run()


def smaller_runs(monkeypatch, **sizes) -> list[tuple]:
    """Make the pages' Train buttons train a smaller model (the page's network with `sizes`)
    on 32 pairs in one batch a step, with 8 validation pairs, and a time limit of 900 s (a
    test of epochs, not of the limit: a first compile under a loaded CI took 95 s); returns
    what each page asked for, as `(task, network, training)`.

    For tests of what a session does with a model it trained (reruns, `clear_session`, the
    charts of every epoch): those hold for a model of any size, and building (tracing,
    compiling) the page's full-size model costs most of such a test's time.
    """
    from dataclasses import replace

    from attnviz.learn.runs import TrainingRun

    start = TrainingRun.start.__func__  # the classmethod's function
    asked = []

    def smaller(cls, task, network=None, training=None, **kwargs):
        asked.append((task, network, training))
        few = replace(training, n_pairs=32, val_pairs=8, batch_size=32, time_limit=900.0)
        return start(cls, task, replace(network, **sizes), few, **kwargs)

    monkeypatch.setattr(TrainingRun, "start", classmethod(smaller))
    return asked
