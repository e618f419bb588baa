"""The page: inputs on top, results below, controls in the sidebar. Wiring only.

Nothing this module imports at the top loads TensorFlow: the sidebar, the inputs and the
controls are drawn first, and only then does the page import the views that compute (which wait
for the import the server started at launch, saying so). On a cold start the page is usable at
once and the first heatmap follows as soon as TensorFlow is in.
"""

from __future__ import annotations

import gc
import importlib
import logging
import sys
import threading
from collections.abc import Callable

import streamlit as st

from attnviz.inputs.presets import shipped_presets
from attnviz.ui.controls import mode_selector, sidebar_controls
from attnviz.ui.inputs import cross_panel, matrix_panel, sentence_panel, start_session
from attnviz.ui.state import restore_texts_from_url, store_texts_in_url
from attnviz.ui.warmup import page_drawn

MODE_TEXTS = {
    "matrices": ("q_text", "k_text", "v_text"),
    "sentences": ("sentences",),
    "cross": ("src_text", "target"),
    "multihead": ("src_text", "target"),
    "decoder": (),
    "learn": (),
}
INTROS = {
    "matrices": "Type Q, K and V (one row per line), upload them, or draw them at random.",
    "sentences": "Each sentence attends to itself (self-attention). Tokens are embedded, "
    "position-encoded and projected to Q, K and V with seeded weights.",
    "cross": "Encoder–decoder (cross) attention: queries come from the target sentence, keys "
    "and values from the source sentence.",
    "multihead": "Multi-head attention in the three ways a Transformer uses it: every head, "
    "their average, and the concatenation through W_O, with random weights or the weights of "
    "a trained Transformer.",
    "decoder": "The Transformer decoder of the Keras tutorial: N stacked decoder layers, with "
    "every layer's self- and cross-attention per head, random or trained.",
    "learn": "Attention that was learned: a GRU encoder–decoder with attention or a small "
    "Transformer, trained on a small task. Open a shipped model or train one and watch its "
    "attention align; look at every head of the Transformer in the model view.",
}


@st.cache_resource
def presets() -> dict:
    """The preset files, read once per server."""
    return shipped_presets()


@st.cache_resource
def _freeze_import_garbage() -> bool:
    """Move everything imported so far (TensorFlow's large object graph) out of the garbage
    collector's reach, so Streamlit's collection after every run does not walk it again."""
    gc.collect()
    gc.freeze()
    return True


_RUN = threading.local()  # what this script run (one thread per run) drew
_KERAS_CLEAR_SESSION = []  # Keras's own clear_session, once TensorFlow is loaded


def _clear_session_after_run(free_memory: bool = True) -> None:
    """What Streamlit's call to `keras.backend.clear_session()` after every script run becomes.

    Streamlit makes that call for apps that build Keras models on every run. Keras's version
    resets its layer-name counters (thread-local: they go with the run's thread anyway), clears
    TensorFlow's eager kernel cache and runs a second full garbage collection. The cleared
    cache made the first TensorFlow call of every run rebuild its kernels: 12–20 ms of each
    click at 16 tokens, where the attention itself takes under 1 ms. So the clear runs only
    after the multi-head and decoder views, which build Keras layers and models whose compiled
    functions the cache would otherwise keep (the decoder's held ~100 MB each), and never while
    a session's model trains in its background thread (the clear would pull Keras's global state
    from under it).
    """
    from attnviz.learn.runs import training_active

    if getattr(_RUN, "built_models", True) and not training_active():
        _KERAS_CLEAR_SESSION[0](free_memory=free_memory)


@st.cache_resource
def _keep_tensorflow_kernels() -> bool:
    """Install `_clear_session_after_run` for Streamlit's after-run call (once per server)."""
    import keras

    _KERAS_CLEAR_SESSION.append(keras.backend.clear_session)
    keras.backend.clear_session = _clear_session_after_run
    return True


PANELS = {  # what draws a mode's results: (module, function); each module imports TensorFlow
    "results": ("attnviz.ui.views", "results_panel"),
    "multihead": ("attnviz.ui.transformer", "multihead_panel"),
    "decoder": ("attnviz.ui.transformer", "decoder_panel"),
    "learn": ("attnviz.ui.learn", "learn_panel"),
}


def _panel(name: str) -> Callable:
    """The function that draws `name`, imported on first use. Until the import of TensorFlow
    that the server started at launch has finished, it waits and says so."""
    module_name, function = PANELS[name]
    page_drawn()  # everything above the results is drawn: TensorFlow's turn
    if "tensorflow" in sys.modules:
        module = importlib.import_module(module_name)
    else:
        with st.spinner("Loading TensorFlow (the first page after a server start takes ~5 s)…"):
            module = importlib.import_module(module_name)
    _freeze_import_garbage()
    _keep_tensorflow_kernels()
    return getattr(module, function)


def main() -> None:
    """Draw the whole page."""
    st.set_page_config(page_title="attnviz — see attention", page_icon="🔍", layout="wide")
    restore_texts_from_url()
    start_session(presets())
    mode = mode_selector()
    _RUN.built_models = mode in ("multihead", "decoder")
    controls = sidebar_controls(mode)
    st.title("attnviz")
    st.caption(INTROS[mode])
    try:
        if mode in ("multihead", "decoder", "learn"):
            _panel(mode)(controls.settings)
        else:
            if mode == "sentences":
                problem = sentence_panel(controls.settings.seed)
            elif mode == "cross":
                problem = cross_panel(controls.settings.seed)
            else:
                problem = matrix_panel(presets())
            if problem is not None:
                _panel("results")(problem, controls.settings, controls.use_padding)
    except Exception as err:  # noqa: BLE001 - the page must stay up whatever happens
        logging.getLogger("attnviz").exception("unexpected error while drawing the page")
        st.error(
            f"Something went wrong ({type(err).__name__}). Your inputs are kept; change a "
            "setting or an input to try again.",
            icon=":material/error:",
        )
    store_texts_in_url(MODE_TEXTS[mode])
