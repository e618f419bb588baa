"""The explorer's "Compare" tab: the same inputs under two settings side by side (A, the
user's; B, one change away), with their difference. `inputs.attend` computes B; this draws it."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.drawing.heatmap import difference_heatmap, heatmap
from attnviz.drawing.stages import BLOCKED_LABELS, SequenceView
from attnviz.inputs.attend import COMPARISONS, Attended, other_scores
from attnviz.inputs.problem import Problem
from attnviz.ui.frame.charts import chart
from attnviz.ui.frame.messages import error, plain
from attnviz.ui.frame.presenter import chart_columns
from attnviz.ui.frame.state import slot

COMPARE = slot("compare", "mask", url=True)  # what the Compare tab changes
COMPARE_SCORE = slot("compare_score", None, url=True, kind=str)  # Compare's other score
_BY_LABEL = {label: key for key, label in COMPARISONS.items()}  # what a link's label means


def comparing() -> tuple[str, str | None]:
    """What B changes (a key of `COMPARISONS`) and the score B should use when it is the score
    (None: the first other one), as the tab's controls last said."""
    what = COMPARE.get_or_linked()  # a link's comparison, before the tab's control is drawn
    what = _BY_LABEL.get(what, what)  # a link carries the control's label
    return (what if what in COMPARISONS else COMPARE.default), COMPARE_SCORE.get_or_linked()


def show_comparison(what: str) -> None:
    """Let the Compare tab change `what` (a key of `COMPARISONS`) on its next draw."""
    if what not in COMPARISONS:
        raise ValueError(f"Unknown comparison {what!r}. Known: {', '.join(COMPARISONS)}.")
    COMPARE.set(what)


def compare_view(view: SequenceView, problem: Problem, attended: Attended) -> None:
    """The same inputs under two settings side by side, with their difference."""
    st.segmented_control(
        "Compare",
        list(COMPARISONS),
        format_func=COMPARISONS.get,
        default=COMPARE.default,
        required=True,
        **COMPARE.widget(),
    )
    other = attended.other
    if other is None:  # the tab opened on this run: B is computed on the next
        return
    if COMPARE.get() == "score":
        kinds = other_scores(attended.result.settings)
        COMPARE_SCORE.set(other.settings.score)  # the score B was computed with
        st.radio("Score function B", kinds, horizontal=True, **COMPARE_SCORE.widget())
    if attended.other_result is None:
        error(plain(f"B ({other.label}) does not fit these inputs: {attended.other_error}"))
        return
    a, bb = view.result, attended.other_result.item(problem.item)
    # three charts side by side: cell numbers only while they fit
    common = {"row_labels": view.rows, "col_labels": view.cols, "annotate": len(view.cols) <= 4}
    label = BLOCKED_LABELS[a.settings.mask_value]
    columns = chart_columns(3)
    for column, (r, title, name) in zip(
        columns, [(a, "A: current settings", "a"), (bb, f"B: {other.label}", "b")], strict=False
    ):
        with column:
            chart(
                heatmap(
                    r.weights,
                    kind="weights",
                    title=title,
                    blocked=~r.mask & (r.weights == 0),
                    blocked_label=label,
                    **common,
                ),  # fmt: skip
                f"compare-{name}",
            )
    # float32 round-off (~1e-8) is not a difference a learner should see
    wa, wb = np.round(a.weights, 6), np.round(bb.weights, 6)
    with columns[2]:
        chart(difference_heatmap(wa, wb, title="A − B", **common), "compare-diff")
    change = float(np.abs(wa - wb).max())
    st.caption(
        f"Largest change of any weight: {change:.6g}."
        if change
        else "The two settings give the same weights here."
    )
