"""The floor of the first-open benchmark: the least Streamlit page that draws a given set of
charts, for a first visit to compare with a first visit to an attnviz page.

Shape letters: T rows, S columns of one heatmap; K lines of P points of one line chart.

The URL's `spec` lists the charts of the attnviz page measured, one `n.t.s` per chart: n heatmap
traces of T × S cells each, or, with n = 0, a chart of no heatmap (attnviz's curves and bars)
as `0.k.p`, K traces of at most P points (e.g. `6.16.16,1.5.5,384.5.5,0.3.40`). This page draws
as many charts, each with as many heatmap traces of random numbers (numpy float32, from
`seed`) in subplots of one figure, or as many lines of as many random points, two charts a row.
Plain dict traces, not validated (as attnviz's grids are built): no TensorFlow, no tick labels,
no hover text, no other widgets, so whatever attnviz takes beyond this page is its own. Run
from `bench/`: `streamlit run floor_charts.py`, then open `/?spec=6.16.16`.

For a page opened inside the app (a link followed without reloading the page), open
`/start?next=6.16.16`: a page with one link, "Open the charts", to the charts of `next`.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st

CELL_PX, GAP_PX = 60, 8  # px of one subplot (attnviz's grid cells: 56 and up) and between
PER_ROW = 16  # subplots a row in one chart
BARE = dict(showticklabels=False, ticks="")  # no tick labels: the least a heatmap needs


def parse_spec(spec: str) -> list[tuple[int, int, int]]:
    """`(heatmaps, T, S)` per chart from "n.t.s,n.t.s,…", `(0, K, P)` for a chart of lines
    (nothing for an empty spec)."""
    charts = []
    for part in filter(None, spec.split(",")):
        n, t, s = (int(x) for x in part.split("."))
        charts.append((max(0, n), max(1, t), max(1, s)))
    return charts


def chart(rng: np.random.Generator, n: int, t: int, s: int) -> go.Figure:
    """One figure of `n` heatmaps of `t × s` random numbers, `PER_ROW` subplots a row; with
    `n` = 0, `lines(rng, t, s)`."""
    if n == 0:
        return lines(rng, t, s)
    rows, cols = math.ceil(n / PER_ROW), min(n, PER_ROW)
    traces, layout = [], {}
    for k in range(n):
        row, col = divmod(k, PER_ROW)
        x, y = ("x", "y") if k == 0 else (f"x{k + 1}", f"y{k + 1}")
        z = rng.random((t, s), dtype=np.float32)
        traces.append(dict(type="heatmap", z=z, xaxis=x, yaxis=y, coloraxis="coloraxis"))
        suffix = "" if k == 0 else str(k + 1)
        x0, y1 = col / cols, 1 - row / rows
        layout[f"xaxis{suffix}"] = dict(domain=[x0, x0 + 0.9 / cols], anchor=y, **BARE)
        layout[f"yaxis{suffix}"] = dict(domain=[y1 - 0.9 / rows, y1], anchor=x, **BARE)
    layout |= dict(
        coloraxis=dict(colorscale="Viridis", cmin=0, cmax=1),
        width=cols * (CELL_PX + GAP_PX) + 100,
        height=rows * (CELL_PX + GAP_PX) + 60,
        margin=dict(l=30, r=70, t=30, b=30),
    )
    return go.Figure(data=traces, layout=layout, _validate=False)


def lines(rng: np.random.Generator, k: int, p: int) -> go.Figure:
    """One figure of `k` lines of `p` random points each, with markers (as attnviz's curves)."""
    x = np.arange(p)
    traces = [dict(type="scatter", x=x, y=rng.random(p, dtype=np.float32), mode="lines+markers")
              for _ in range(k)]  # fmt: skip
    layout = dict(xaxis=BARE, yaxis=BARE, showlegend=False, margin=dict(l=30, r=30, t=30, b=30))
    return go.Figure(data=traces, layout=layout, _validate=False)


LINK = "Open the charts"  # the start page's one link


def main() -> None:
    """The two pages: the charts (the default page) and a start page linking to them."""
    st.set_page_config(page_title="attnviz first-open floor", layout="wide")
    charts_page = st.Page(draw_charts, title="charts", url_path="charts", default=True)
    start_page = st.Page(lambda: draw_start(charts_page), title="start", url_path="start")
    st.navigation([charts_page, start_page], position="hidden").run()


def draw_start(charts_page: st.Page) -> None:
    """One link to the charts that the URL's `next` names (followed inside the app)."""
    st.title("attnviz first-open floor")
    st.page_link(charts_page, label=LINK, query_params={"spec": st.query_params.get("next", "")})


def draw_charts() -> None:
    """Draw the charts the URL's `spec` asks for."""
    st.title("attnviz first-open floor")
    charts = parse_spec(st.query_params.get("spec", "1.16.16"))
    rng = np.random.default_rng(int(st.query_params.get("seed", 0)))
    st.caption(f"{len(charts)} charts, {sum(n for n, _, _ in charts)} heatmaps")
    for start in range(0, len(charts), 2):
        pair = list(enumerate(charts))[start : start + 2]
        for column, (index, (n, t, s)) in zip(st.columns(2), pair, strict=False):
            with column:
                st.plotly_chart(chart(rng, n, t, s), key=f"chart-{index}", width="content")


if __name__ == "__main__":  # as `streamlit run` runs it; the benchmark imports `LINK`
    main()
