"""Work done once per server, at start-up, before the first visitor needs it."""

from __future__ import annotations

import gc
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from streamlit.logger import get_logger

from attnviz.ui.frame import loading
from attnviz.ui.frame.server_config import MODEL_ENV, WARM_UP_STEP_DONE

PAGE_DRAWN = threading.Event()  # set once a session has drawn its inputs and controls
WARMING = threading.Event()  # set while the warm-up runs (it builds Keras models)
PENDING = threading.Event()  # set from the warm-up's start (waiting for a first page) to its end
STEP = ["", 0, 0, 0.0]  # the step in progress: its name, its number, the steps, the start's time
TYPICAL_S = 15  # about how long a whole warm-up takes on a small server (2 cores), as its pages say
PAGE_WAIT_S = 10.0  # most time the TensorFlow import waits for a first page to be drawn (a
# first visitor's browser may take 2-3 s after launch to load the app's scripts and connect)
YIELD_S = 5.0  # most seconds a warm-up step waits for the pages' runs in progress to end
FINISHED = "attnviz warm-up finished"  # the server log's line once the warm-up is done
STEP_NAMES = {  # step -> what a page waiting for it says is loading
    "streamlit": "the page's code",
    "tensorflow": "TensorFlow",
    "attention": "the attention's compiled graphs",
    "lessons": "the trained models of the lessons' exercises",
}


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
    PENDING.set()
    STEP[3] = time.time()
    PAGE_DRAWN.wait(0 if _chosen_model() else PAGE_WAIT_S)
    WARMING.set()
    start = time.perf_counter()
    timings = []
    try:
        with _quiet_cache_warnings():
            first = [("streamlit", _first_element), ("tensorflow", _import_tensorflow)]
            steps = [*first, ("attention", _attention_graphs), *_page_steps()]
            for number, (name, step) in enumerate(steps, 1):
                STEP[:3] = name, number, len(steps)
                if number > len(first):
                    after_page_runs()
                timings.append(_timed(name, step))
        _keep_out_of_collections()
    finally:
        WARMING.clear()
        PENDING.clear()
    get_logger(__name__).info(
        "%s in %.1f s (%s)", FINISHED, time.perf_counter() - start, ", ".join(timings)
    )


def _page_steps() -> list[tuple[str, Callable[[], None]]]:
    """(page name, its `Mode.warm_up`) for every page that has one, in the navigation's order,
    then the lessons' exercises that load models (`_lessons_step`); on a server started on a
    model (`attnviz view`), the Your model page's first: the page `attnviz.view` opens, which
    waits for it (`WARM_UP_STEP_DONE`)."""
    try:
        from attnviz.ui.pages import MODES
    except Exception:  # noqa: BLE001 - a warm-up must never take the server down
        logging.getLogger("attnviz").exception("warm-up failed")
        return []
    steps = [(mode.name, mode.warm_up) for mode in MODES if mode.warm_up is not None]
    first = [step for step in steps if step[0] == "model" and _chosen_model()]
    return first + [step for step in steps if step not in first] + [_lessons_step()]


def _lessons_step() -> tuple[str, Callable[[], None]]:
    """The lessons' exercises that load trained models, one variant each (last: a page's
    first open matters more than a lesson's)."""
    return ("lessons", _warm_up_lessons)


def _warm_up_lessons() -> None:
    from attnviz.lessons import exercises  # the exercises load their own trained models

    exercises.warm_up()


def _chosen_model() -> bool:
    """True on a server started on a model (`attnviz view MODEL`)."""
    return bool(os.environ.get(MODEL_ENV, "").strip())


def loading_now() -> str | None:
    """While the warm-up is pending or running, what a page opened now is told: what is
    loading and about how long the whole takes; else None."""
    if not PENDING.is_set():
        return None
    name, number, steps, began = STEP
    since = max(0, round(time.time() - began))
    if not number:  # waiting for a first page's controls to be drawn: then TensorFlow
        what = "TensorFlow loads next"
    else:
        what = f"now loading {_step_name(name)}, step {number} of {steps}"
    return (
        f"The server started {since} s ago and is getting ready ({what}); that takes about "
        f"{TYPICAL_S} s in all. This page appears by itself as soon as what it needs is loaded."
    )


@contextmanager
def note_while_loading() -> Iterator[None]:
    """While the warm-up is pending or running (`loading_now`), say so here, until the page
    drawn inside has been drawn: a page waiting for it showed only Streamlit's running icon."""
    text = loading_now()
    if text is None:
        yield
        return
    import streamlit as st

    box = st.empty()
    box.info(text, icon=":material/hourglass_top:")
    try:
        yield
    finally:
        box.empty()


def _step_name(name: str) -> str:
    if name in STEP_NAMES:
        return STEP_NAMES[name]
    try:
        from attnviz.ui.pages import MODES_BY_NAME

        return f"the {MODES_BY_NAME[name].label} page's models"
    except (ImportError, KeyError):
        return name


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
    get_logger(__name__).info(WARM_UP_STEP_DONE.format(name))
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
