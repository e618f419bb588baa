"""The page: inputs on top, results below, controls in the sidebar. Wiring only."""

from __future__ import annotations

import gc
import logging
import threading
from pathlib import Path

import keras
import streamlit as st

from attnviz.inputs.presets import load_presets
from attnviz.ui.controls import mode_selector, sidebar_controls
from attnviz.ui.inputs import cross_panel, matrix_panel, sentence_panel, start_session
from attnviz.ui.state import restore_texts_from_url, store_texts_in_url
from attnviz.ui.transformer import decoder_panel, multihead_panel
from attnviz.ui.views import results_panel

PRESETS_DIR = Path(__file__).resolve().parents[2] / "assets" / "presets"
MODE_TEXTS = {
    "matrices": ("q_text", "k_text", "v_text"),
    "sentences": ("sentences",),
    "cross": ("src_text", "target"),
    "multihead": ("src_text", "target"),
    "decoder": (),
}
INTROS = {
    "matrices": "Type Q, K and V (one row per line), upload them, or draw them at random.",
    "sentences": "Each sentence attends to itself (self-attention). Tokens are embedded, "
    "position-encoded and projected to Q, K and V with seeded weights.",
    "cross": "Encoder–decoder (cross) attention: queries come from the target sentence, keys "
    "and values from the source sentence.",
    "multihead": "Multi-head attention in the three ways a Transformer uses it: every head, "
    "their average, and the concatenation through W_O.",
    "decoder": "The Transformer decoder of the Keras tutorial: N stacked decoder layers, with "
    "every layer's self- and cross-attention per head.",
}


@st.cache_resource
def presets() -> dict:
    """The preset files, read once per server."""
    return load_presets(PRESETS_DIR)


@st.cache_resource
def _freeze_import_garbage() -> bool:
    """Move everything imported so far (TensorFlow's large object graph) out of the garbage
    collector's reach, so Streamlit's collection after every run does not walk it again."""
    gc.collect()
    gc.freeze()
    return True


_RUN = threading.local()  # what this script run (one thread per run) drew
_KERAS_CLEAR_SESSION = keras.backend.clear_session


def _clear_session_after_run(free_memory: bool = True) -> None:
    """What Streamlit's call to `keras.backend.clear_session()` after every script run becomes.

    Streamlit makes that call for apps that build Keras models on every run. Keras's version
    resets its layer-name counters (thread-local: they go with the run's thread anyway), clears
    TensorFlow's eager kernel cache and runs a second full garbage collection. The cleared
    cache made the first TensorFlow call of every run rebuild its kernels: 12–20 ms of each
    click at 16 tokens, where the attention itself takes under 1 ms. So the clear runs only
    after the multi-head and decoder views, which build Keras layers and models whose compiled
    functions the cache would otherwise keep (the decoder's held ~100 MB each).
    """
    if getattr(_RUN, "built_models", True):
        _KERAS_CLEAR_SESSION(free_memory=free_memory)


@st.cache_resource
def _keep_tensorflow_kernels() -> bool:
    """Install `_clear_session_after_run` for Streamlit's after-run call (once per server)."""
    keras.backend.clear_session = _clear_session_after_run
    return True


def main() -> None:
    """Draw the whole page."""
    st.set_page_config(page_title="attnviz — see attention", page_icon="🔍", layout="wide")
    _freeze_import_garbage()
    _keep_tensorflow_kernels()
    restore_texts_from_url()
    start_session(presets())
    mode = mode_selector()
    _RUN.built_models = mode in ("multihead", "decoder")
    controls = sidebar_controls(mode)
    st.title("attnviz")
    st.caption(INTROS[mode])
    try:
        problem = None
        if mode == "multihead":
            multihead_panel(controls.settings)
        elif mode == "decoder":
            decoder_panel(controls.settings)
        elif mode == "sentences":
            problem = sentence_panel(controls.settings.seed)
        elif mode == "cross":
            problem = cross_panel(controls.settings.seed)
        else:
            problem = matrix_panel(presets())
        if problem is not None:
            results_panel(problem, controls.settings, controls.use_padding)
    except Exception as err:  # noqa: BLE001 - the page must stay up whatever happens
        logging.getLogger("attnviz").exception("unexpected error while drawing the page")
        st.error(
            f"Something went wrong ({type(err).__name__}). Your inputs are kept; change a "
            "setting or an input to try again.",
            icon=":material/error:",
        )
    store_texts_in_url(MODE_TEXTS[mode])
