"""The floor of the app benchmark: the least Streamlit page that shows what attnviz shows.

Shape letters: N tokens (T = S = N), D = 64 features.

Random Q, K, V of N × 64 drawn from a seed exactly as attnviz's "Random" source draws them,
attention in plain float32 numpy with an optional causal mask, and the plotly charts attnviz's
Heatmaps tab draws for the same settings, with the same titles and sizes: raw scores, scaled
scores, mask, masked scores, weights and output (attnviz always draws all six), two per row,
pooled to at most 256 cells a side, plus the focus-row bar chart above 256 tokens. No
TensorFlow, no input checks, no hover text, plotly's default ticks and no other widgets:
whatever attnviz takes beyond this page is its own overhead.

The controls are the ones the benchmark drives, with attnviz's labels and URL parameters: the
"Causal (look-ahead) mask" toggle (`causal`), "Queries T" (`r_t`, here T = S = N) and "Seed"
(`r_seed`). Run from `bench/`: `streamlit run floor_app.py`, then open `/?r_t=256&r_seed=0`.
"""

from __future__ import annotations

import warnings

import numpy as np
import plotly.graph_objects as go
import streamlit as st

D = 64  # features of Q, K and V
MAX_SIDE = 256  # most cells a side, as attnviz's pooling.MAX_SIDE
MAX_TOKENS = 4096  # as attnviz's limits.APP_MAX_TOKENS


def random_qkv(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q, K, V `(N, D)` float32, uniform in [0, 1): the same numbers as attnviz's draw."""
    rng = np.random.default_rng(seed)
    return tuple(rng.random((n, D)).astype(np.float32) for _ in range(3))


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> dict[str, np.ndarray]:
    """Every stage attnviz shows, in float32; masked logits are -inf."""
    raw = q @ k.T  # (N, D) x (D, N) -> (N, N)
    scaled = raw / np.float32(np.sqrt(D))
    mask = np.tri(*raw.shape, dtype=bool) if causal else np.ones(raw.shape, dtype=bool)
    masked = np.where(mask, scaled, -np.inf).astype(np.float32)
    exps = np.exp(masked - masked.max(axis=1, keepdims=True))  # (N, N)
    weights = exps / exps.sum(axis=1, keepdims=True)
    output = weights @ v  # (N, N) x (N, D) -> (N, D)
    return {"raw": raw, "scaled": scaled, "mask": mask, "masked": masked, "weights": weights,
            "output": output}  # fmt: skip


def pooled(matrix: np.ndarray) -> np.ndarray:
    """`(T, S)` -> at most `(256, 256)` block means; NaN (blocked) cells are left out."""
    t, s = matrix.shape
    bt, bs = -(-t // MAX_SIDE), -(-s // MAX_SIDE)  # block sizes (N is a power of two here)
    if bt == bs == 1:
        return matrix.astype(np.float32)
    blocks = matrix[: t // bt * bt, : s // bs * bs].reshape(t // bt, bt, s // bs, bs)
    if not np.isnan(blocks).any():
        return blocks.mean(axis=(1, 3), dtype=np.float32)
    with warnings.catch_warnings():  # a fully blocked block gives NaN, as wanted
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(blocks, axis=(1, 3)).astype(np.float32)


def heatmap(matrix: np.ndarray, title: str, colorscale: str) -> go.Figure:
    """One plain heatmap (NaN cells are gaps) with attnviz's height rule (300 to 900 px)."""
    z = pooled(matrix)
    fig = go.Figure(go.Heatmap(z=z, colorscale=colorscale))
    height = int(min(900, max(300, 160 + 28 * z.shape[0])))
    fig.update_layout(title=dict(text=title), height=height, yaxis=dict(autorange="reversed"))
    return fig


def figures(stages: dict[str, np.ndarray], causal: bool) -> list[go.Figure]:
    """The charts of attnviz's Heatmaps tab for these settings, in its order."""
    blocked = ~stages["mask"]  # drawn as gaps (NaN)
    charts = [
        heatmap(stages["raw"], "Raw scores", "RdBu"),
        heatmap(stages["scaled"], "Scaled scores (× 0.125)", "RdBu"),
    ]
    charts.append(heatmap(stages["mask"].astype(np.float32), "Mask (allowed keys)", "Viridis"))
    charts.append(
        heatmap(
            np.where(blocked, np.nan, stages["masked"]),
            "Masked scores (what softmax sees)",
            "RdBu",
        )
    )
    weights = np.where(blocked, np.nan, stages["weights"]) if causal else stages["weights"]
    charts.append(heatmap(weights, "Attention weights", "Viridis"))
    charts.append(heatmap(stages["output"], "Output (context vectors)", "RdBu"))
    return charts


def focus_row(weights: np.ndarray) -> go.Figure:
    """The bar chart of query 0's exact weights (attnviz draws it above 256 tokens)."""
    fig = go.Figure(go.Bar(y=weights[0].astype(np.float64)))
    fig.update_layout(title=dict(text="Weights of query 0 (0)"), height=300)
    return fig


def number(label: str, key: str, default: int, low: int, high: int) -> int:
    """A number input bound to the URL parameter `key`, like attnviz's random-input fields."""
    return int(st.number_input(label, low, high, default, step=1, key=key, bind="query-params"))


def main() -> None:
    """Draw the page: the toggle in the sidebar, the charts two per row."""
    st.set_page_config(page_title="attnviz floor", layout="wide")
    causal = st.sidebar.toggle("Causal (look-ahead) mask", key="causal", bind="query-params")
    st.title("attnviz floor")
    left, right = st.columns(2)
    with left:
        n = number("Queries T", "r_t", 16, 1, MAX_TOKENS)
    with right:
        seed = number("Seed", "r_seed", 0, 0, 2**31 - 1)
    stages = attention(*random_qkv(n, seed), causal)
    st.caption(f"{n} queries × {n} keys · D {D} · numpy float32")
    charts = figures(stages, causal)
    for start in range(0, len(charts), 2):
        for column, fig in zip(st.columns(2), charts[start : start + 2], strict=False):
            with column:
                st.plotly_chart(fig, theme="streamlit")
    if n > MAX_SIDE:
        st.plotly_chart(focus_row(stages["weights"]), theme="streamlit")


main()
