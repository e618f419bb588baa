"""The explorer's "Positions" view: what the position scheme does. Under RoPE, first the Q and K
it rotated (the scores are computed from them). Then every token is made the same, so the scores
show the pure position pattern (RoPE: constant along each diagonal, a function of i − j; ALiBi:
each head's penalty). Wiring and drawing only."""

from __future__ import annotations

import streamlit as st

from attnviz.drawing.positions import offset_lines, probe_heatmap
from attnviz.drawing.stages import SequenceView, rotated_figures
from attnviz.inputs.probe import position_probe
from attnviz.ui.frame.charts import chart
from attnviz.ui.frame.messages import shown
from attnviz.ui.frame.presenter import chart_columns, where_settings


def position_view(view: SequenceView, sinusoidal: bool = False) -> None:
    """The position pattern of the explorer's scheme, on identical tokens of this length;
    `sinusoidal`: the inputs are sentences whose embeddings carry the sinusoidal encoding."""
    s = view.result.settings
    if s.position == "none":  # the tab stays, so that choosing a scheme moves nothing else
        before = (
            "The sentences carry their positions in the sinusoidal encoding added to the "
            "embeddings before Q, K and V are made (the Q, K, V tab shows it); no scheme acts "
            "inside attention itself. "
            if sinusoidal
            else "No position scheme is on. "
        )
        st.info(
            f"{before}Choose RoPE or ALiBi under **Positions** {where_settings()} to see the "
            "pattern it alone gives the scores.",
            icon=":material/info:",
        )
        return
    if s.position == "rope":
        _rotated(view)
    t, d = view.result.weights.shape[0], view.query.shape[1]
    heads = s.alibi_heads if s.position == "alibi" else 1
    probe = shown(lambda: position_probe(t, d, s.position, num_heads=heads,
                                         rope_theta=s.rope_theta))  # fmt: skip
    if probe is None:
        return
    st.caption(
        f"{t} copies of one token (all features 1), scored with the dot product under "
        + ("RoPE: each diagonal is one value, because a rotation by i·ω against one by j·ω "
           "leaves only the angle (i − j)·ω." if s.position == "rope" else
           f"ALiBi: the scores are the penalty −m·|i − j| itself, one slope per head; this "
           f"page uses head {s.alibi_head}'s.")
    )  # fmt: skip
    left, right = chart_columns(2)
    with left:
        chart(probe_heatmap(probe, s.alibi_head if s.position == "alibi" else 0), "probe")
    with right:
        if probe.relative:
            chart(offset_lines(probe), "probe-offsets")


def _rotated(view: SequenceView) -> None:
    """This page's Q and K after RoPE's rotation, side by side."""
    st.caption(
        "Your Q and K after RoPE turned each pair of features (p, p + D/2) by an angle that "
        "grows with the token's position: the scores in the Heatmaps tab are computed from "
        "these."
    )
    for column, (name, fig) in zip(chart_columns(2), rotated_figures(view).items(), strict=True):
        with column:
            chart(fig, name.replace(" ", "-"))
