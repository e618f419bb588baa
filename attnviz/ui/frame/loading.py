"""The back end's arrival: pages draw their controls first, then wait here for TensorFlow.

Nothing a page imports at its top loads TensorFlow: the sidebar, the inputs and the controls are
drawn first, and only then does a page import what computes, inside `with back_end():` (the import
the server started at launch, `warmup.warm_up`, is usually done by then; if not, the page says
what it waits for), while the browser loads the charts' code (`load_chart_code`). Also
here: the count of script runs in progress, which the warm-up lets go first (`page_run`), and
what Streamlit's `keras.backend.clear_session()` after every script run becomes
(`_clear_session_after_run`).
"""

from __future__ import annotations

import functools
import gc
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

FLUSH_S = 0.3  # seconds a first run rests before TensorFlow's import, for its page to be sent
LOADING_TEXT = "Loading TensorFlow (the first page after a server start takes ~5 s)…"
_RUN = threading.local()  # what this script run (one thread per run) drew
_KERAS_CLEAR_SESSION = []  # Keras's own clear_session, once TensorFlow is loaded
_BEFORE_BACK_END: list[Callable[[], None]] = []  # called when a page first needs the back end
_KERAS_BUSY: list[Callable[[], bool]] = []  # True while another thread builds Keras models
_RUNS_IN_PROGRESS = [0]  # script runs drawing a page now, in any session
_RUNS_LOCK = threading.Lock()
CHART_CODE_KEY = "chart-code"  # the hidden container of `load_chart_code`'s script
# Streamlit's page loads its chart code (plotly.js, ~4 MB) when the first chart arrives; this
# script, our own constant text, loads the same module as soon as the page's controls are
# drawn (`back_end` draws it). {chunk} is the module's file name in the installed Streamlit,
# next to the page's own index.*.js.
_CHART_CODE_SCRIPT = """<script>
(() => {{
  const index = document.querySelector('script[src*="/static/js/index."]');
  if (index) import(new URL('{chunk}', index.src).href).catch(() => {{}});
}})();
</script>"""


@contextmanager
def page_run() -> Iterator[None]:
    """Count this script run among the runs in progress until it ends, however it ends (a
    rerun or a stop raises through here)."""
    with _RUNS_LOCK:
        _RUNS_IN_PROGRESS[0] += 1
    try:
        yield
    finally:
        with _RUNS_LOCK:
            _RUNS_IN_PROGRESS[0] -= 1


def runs_in_progress() -> int:
    """How many script runs, in all sessions, are drawing a page now."""
    return _RUNS_IN_PROGRESS[0]


def on_back_end(hook: Callable[[], None]) -> None:
    """Call `hook` whenever a page has drawn its controls and needs the back end (the server's
    warm-up waits for that before it imports TensorFlow)."""
    _BEFORE_BACK_END.append(hook)


def keras_busy_while(busy: Callable[[], bool]) -> None:
    """Skip the after-run clear of Keras's global state while `busy()` says another thread
    is building Keras models (the server's warm-up)."""
    _KERAS_BUSY.append(busy)


@contextmanager
def back_end(draws: bool = True) -> Iterator[None]:
    """Import what computes inside: `with back_end(): from attnviz.learn import runs` (those
    modules import TensorFlow, so a page imports them there, in the function that needs them).
    Until the import of TensorFlow that the server started at launch has finished, it waits and
    says so; and since the page's controls are drawn by now, the browser may load the charts'
    code (`load_chart_code`). `draws=False` inside a cached function, which must draw nothing
    (Streamlit would replay its elements elsewhere): it only waits."""
    if draws and not getattr(_RUN, "chart_code", False):  # once a run: it has one key
        _RUN.chart_code = True
        load_chart_code()
    if "tensorflow" not in sys.modules:  # the import holds Python's GIL for seconds: first let
        time.sleep(FLUSH_S)  # the server send what is drawn, or the browser shows it only after
    for hook in _BEFORE_BACK_END:  # everything above the results is drawn: TensorFlow's turn
        hook()
    if "tensorflow" in sys.modules or not draws:
        yield
    else:
        with st.spinner(LOADING_TEXT):
            yield
    _freeze_import_garbage()
    _keep_tensorflow_kernels()


