"""The explorer's results: the summary line and the tabs (heatmaps, lines, row statistics and
downloads here; Q, K, V, step by step, positions, KV cache, tiled and compare in their own
modules).

Each view draws one batch item (the sequence chosen in the input panel). Only the open tab is
drawn, so a click repaints what the user looks at and nothing else. The matrices, sentences and
cross modes build a `Problem` and hand it to `results_panel`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from attnviz.core import limits
from attnviz.core.settings import AttentionSettings
from attnviz.core.stats import FULLY_MASKED_WHY, row_stats
from attnviz.drawing.export import matrix_to_csv, result_to_json
from attnviz.drawing.pooling import MAX_SIDE
from attnviz.drawing.stages import HeatmapsFigures, SequenceView, heatmaps_figures
from attnviz.inputs.attend import Attended, attend
from attnviz.inputs.problem import Problem
from attnviz.ui.controls.sidebar import Controls
from attnviz.ui.explorer.cache_view import cache_view
from attnviz.ui.explorer.compare_view import compare_view, comparing
from attnviz.ui.explorer.position_view import position_view
from attnviz.ui.explorer.qkv_view import qkv_view
from attnviz.ui.explorer.steps_view import steps_view
from attnviz.ui.explorer.tiled_view import tiled_view
from attnviz.ui.frame.charts import chart, fit_toggle, folded, line_view
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import counted, error, plain
from attnviz.ui.frame.presenter import chart_columns, presenting, where_settings
from attnviz.ui.frame.state import slot
from attnviz.ui.frame.tables import data_table
from attnviz.ui.frame.tabs import open_tab
from attnviz.ui.frame.takeaway import view_download

if TYPE_CHECKING:
    from attnviz.core.attention import AttentionResult

VIEWS = (
    "Heatmaps", "Q, K, V", "Lines", "Step by step", "Positions", "KV cache", "Tiled", "Compare",
    "Row statistics", "Download",
)  # fmt: skip
MADE_FROM_TOKENS = "Q, K, V"  # the view of sentence inputs only: how Q, K and V were made
VIEW = slot("view", VIEWS[0], url=True)  # the open tab
FOCUS = slot("focus", 0, url=True)  # the exact row under pooled overviews
FIT_WEIGHTS = slot("fit_scale", False, url=True)  # colour weights from 0 to their largest
RULES_OPEN = slot("mask_rules_open", False)  # "The mask, rule by rule" is open


def show_view(name: str) -> None:
    """Open the tab `name` on the next draw (a callback of another page)."""
    if name not in VIEWS:
        raise ValueError(f"Unknown view {name!r}. Views: {', '.join(VIEWS)}.")
    VIEW.set(name)


def results_panel(problem: Problem, controls: Controls) -> None:
    """Compute everything the open view needs (A, and B when comparing), then draw it."""
    if controls.settings is None:  # the sidebar says which control does not fit
        st.info(f"Change the setting pointed out {where_settings()} to see the results.")
        return
    with back_end():  # TensorFlow, with a word while it loads
        from attnviz.core import attention  # noqa: F401 - what `attend` computes with
    # a link's tab and comparison are known before their widgets are drawn below: B is
    # computed now, on this run, not after a click that nothing would make
    compare, score = comparing() if VIEW.get_or_linked() == "Compare" else (None, None)
    try:
        attended = attend(problem, controls.settings, controls.use_padding, compare, score,
                          max_cells=limits.APP_SCORE_CELLS)  # fmt: skip
    except ValueError as err:
        error(plain(f"These inputs and settings do not fit together: {err}"))
        return
    _draw(problem, attended)


def _draw(problem: Problem, attended: Attended) -> None:
    """The summary line, then the open tab of the chosen batch item."""
    result = attended.result
    query, key, value, padding = problem.sequence(problem.item)
    view = SequenceView(
        result.item(problem.item),
        query,
        key,
        value,
        problem.query_labels[problem.item],
        problem.key_labels[problem.item],
        padding,
    )
    _summary(problem, attended, view)
    draws = {
        "Heatmaps": heatmaps_view,
        MADE_FROM_TOKENS: lambda v: qkv_view(problem),
        "Lines": lines_view,
        "Step by step": steps_view,
        "Positions": lambda v: position_view(v, _sinusoidal(problem)),
        "KV cache": cache_view,
        "Tiled": tiled_view,
        "Compare": lambda v: compare_view(v, problem, attended),
        "Row statistics": stats_view,
        "Download": lambda v: download_view(v, problem, result),
    }
    if problem.query_encoding is None:  # typed Q, K and V were not made from anything
        del draws[MADE_FROM_TOKENS]
    name = open_tab(list(draws), key=VIEW.key, bind="query-params")
    about = functools.partial(_taken, problem, attended, view, name)
    with view_download(f"attnviz explorer: {name}", "explorer-take-away", about):
        draws[name](view)


def _taken(problem: Problem, attended: Attended, view: SequenceView, name: str) -> dict:
    """What "Download this view" writes beside the charts: the settings, and the inputs of the
    item viewed (the sentences, when they made them; Q, K and V as CSV with their labels)."""
    result = attended.result
    settings = {
        "view": name,
        "batch item": f"{problem.item} of {problem.batch}",
        **{f.name: getattr(result.settings, f.name) for f in dataclasses.fields(result.settings)},
        "scale factor": f"{result.scale_factor:.6g}",
        "padding keys hidden": attended.padding_used,
    }
    inputs, queries, keys = {}, problem.query_encoding, problem.key_encoding
    if queries is not None:  # one encoding for self-attention, two for cross
        inputs["sentences" if keys is queries else "query sentences"] = "\n".join(queries.sentences)
    if keys is not None and keys is not queries:
        inputs["key and value sentences"] = "\n".join(keys.sentences)
    inputs["Q (queries)"] = matrix_to_csv(view.query, view.rows)
    inputs["K (keys)"] = matrix_to_csv(view.key, view.cols)
    inputs["V (values)"] = matrix_to_csv(view.value, view.cols)
    return {"settings": settings, "inputs": inputs}


def _sinusoidal(problem: Problem) -> bool:
    """Whether the inputs are sentences encoded with the sinusoidal positions."""
    encoding = problem.query_encoding
    return encoding is not None and encoding.use_positional


def _masks_in_words(settings: AttentionSettings, padding: bool) -> str:
    """The active masks in a few words ("no mask" when none is)."""
    words = []
    if settings.prefix is not None:
        first = "the first key" if settings.prefix == 1 else f"the first {settings.prefix} keys"
        words.append(f"prefix-LM: {first} seen by all, causal after")
    elif settings.causal:
        words.append("causal: each query sees keys at or before its position")
    if settings.window is not None:
        words.append(f"local window: keys within {counted(settings.window, 'position')}")
    if settings.chunk is not None:
        words.append(f"chunks of {counted(settings.chunk, 'key')}: keys in the query's own chunk")
    if settings.sinks is not None:
        first = "the first key" if settings.sinks == 1 else f"the first {settings.sinks} keys"
        words.append(f"{first} always seen (sinks)")
    if settings.documents is not None:
        packed = counted(len(settings.documents), "packed document")
        words.append(f"{packed}: keys of the query's own")
    if padding:
        words.append("padding keys hidden")
    return "; ".join(words) or "no mask: every query sees every key"


def _summary(problem: Problem, attended: Attended, view: SequenceView) -> None:
    result = attended.result
    t, s = view.result.weights.shape
    b = problem.batch
    scale = (
        f"scores × 1/√{result.d_k} = {result.scale_factor:.6g}"
        if result.settings.scale
        else "no scaling"
    )
    batch = f"batch of {b}, " if b > 1 else ""
    st.caption(
        f"{batch}{counted(t, 'query')} × {counted(s, 'key')} · Dq {view.query.shape[1]}, "
        f"Dk {result.d_k}, "
        f"Dv {view.value.shape[1]} · {result.settings.score} score · {scale} · "
        f"{_masks_in_words(result.settings, attended.padding_used)}"
    )
    rows = np.flatnonzero(view.result.fully_masked)
    if rows.size:
        names = ", ".join(f"{i} ({plain(view.rows[i])})" for i in rows[:10])
        more = f" and {rows.size - 10} more" if rows.size > 10 else ""
        st.warning(
            f"Query rows with no visible key: {names}{more}. "
            f"{FULLY_MASKED_WHY[result.settings.mask_value]}",
            icon=":material/block:",
        )


def heatmaps_view(view: SequenceView) -> None:
    """Every stage as a heatmap, two per row (one per row in the presenter view); with several
    mask rules, each rule alone; under a pooled overview, one query row's exact weights.

    The controls first (the stages above them get their places on the page now), then every
    figure in one call, then the charts."""
    fit = fit_toggle(FIT_WEIGHTS)
    # The scores, ALiBi's bias, the rest: each group in a place of its own, kept (empty) when
    # the scheme has no such stage, so that switching the scheme adds or removes its chart
    # without moving the others (moved charts are drawn again from scratch)
    caption, groups = st.empty(), [st.container() for _ in range(3)]
    rules = _mask_rules(view)
    box = _rules_box(len(rules))
    focus = _focus_control(view)
    shown = rules if box is not None else None
    figures = heatmaps_figures(view, fit_scale=fit, rules=shown, focus=focus)
    caption.caption(figures.caption)
    for place, name, fig, key in _places(figures, groups, box):
        with place:
            chart(fig, name, key=key)


def _mask_rules(view: SequenceView) -> dict[str, np.ndarray]:
    """Each mask rule that is on, alone, by name: `(T, S)` bool, True = allowed."""
    t, s = view.result.weights.shape
    spec = view.result.settings.mask_spec
    parts = spec.parts(np.arange(t), np.arange(s))
    order = "prefix-LM" if spec.prefix is not None else "causal"
    rules = {order: parts.order, "window": parts.window, "chunks": parts.chunk,
             "sinks": parts.sinks, "documents": parts.documents}  # fmt: skip
    return {name: rule for name, rule in rules.items() if rule is not None}


def _rules_box(n_rules: int):
    """With several mask rules on, the expander that draws each alone: the place to draw them
    in while it is open; None while it is folded or with fewer than two rules."""
    if n_rules < 2:
        return None
    box = folded("The mask, rule by rule", RULES_OPEN.key)
    if box is not None:
        box.caption(
            "Each rule alone (blue: allowed). Together: order AND ((window AND chunks) OR "
            "sinks) AND documents, then the padding keys are hidden."
        )
    return box


def _focus_control(view: SequenceView) -> int | None:
    """The query row whose exact weights go under pooled overviews; None without overviews."""
    t, s = view.result.weights.shape
    if max(t, s) <= MAX_SIDE:
        return None
    st.info(
        "These heatmaps are overviews: each cell summarises a block. Pick a query row to "
        "see its exact weights."
    )
    return int(st.number_input("Focus on query row", 0, t - 1, 0, **FOCUS.index_widget(t)))


def _places(figures: HeatmapsFigures, groups: list, rules) -> list[tuple]:
    """Where each chart goes, in the order they are drawn: `(place, name, figure, key)`. The
    stages `per_row` a row in their group, the rules three a row in their expander, the focus
    row last."""
    per_row = 1 if presenting() else 2
    places = []
    for group, figs in zip(groups, figures.groups, strict=True):
        names = list(figs)
        for start in range(0, len(names), per_row):
            with group:
                columns = st.columns(per_row)
            for column, name in zip(columns, names[start : start + per_row], strict=False):
                places.append((column, name.replace(" ", "-"), figs[name], None))
    if figures.rules:
        with rules:
            columns = chart_columns(min(len(figures.rules), 3))
        for n, (name, fig) in enumerate(figures.rules.items()):
            places.append((columns[n % len(columns)], f"mask-{name}", fig, f"mask-rule-{name}"))
    if figures.focus is not None:
        places.append((st.empty(), "focus-row", figures.focus, None))  # under its control
    return places


def lines_view(view: SequenceView) -> None:
    """The weights as lines from each query to the keys it attends (a tab of its own: the
    heatmaps redraw on every click without reloading it)."""
    st.caption("The attention weights as lines from queries to keys, as in BertViz.")
    line_view(view.result.weights, view.rows, view.cols)


def stats_view(view: SequenceView) -> None:
    """Entropy and largest weight of each query row, fully masked rows flagged."""
    r = view.result
    stats = row_stats(r.weights, r.mask)
    data_table(
        {
            "query": [f"{i}: {label}" for i, label in enumerate(view.rows)],
            "entropy (bits)": np.round(stats.entropy_bits, 4),
            "max weight": np.round(stats.max_weight, 6),
            "most attended key": [view.cols[j] if j >= 0 else "—" for j in stats.argmax],
            "allowed keys": stats.allowed_keys,
            "no visible key": stats.fully_masked,
        },
    )
    st.caption(
        f"Entropy 0 bits: one key takes all the weight; log2(S) = "
        f"{np.log2(r.weights.shape[1]):.3g} bits: uniform over "
        + ("the one key." if r.weights.shape[1] == 1 else f"all {r.weights.shape[1]} keys.")
    )
    if stats.fully_masked.any():
        st.warning(FULLY_MASKED_WHY[r.settings.mask_value], icon=":material/block:")


def download_view(view: SequenceView, problem: Problem, result: AttentionResult) -> None:
    """Every matrix of the viewed item as CSV, the whole result as JSON."""
    r = view.result
    matrices = {
        "raw_scores": r.raw_scores,
        "scores": r.scores,
        "mask": r.mask,
        "masked_scores": r.masked_scores,
        "weights": r.weights,
    }
    columns = st.columns(3)
    for n, (name, matrix) in enumerate(matrices.items()):
        columns[n % 3].download_button(
            f"{name}.csv",
            lambda m=matrix: matrix_to_csv(m, view.rows, view.cols),
            file_name=f"attnviz-{name}.csv",
            mime="text/csv",
            on_click="ignore",
        )
    columns[2].download_button(
        "output.csv",
        lambda: matrix_to_csv(r.output, view.rows),
        file_name="attnviz-output.csv",
        mime="text/csv",
        on_click="ignore",
    )

    def whole() -> str:
        return result_to_json(
            result, query=problem.query, key=problem.key, value=problem.value,
            query_labels=view.rows, key_labels=view.cols,
        )  # fmt: skip

    st.download_button(
        "Whole result (JSON)",
        whole,
        file_name="attnviz-result.json",
        mime="application/json",
        on_click="ignore",
        type="primary",
    )
    st.caption("Every chart's toolbar also saves it as a PNG (camera icon).")
