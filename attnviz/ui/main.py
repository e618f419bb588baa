"""The page: inputs on top, results below, controls in the sidebar. Wiring only."""

from __future__ import annotations

import gc
import logging
from pathlib import Path

import streamlit as st

from attnviz.presets import load_presets
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


def main() -> None:
    """Draw the whole page."""
    st.set_page_config(page_title="attnviz — see attention", page_icon="🔍", layout="wide")
    _freeze_import_garbage()
    restore_texts_from_url()
    start_session(presets())
    mode = mode_selector()
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
