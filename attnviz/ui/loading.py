"""The back end's arrival: pages draw their controls first, then wait here for TensorFlow.

Nothing a mode imports at its top loads TensorFlow: the sidebar, the inputs and the controls are
drawn first, and only then does a mode call `back_end()` and import what computes (the import
the server started at launch, `warmup.warm_up`, is usually done by then; if not, the page says
what it waits for). Also here: what Streamlit's `keras.backend.clear_session()` after every
script run becomes (`_clear_session_after_run`).
"""

from __future__ import annotations

import gc
import importlib
import sys
import threading
import time
from collections.abc import Callable
from types import ModuleType

import streamlit as st

FLUSH_S = 0.3  # seconds a first run rests before TensorFlow's import, for its page to be sent
LOADING_TEXT = "Loading TensorFlow (the first page after a server start takes ~5 s)…"
_RUN = threading.local()  # what this script run (one thread per run) drew
_KERAS_CLEAR_SESSION = []  # Keras's own clear_session, once TensorFlow is loaded
_BEFORE_BACK_END: list[Callable[[], None]] = []  # called when a page first needs the back end
_KERAS_BUSY: list[Callable[[], bool]] = []  # True while another thread builds Keras models


def on_back_end(hook: Callable[[], None]) -> None:
    """Call `hook` whenever a page has drawn its controls and needs the back end (the server's
    warm-up waits for that before it imports TensorFlow)."""
    _BEFORE_BACK_END.append(hook)


def keras_busy_while(busy: Callable[[], bool]) -> None:
    """Skip the after-run clear of Keras's global state while `busy()` says another thread
    is building Keras models (the server's warm-up)."""
    _KERAS_BUSY.append(busy)


def back_end(module: str) -> ModuleType:
    """The module `module` (it imports TensorFlow), imported on first use. Until the import
    of TensorFlow that the server started at launch has finished, it waits and says so."""
    if "tensorflow" not in sys.modules:  # the import holds Python's GIL for seconds: first let
        time.sleep(FLUSH_S)  # the server send what is drawn, or the browser shows it only after
    for hook in _BEFORE_BACK_END:  # everything above the results is drawn: TensorFlow's turn
        hook()
    if "tensorflow" in sys.modules:
        loaded = importlib.import_module(module)
    else:
        with st.spinner(LOADING_TEXT):
            loaded = importlib.import_module(module)
    _freeze_import_garbage()
    _keep_tensorflow_kernels()
    return loaded


def run_builds_models(builds: bool = True) -> None:
    """Say that this script run builds Keras models (then the after-run clear frees them;
    otherwise it keeps TensorFlow's kernel cache). Called where a model is built, inside the
    cached function that builds it, so a run that finds the model cached keeps the kernels
    warm; the shell says False at the start of every run."""
    _RUN.built_models = builds


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
    first run after a clear 0.5–0.9 s. So the clear runs only after a run that built a Keras
    model (`run_builds_models`: the decoder's held ~100 MB each), and never while
    a session's model trains in its background thread or the server's warm-up builds models
    (`keras_busy_while`): the clear would pull Keras's global state from under them.
    """
    from attnviz.learn.runs import training_active

    busy = training_active() or any(check() for check in _KERAS_BUSY)
    if getattr(_RUN, "built_models", True) and not busy:
        _KERAS_CLEAR_SESSION[0](free_memory=free_memory)


@st.cache_resource
def _keep_tensorflow_kernels() -> bool:
    """Install `_clear_session_after_run` for Streamlit's after-run call (once per server)."""
    import keras

    _KERAS_CLEAR_SESSION.append(keras.backend.clear_session)
    keras.backend.clear_session = _clear_session_after_run
    return True
