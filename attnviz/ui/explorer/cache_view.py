"""The explorer's "KV cache" view: causal decoding token by token. At step t one new query row
attends the t + 1 cached keys and values; the cache grows a row a step; the rows of every step,
stacked, are the full causal attention. A slider steps through. Wiring and drawing only: the
steps are `attnviz.core.kv_cache.decode_with_cache`'s.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from attnviz.core.kv_cache import decode_with_cache
from attnviz.core.settings import AttentionSettings
from attnviz.drawing.focus_row import focus_row
from attnviz.drawing.heatmap import heatmap
from attnviz.drawing.stages import SequenceView
from attnviz.ui.frame.charts import chart
from attnviz.ui.frame.messages import counted, plain, shown
from attnviz.ui.frame.presenter import chart_columns
from attnviz.ui.frame.state import slot

STEP = slot("cache_t", 0, url=True)  # the decoding step shown


def cache_view(view: SequenceView) -> None:
    """The KV-cache view of one sequence (a decoder's self-attention, dot-product score)."""
    r = view.result
    t, s = r.weights.shape
    if t != s or r.settings.score != "dot":
        st.info(
            "A KV cache serves a decoder's self-attention: each new token's query scores the "
            "keys of itself and the tokens before it. Use the same tokens for queries and keys "
            f"(here {counted(t, 'query')} and {counted(s, 'key')}) and the dot-product score "
            "to see it.",
            icon=":material/info:",
        )
        return
    settings = _decoding(r.settings)
    decoded = shown(lambda: decode_with_cache(view.query, view.key, view.value, settings=settings))
    if decoded is None:
        return
    if not 0 <= STEP.get() < t:
        STEP.set(t - 1)
    step = decoded.step(
        int(st.slider("Decoding step t (the token being generated)", 0, t - 1, **STEP.widget()))
    )
    n = step.t + 1
    visible = int(step.visible.sum())
    st.caption(
        f"Step {step.t}: the new token's query scores the {counted(n, 'cached key')} ({visible} "
        f"visible) and mixes their values. The cache holds {counted(n, 'row')}, "
        f"{step.cache_bytes:,} bytes "
        f"of float32 keys and values"
        + (f"; a rolling cache keeps only the visible rows, {step.kept_bytes:,} bytes."
           if step.kept_bytes != step.cache_bytes else ".")
    )  # fmt: skip
    rows = list(view.cols[:n])
    left, right = chart_columns(2)
    with left:
        chart(
            heatmap(step.keys[0], kind="values", title=f"The cached keys ({n} × Dk)",
                            row_labels=rows, row_title="token", col_title="feature",
                            annotate=False),
            "cache-keys",
        )  # fmt: skip
    with right:
        chart(
            focus_row(step.weights[0], col_labels=rows, blocked=~step.visible,
                              title=f"Step {step.t}'s weights over the cache"),
            "cache-weights",
        )  # fmt: skip
    _assembled(view, decoded, step.t)


def _decoding(settings: AttentionSettings) -> AttentionSettings:
    """The settings a decoding step keeps: causal always (prefix-LM is read at once, not
    decoded)."""
    return replace(settings, causal=True, prefix=None)


def _assembled(view: SequenceView, decoded, t: int) -> None:
    """The rows decoded so far, stacked: the full causal attention once t reaches the end.
    Only those rows are drawn (rows to come are not masked: they are not computed yet), over
    every key, the keys not in the cache yet grey as masked."""
    weights = decoded.weights[0][: t + 1]  # (t + 1, T)
    chart(
        heatmap(weights, kind="weights", row_labels=view.rows[: t + 1],
                        col_labels=view.cols, blocked=~decoded.visible[: t + 1],
                        blocked_label="not in the cache at this step, or masked",
                        title=f"Rows of steps 0 … {t}, stacked"),
        "cache-assembled",
    )  # fmt: skip
    full = view.result.weights
    if view.result.settings.causal and view.result.settings.prefix is None:
        gap = float(np.abs(decoded.weights[0] - full).max())
        st.caption(
            f"Every step's row, stacked, is the causal attention of the Heatmaps view: the "
            f"largest difference is {gap:.2g} (float32 rounding)."
        )
    else:
        st.caption(
            plain("Decoding is causal: switch the causal mask on (and prefix-LM off) and the "
                  "stacked rows equal the Heatmaps view's weights.")
        )  # fmt: skip


def heads_cache_view(result, b: int, rows) -> None:
    """Decoding with a KV cache in multi-head attention: every head's row at a step, and the
    cache it reads, G key/value heads instead of H (grouped-query attention keeps less)."""
    if result.shared_key_heads is None:
        return
    keys = (
        result.shared_key_heads[b] if result.shared_key_heads.ndim == 4 else result.shared_key_heads
    )
    values = (result.shared_value_heads[b] if result.shared_value_heads.ndim == 4
              else result.shared_value_heads)  # fmt: skip
    queries = result.query_heads[b] if result.query_heads.ndim == 4 else result.query_heads
    settings = _decoding(result.settings)
    decoded = shown(lambda: decode_with_cache(queries, keys, values, settings=settings))
    if decoded is None:
        return
    t = decoded.weights.shape[1]
    if not 0 <= STEP.get() < t:
        STEP.set(t - 1)
    step = decoded.step(int(st.slider("Decoding step t", 0, t - 1, **STEP.widget())))
    g, h = keys.shape[0], queries.shape[0]
    st.caption(
        f"Step {step.t}: each of the {h} query heads scores the "
        f"{counted(step.t + 1, 'cached row')} of its K/V head. The cache holds "
        f"{step.cache_bytes:,} bytes for {counted(g, 'K/V head')}; one K/V head per query head "
        f"would hold {int(decoded.mha_cache_bytes[step.t]):,}."
    )
    chart(
        heatmap(step.weights, kind="weights", row_labels=[f"head {q}" for q in range(h)],
                        col_labels=list(rows[: step.t + 1]), row_title="query head",
                        title=f"Every head's weights at step {step.t}",
                        blocked=np.broadcast_to(~step.visible, step.weights.shape)),
        "cache-heads",
    )  # fmt: skip