def load_chart_code() -> None:
    """Have the browser load Streamlit's chart module early, not when the first chart arrives:
    on a page's first open its ~4 MB download and compile then overlap the server's work
    (a cold start's TensorFlow import, a model's first run) instead of following it. Drawn by
    `back_end`, after the controls (drawn earlier, the compile delayed them by ~1 s on a cold
    start), in a hidden container (its script runs once, when the page first shows it)."""
    chunk = _chart_chunk()
    if chunk is None:  # another Streamlit build: its charts load their code as usual
        return
    # the script in a container that takes no space, not even a gap: the style hiding the
    # container and its wrapper follows the script in one element (one message on every run,
    # not two; DOMPurify drops a leading `<style>`)
    script = _CHART_CODE_SCRIPT.format(chunk=chunk)
    hidden = f".st-key-{CHART_CODE_KEY}, :has(> .st-key-{CHART_CODE_KEY})"
    with st.container(key=CHART_CODE_KEY):
        st.html(f"{script}<style>{hidden} {{display: none}}</style>", unsafe_allow_javascript=True)


@functools.cache
def _chart_chunk() -> str | None:
    """The file name of the installed Streamlit's plotly chart module, or None if not exactly
    one is found."""
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    found = sorted(folder.glob("PlotlyChart.*.js"))
    return found[0].name if len(found) == 1 else None


def new_run() -> None:
    """A script run begins (the shell says so first, every run; a rerun may reuse the thread):
    it has drawn no chart-code script yet, and Keras's after-run clear is to be skipped."""
    _RUN.page_run = True
    _RUN.chart_code = False


@st.cache_resource
def _freeze_import_garbage() -> bool:
    """Move everything imported so far (TensorFlow's large object graph) out of the garbage
    collector's reach, so a collection after a run does not walk it again."""
    gc.collect()
    gc.freeze()
    return True


def _clear_session_after_run(free_memory: bool = True) -> None:
    """What Streamlit's call to `keras.backend.clear_session()` after every script run becomes.

    Streamlit makes that call for apps that build Keras models on every run. Keras's version
    resets its layer-name counters (thread-local: they go with the run's thread anyway), clears
    TensorFlow's eager kernel cache and runs a second full garbage collection. The cleared
    cache made the first TensorFlow call of every run rebuild its kernels: 12–20 ms of each
    click at 16 tokens, where the attention itself takes under 1 ms, and a trained model's
    first run after a clear 0.5–0.9 s. No page run builds a Keras model to be freed: shipped
    and trained models are cached and kept, and the Decoder page computes in arrays
    (`transformer.decoder_forward`). So a page run never clears, nor does a fragment's run
    (`_page_run`); any other caller (a test, a notebook) gets Keras's clear, but never while a
    session's model trains in its background thread or the server's warm-up builds models
    (`keras_busy_while`): the clear would pull Keras's global state from under them.
    """
    if _page_run():
        return
    from attnviz.learn.runs import training_active

    if not training_active() and not any(check() for check in _KERAS_BUSY):
        _KERAS_CLEAR_SESSION[0](free_memory=free_memory)


def _page_run() -> bool:
    """This thread runs attnviz's page: a whole run, which the shell began (`new_run`), or
    the run of a fragment (an exercise checked, a class's poll, a training's progress), which
    redraws part of a page the shell drew and never passes through the shell. Keras's clear
    after each fragment's run (every poll of a class, every exercise checked) dropped
    TensorFlow's kernels, which the page's next TensorFlow call then rebuilt."""
    if getattr(_RUN, "page_run", False):
        return True
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx is not None and bool(ctx.fragment_ids_this_run)


@st.cache_resource
def _keep_tensorflow_kernels() -> bool:
    """Install `_clear_session_after_run` for Streamlit's after-run call (once per server)."""
    import keras

    _KERAS_CLEAR_SESSION.append(keras.backend.clear_session)
    keras.backend.clear_session = _clear_session_after_run
    return True
