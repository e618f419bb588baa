"""Figures: building the 4,096 × 4,096 weights heatmap, against plotly's own heatmap.

Shape letters: N = 4,096 tokens.

- attnviz: `heatmap(weights, kind="weights")` of causal (N, N) weights with token
  labels, unmasked and with the blocked cells: it pools to a 256 × 256 overview, builds the
  traces as dicts without plotly's validation and serialises to JSON (what the app sends).
- plotly: the same 256 × 256 overview pooled with one numpy reshape-and-sum, drawn as
  `go.Figure(go.Heatmap(z=pooled))` (validated, as plotly does by default, no labels, no
  blocked cells) and serialised to JSON: the least a page showing this matrix must do.

Also printed: the JSON size of attnviz's figure (target < 2 MB; the app sends it on a click).

"Download this view" of a 12 × 12 model view (random softmax weights, T = S = 128, token labels;
the figure built once, untimed): writing its standalone page, `fig.to_html(path)` (the figure's
JSON, the escaped settings, plotly.js gzipped into the page: packed anew on every write, as the
first write in a process does), against plotly's own `fig.write_html(path)` of the same figure
(plotly.js inline, as plain text). Target: under 2 s. Also printed: both files' sizes (target:
the page under 5 MB).
"""

from __future__ import annotations

import numpy as np

from bench.report import Figure, interleaved, median_ms

N = 4096
REPEATS, QUICK_REPEATS = 7, 3


def _causal_weights(n: int) -> tuple[np.ndarray, np.ndarray]:
    """`(N, N)` float32 causal weights (uniform over the allowed keys) and the blocked cells."""
    blocked = ~np.tri(n, dtype=bool)
    weights = np.where(blocked, 0.0, 1.0 / np.arange(1, n + 1)[:, None]).astype(np.float32)
    return weights, blocked


def run(quick: bool) -> list[Figure]:
    import plotly.graph_objects as go

    from attnviz.drawing.heatmap import heatmap
    from attnviz.drawing.pooling import MAX_SIDE

    weights, blocked = _causal_weights(N)
    labels = [f"token{i:05d}" for i in range(N)]
    side = MAX_SIDE

    def plotly_figure():
        pooled = weights.reshape(side, N // side, side, N // side).sum(axis=3).mean(axis=1)
        return go.Figure(go.Heatmap(z=pooled)).to_json()  # (256, 256) block masses

    def attnviz_figure(masked: bool):
        fig = heatmap(
            weights,
            row_labels=labels,
            col_labels=labels,
            kind="weights",
            blocked=blocked if masked else None,
        )
        return fig.to_json()

    subjects = {
        "attnviz": lambda: attnviz_figure(False),
        "attnviz causal": lambda: attnviz_figure(True),
        "plotly": plotly_figure,
    }
    times = interleaved(subjects, QUICK_REPEATS if quick else REPEATS, warmup=1)
    base = median_ms(times["plotly"])
    rows = []
    for name, masked in (("attnviz", False), ("attnviz causal", True)):
        size_mb = len(attnviz_figure(masked)) / 1e6
        what = "causal" if masked else "unmasked"
        rows.append(
            Figure(
                f"N=4,096 heatmap, {what}: build + JSON",
                median_ms(times[name]),
                "numpy pooling + plotly go.Heatmap",
                base,
                "ms",
                "",
                None,
                note=f"{len(times[name])} repeats",
            )
        )
        rows.append(
            Figure(
                f"N=4,096 heatmap, {what}: JSON size",
                size_mb,
                "",
                None,
                "MB",
                "< 2 MB",
                size_mb < 2.0,
                compare=False,
            )
        )
    return rows + model_view_page(quick)


def model_view_page(quick: bool) -> list[Figure]:
    """Writing a 12 × 12 model view's standalone page vs plotly's `write_html` of it."""
    import tempfile
    from pathlib import Path

    from attnviz.drawing import standalone
    from attnviz.drawing.model_view import model_view

    weights = np.random.default_rng(0).random((12, 12, 128, 128), dtype=np.float32)
    weights /= weights.sum(-1, keepdims=True)  # (L, H, T, S) softmax rows
    tokens = [f"token{i}" for i in range(128)]
    fig = model_view(weights, tokens, tokens, title="12 × 12 heads, 128 tokens")
    with tempfile.TemporaryDirectory() as folder:
        page, plain = Path(folder) / "page.html", Path(folder) / "plotly.html"

        def attnviz_page() -> None:
            standalone._packed_plotly.cache_clear()  # the whole cost, every time
            fig.to_html(page, inputs={"tokens": " ".join(tokens)})

        subjects = {"attnviz": attnviz_page, "plotly": lambda: fig.write_html(plain)}
        times = interleaved(subjects, QUICK_REPEATS if quick else REPEATS, warmup=1)
        sizes = {"attnviz": page.stat().st_size / 1e6, "plotly": plain.stat().st_size / 1e6}
    seconds = median_ms(times["attnviz"]) / 1000
    return [
        Figure("12×12 model view: standalone page written", seconds, "plotly write_html",
               median_ms(times["plotly"]) / 1000, "s", "< 2 s", seconds < 2.0,
               note=f"{len(times['attnviz'])} repeats"),
        Figure("12×12 model view: standalone page size", sizes["attnviz"], "plotly write_html",
               sizes["plotly"], "MB", "< 5 MB", sizes["attnviz"] < 5.0),
    ]  # fmt: skip


if __name__ == "__main__":
    from bench.report import table

    print(table("Figures", run(quick=False)))
