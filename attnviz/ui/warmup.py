"""Work done once per server, at start-up, before the first visitor needs it."""

from __future__ import annotations

import gc
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from streamlit.logger import get_logger

from attnviz.ui import loading

PAGE_DRAWN = threading.Event()  # set once a session has drawn its inputs and controls
WARMING = threading.Event()  # set while the warm-up runs (it builds Keras models)
PAGE_WAIT_S = 10.0  # most time the TensorFlow import waits for a first page to be drawn (a
# first visitor's browser may take 2-3 s after launch to load the app's scripts and connect)
YIELD_S = 5.0  # most seconds a warm-up step waits for the pages' runs in progress to end
FINISHED = "attnviz warm-up finished"  # the server log's line once the warm-up is done


def page_drawn() -> None:
    """A session has drawn its inputs and controls: the TensorFlow import may start."""
    PAGE_DRAWN.set()


def warming_up() -> bool:
    """True while the warm-up runs."""
    return WARMING.is_set()


loading.on_back_end(page_drawn)  # the server imports this module: its pages tell it
loading.keras_busy_while(warming_up)  # Keras's after-run clear waits for the warm-up


def warm_up() -> None:
    """Import TensorFlow and Keras (~4.5 s), trace the dot-product attention graphs, then do
    what each page's first open would do first (`Mode.warm_up`: load every shipped model and
    trace its functions, run the Decoder page's default decoder), so that no first visit waits
    for it; then move what it loaded out of the garbage collector's reach, and log `FINISHED`
    with the time each step took.

    Runs in a background thread started by `server.py` when the server starts. It first waits
    until a session has drawn its inputs and controls (`page_drawn`), or `PAGE_WAIT_S`: the
    import holds Python's GIL most of the time, and running it beside the first page's own
    run made that page appear ~1 s later (measured: page shown 3.5 s after launch, floor app
    1.8 s; with the wait 2.3–2.5 s, for a first heatmap ~0.5 s later; a first visitor's
    browser may take ~3 s after launch to connect on a slow day, hence 10 s). A session that
    arrives meanwhile waits on Python's import lock for the same import, or on the cached
    resource the warm-up is filling, and never repeats it. After the import, each step first
    lets the pages' runs in progress end (`after_page_runs`): the first visitor's run, which
    waited for TensorFlow, then computes and sends its charts without sharing the GIL with
    the warm-up's model building. Failures are logged, not raised: the page's own first run
    would then meet them again and show its error message.
    """
    PAGE_DRAWN.wait(PAGE_WAIT_S)
    WARMING.set()
    start = time.perf_counter()
    timings = []
    try:
        with _quiet_cache_warnings():
            for name, step in [("streamlit", _first_element), ("tensorflow", _import_tensorflow)]:
                timings.append(_timed(name, step))
            for name, step in [("attention", _attention_graphs), *_page_steps()]:
                after_page_runs()
                timings.append(_timed(name, step))
        _keep_out_of_collections()
    finally:
        WARMING.clear()
    get_logger(__name__).info(
        "%s in %.1f s (%s)", FINISHED, time.perf_counter() - start, ", ".join(timings)
    )


def _page_steps() -> list[tuple[str, Callable[[], None]]]:
    """(page name, its `Mode.warm_up`) for every page that has one, in the navigation's order."""
    try:
        from attnviz.ui.modes import MODES
    except Exception:  # noqa: BLE001 - a warm-up must never take the server down
        logging.getLogger("attnviz").exception("warm-up failed")
        return []
    return [(mode.name, mode.warm_up) for mode in MODES if mode.warm_up is not None]


def _keep_out_of_collections() -> None:
    """Move what the warm-up loaded (the shipped models, their traced functions: they live as
    long as the server) out of the garbage collector's reach, so the full collection after a
    page that builds models does not walk them every time (measured: 30–100 ms a run)."""
    gc.collect()
    gc.freeze()


def _first_element() -> None:
    """Draw one element outside any script run (Streamlit ignores it). Streamlit checks once per
    process, on the first element drawn, whether it runs in a Python REPL, by reading the source
    of every frame of the stack (`inspect.stack()`): on a page's run, whose stack is deep, that
    took ~0.25 s of the first visitor's page (profiled); here the stack is short."""
    import streamlit as st

    st.empty()


def _timed(name: str, step: Callable[[], None]) -> str:
    """Run one warm-up step; "name seconds" (a failure is logged: the others still run)."""
    begun = time.perf_counter()
    try:
        step()
    except Exception:  # noqa: BLE001 - the page's own first run says why
        logging.getLogger("attnviz").exception("warm-up of %s failed", name)
    return f"{name} {time.perf_counter() - begun:.1f} s"


def after_page_runs(limit_s: float = YIELD_S) -> None:
    """Wait until no page's script run is in progress, or `limit_s` seconds (a busy server is
    still warmed up, step by step)."""
    deadline = time.monotonic() + limit_s
    while loading.runs_in_progress() and time.monotonic() < deadline:
        time.sleep(0.02)


def _import_tensorflow() -> None:
    """Import TensorFlow and Keras with what computes attention."""
    import attnviz.core.attention  # noqa: F401 - the import is the step


def _attention_graphs() -> None:
    """Trace `compute_attention`'s compiled graph for every scaling, mask and masked value the
    pages offer (one trace each serves any size)."""
    import numpy as np

    from attnviz.core.attention import compute_attention

    x = np.eye(2, dtype=np.float32)
    for scale, causal, mask_value in itertools.product((True, False), (False, True),
                                                       ("-inf", "-1e9")):  # fmt: skip
        compute_attention(x, x, x, scale=scale, causal=causal, mask_value=mask_value)


@contextmanager
def _quiet_cache_warnings() -> Iterator[None]:
    """No "missing ScriptRunContext" warnings from the cached resources the warm-up fills (no
    script run here: the caches need none)."""
    logger = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
