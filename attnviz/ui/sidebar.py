"""Sidebar controls: how attention is computed. Each returns plain values; no maths here.

The explorer modes draw all of them (`explorer_controls`); Multi-head draws scaling, the masked
logits and the seed (`multihead_controls`), the Decoder and Learn only what applies to them. The
controls' slots are declared here and only written here: a preset or "open in the explorer" asks
for settings through `apply_settings`.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from attnviz.core import limits
from attnviz.core.score_kinds import SCORE_KINDS, SCORE_KINDS_BY_NAME
from attnviz.core.settings import AttentionSettings
from attnviz.ui.state import slot

DEFAULTS = AttentionSettings()
SCORE = slot("score", DEFAULTS.score, url=True)
SCALE = slot("scale", DEFAULTS.scale, url=True)
CAUSAL = slot("causal", DEFAULTS.causal, url=True)
PADDING = slot("padding", True, url=True)  # apply the key padding mask
WINDOW_ON = slot("window_on", DEFAULTS.window is not None, url=True)
WINDOW = slot("window", 1, url=True)  # the half-width w once the window is on
MASK_VALUE = slot("mask_value", DEFAULTS.mask_value, url=True)
SEED = slot("seed", DEFAULTS.seed, url=True)
SETTABLE = {  # what `apply_settings` may set: a preset's "settings" keys
    s.key: s for s in (SCORE, SCALE, CAUSAL, PADDING, WINDOW_ON, WINDOW, MASK_VALUE)
}
SIDEBAR_TEX_CHARS = 60  # TeX longer than this (the concat score) is broken over two lines
MASK_VALUE_CAPTIONS = {
    "-inf": "exact: a row with no allowed key gets zeros",
    "-1e9": "added in float32, as in the Keras tutorials",
}


@dataclass(frozen=True)
class Controls:
    """Everything the explorer's sidebar decides."""

    settings: AttentionSettings  # score, scale, causal, window, mask value, seed
    use_padding: bool  # apply the key padding mask


def apply_settings(values: dict[str, object]) -> None:
    """Set controls before they are drawn (a preset, "open in the explorer"): `values` maps a
    control's key ("score", "scale", "causal", "padding", "window_on", "window", "mask_value")
    to its value; the others go back to their defaults."""
    unknown = set(values) - set(SETTABLE)
    if unknown:
        raise ValueError(
            f"Unknown control(s) {sorted(unknown)}. Known: {sorted(SETTABLE)}. Give only these."
        )
    for key, control in SETTABLE.items():
        control.set(values.get(key, control.default))


def settings_are(values: dict[str, object]) -> bool:
    """Whether the controls say what `values` asks for (the others at their defaults); the
    window's width counts only while the window is on."""
    wanted = {key: values.get(key, control.default) for key, control in SETTABLE.items()}
    if not wanted[WINDOW_ON.key]:
        wanted.pop(WINDOW.key)
    return all(SETTABLE[key].get() == value for key, value in wanted.items())


def changed_settings(values: dict[str, object]) -> dict[str, str]:
    """`values` that differ from the controls' defaults, as URL fields ("true", "-1e9")."""
    return {
        key: str(value).lower() if isinstance(value, bool) else str(value)
        for key, value in values.items()
        if SETTABLE[key].default != value
    }


def _fit_sidebar(tex: str) -> str:
    """A formula broken after its "=" when it is too long for the sidebar on one line."""
    left, equals, right = tex.partition(" = ")
    if len(tex) <= SIDEBAR_TEX_CHARS or not equals:
        return tex
    return rf"\begin{{aligned}}&{left} = \\ &\quad {right}\end{{aligned}}"


def score_control() -> str:
    """The score function, with its formula."""
    side = st.sidebar
    side.subheader("Scoring")
    score = side.radio(
        "Score function",
        list(SCORE_KINDS),
        captions=[SCORE_KINDS_BY_NAME[kind].caption for kind in SCORE_KINDS],
        **SCORE.widget(),
    )
    side.latex(_fit_sidebar(SCORE_KINDS_BY_NAME[score].pair_tex))
    return score


def _mask_controls() -> tuple[bool, bool, int | None]:
    side = st.sidebar
    side.subheader("Masks")
    causal = side.toggle(
        "Causal (look-ahead) mask",
        help="Query i may attend key j only if j ≤ i.",
        **CAUSAL.widget(),
    )
    use_padding = side.toggle(
        "Padding mask",
        help="No query may attend a key marked as padding.",
        **PADDING.widget("value"),
    )
    window_on = side.toggle(
        "Local window", help="Query i may attend key j only if |i − j| ≤ w.", **WINDOW_ON.widget()
    )
    window = None
    if window_on:
        window = int(
            side.number_input(
                "Window half-width w",
                min_value=0,
                max_value=limits.MAX_TOKENS,
                step=1,
                **WINDOW.widget("value"),
            )
        )
    return bool(causal), bool(use_padding), window


def scale_and_mask_value_controls() -> tuple[bool, str]:
    """√Dk scaling and what masked logits become."""
    side = st.sidebar
    scale = side.toggle(
        "Scale by √Dk",
        help="Divide every score by the square root of the key size Dk.",
        **SCALE.widget("value"),
    )
    mask_value = side.radio(
        "Masked logits become",
        list(MASK_VALUE_CAPTIONS),
        captions=list(MASK_VALUE_CAPTIONS.values()),
        **MASK_VALUE.widget(),
    )
    return bool(scale), mask_value


def seed_control() -> int:
    """The seed of learned weights and projections."""
    return int(
        st.sidebar.number_input(
            "Seed (learned weights, projections)",
            min_value=0,
            max_value=limits.MAX_SEED,
            value=0,
            step=1,
            **SEED.widget(),
        )
    )


def explorer_controls() -> Controls:
    """Every control of the explorer modes (matrices, sentences, cross)."""
    score = score_control()
    causal, use_padding, window = _mask_controls()
    scale, mask_value = scale_and_mask_value_controls()
    settings = AttentionSettings(score, scale, causal, window, mask_value, seed_control())
    return Controls(settings, use_padding)


def multihead_controls(trained: bool) -> AttentionSettings:
    """Multi-head: the scaled dot product, the way sets the masks; scaling, masked logits and
    the seed apply to random weights (`trained`: the weights are a trained Transformer's)."""
    side = st.sidebar
    side.caption(
        "Multi-head attention scores with the scaled dot product; the way of attention sets "
        "the masks."
    )
    if trained:  # nothing below would change the trained weights: the controls are hidden
        side.caption(
            "Trained weights: the Transformer's own attention, always scaled by √Dk, padding "
            "never attended. Scaling, masked logits and the seed apply to random weights."
        )
        return AttentionSettings("dot")
    scale, mask_value = scale_and_mask_value_controls()
    return AttentionSettings("dot", scale, False, None, mask_value, seed_control())
