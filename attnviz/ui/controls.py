"""Sidebar controls: how attention is computed. Returns plain values; no maths here."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from attnviz.core import limits
from attnviz.core.score_kinds import SCORE_KINDS, SCORE_KINDS_BY_NAME
from attnviz.core.settings import AttentionSettings
from attnviz.ui.state import bound, initial

MODES = {  # URL value -> what the page calls it
    "matrices": "Matrices",
    "sentences": "Sentences",
    "cross": "Cross (two sentences)",
    "multihead": "Multi-head",
    "decoder": "Decoder",
    "learn": "Learn",
}
FIXED_SCORING_MODES = ("multihead", "decoder")  # scaled dot product; the way sets the masks
MASK_VALUE_CAPTIONS = {
    "-inf": "exact: a row with no allowed key gets zeros",
    "-1e9": "added in float32, as in the Keras tutorials",
}


@dataclass(frozen=True)
class Controls:
    """Everything the sidebar decides."""

    mode: str  # "matrices", "sentences" or "cross"
    settings: AttentionSettings  # score, scale, causal, window, mask value, seed
    use_padding: bool  # apply the key padding mask


def mode_selector() -> str:
    """The input mode, at the top of the sidebar."""
    names = {label: mode for mode, label in MODES.items()}
    label = st.sidebar.segmented_control(
        "Input", list(names), default=MODES["matrices"], required=True, **bound("mode")
    )
    return names.get(label, "matrices")


def _score_control() -> str:
    side = st.sidebar
    side.subheader("Scoring")
    score = side.radio(
        "Score function",
        list(SCORE_KINDS),
        captions=[SCORE_KINDS_BY_NAME[kind].caption for kind in SCORE_KINDS],
        **bound("score"),
    )
    side.latex(SCORE_KINDS_BY_NAME[score].pair_tex)
    return score


def _learn_controls() -> tuple[str, bool]:
    """Learn mode: the score its model attends with, and whether it scales (off by default:
    the shipped models do not). The source padding mask is always on; there are no others.
    The Transformer's score is fixed (scaled dot product), so it gets no score controls."""
    architecture = st.session_state.get("learn_arch") or st.query_params.get("learn_arch")
    if architecture == "Transformer":
        st.sidebar.caption(
            "The Transformer attends with Keras's MultiHeadAttention: scaled dot product, "
            "padding never attended, the decoder's self-attention causal."
        )
        return "dot", True
    score = _score_control()
    scale = st.sidebar.toggle(
        "Scale by √D",
        **bound("learn_scale"),
        help="Divide every score by the square root of the encoder's output size D.",
    )
    st.sidebar.caption("The model never attends the padding after its input: that mask is fixed.")
    return score, bool(scale)


def _score_and_mask_controls() -> tuple[str, bool, bool, int | None]:
    side = st.sidebar
    score = _score_control()
    side.subheader("Masks")
    causal = side.toggle(
        "Causal (look-ahead) mask",
        **bound("causal"),
        help="Query i may attend key j only if j ≤ i.",
    )
    use_padding = side.toggle(
        "Padding mask",
        **initial("padding", True),
        **bound("padding"),
        help="No query may attend a key marked as padding.",
    )
    window_on = side.toggle(
        "Local window", **bound("window_on"), help="Query i may attend key j only if |i − j| ≤ w."
    )
    window = None
    if window_on:
        window = int(
            side.number_input(
                "Window half-width w",
                min_value=0,
                max_value=limits.MAX_TOKENS,
                step=1,
                **initial("window", 1),
                **bound("window"),
            )
        )
    return score, bool(causal), bool(use_padding), window


def _scale_and_mask_value_controls() -> tuple[bool, str]:
    side = st.sidebar
    if st.session_state.get("mode") == MODES["multihead"]:
        side.caption(
            "Multi-head attention scores with the scaled dot product; the way of "
            "attention sets the masks."
        )
        weights = st.session_state.get("mh_weights") or st.query_params.get("mh_weights", "")
        if weights.startswith("Trained"):
            side.caption(
                "Trained weights: the Transformer's own attention (always scaled, padding "
                "never attended); the two controls below apply to random weights."
            )
    scale = side.toggle(
        "Scale by √Dk",
        **initial("scale", True),
        **bound("scale"),
        help="Divide every score by the square root of the key size Dk.",
    )
    mask_value = side.radio(
        "Masked logits become",
        list(MASK_VALUE_CAPTIONS),
        captions=list(MASK_VALUE_CAPTIONS.values()),
        **bound("mask_value"),
    )
    return bool(scale), mask_value


def sidebar_controls(mode: str) -> Controls:
    """Draw the attention controls and return what they say."""
    side = st.sidebar
    scale, mask_value = True, "-inf"
    if mode == "decoder":
        side.caption(
            "The decoder stack uses Keras's MultiHeadAttention: scaled dot product, "
            "look-ahead mask in self-attention, masked keys weighted 0."
        )
    if mode in FIXED_SCORING_MODES:
        score, causal, use_padding, window = "dot", False, True, None
    elif mode == "learn":
        (score, scale), causal, use_padding, window = _learn_controls(), False, True, None
    else:
        score, causal, use_padding, window = _score_and_mask_controls()
    if mode not in ("decoder", "learn"):
        scale, mask_value = _scale_and_mask_value_controls()
    seed = int(
        side.number_input(
            "Seed (learned weights, projections)",
            min_value=0,
            max_value=limits.MAX_SEED,
            value=0,
            step=1,
            **bound("seed"),
        )
    )
    settings = AttentionSettings(score, bool(scale), bool(causal), window, mask_value, seed)
    return Controls(mode=mode, settings=settings, use_padding=bool(use_padding))
