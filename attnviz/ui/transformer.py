"""Multi-head attention, the three ways of attention, and the Transformer decoder stack.

Two panels: `multihead_panel` (one multi-head attention block, the way chosen) and
`decoder_panel` (N stacked decoder layers as in the seed tutorial). Wiring and drawing only.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import streamlit as st

from attnviz.core import limits
from attnviz.core.settings import AttentionSettings
from attnviz.drawing import figures
from attnviz.inputs.text import encode_sentences
from attnviz.transformer.decoder import DecoderResult, run_decoder
from attnviz.transformer.ways import ATTENTION_WAYS, compute_way
from attnviz.ui.inputs import _parse, paired, sequence_selector
from attnviz.ui.model_view import HeadsView, model_view_panel
from attnviz.ui.state import bound, kept
from attnviz.ui.trained import char_labels, shipped_trace, weights_choice
from attnviz.ui.views import line_view

HEADS_PER_ROW = 4
DECODER_VIEWS = ("One layer", "Model view")  # one layer's heads, or every layer's at once
DECODER_FIELDS = (  # (session key, label, default = the seed tutorial's size, min, max)
    ("dec_batch", "Batch", 64, 1, 64),  # the app's own bounds: a few seconds of CPU at most
    ("dec_t", "Target tokens T", 5, 1, 64),
    ("dec_s", "Source tokens S", 5, 1, 64),
    ("dec_vocab", "Vocabulary", 20, 2, limits.MAX_VOCAB),
    ("dec_h", "Heads h", 8, 1, limits.MAX_HEADS),
    ("dec_dmodel", "d_model", 512, 1, limits.MAX_FEATURES),
    ("dec_dff", "d_ff", 2048, 1, limits.MAX_D_FF),
    ("dec_n", "Layers N", 6, 1, limits.MAX_LAYERS),
)


def _way_inputs(way: str, seed: int):
    """Encode the source and/or target sentences the way needs."""
    chosen = ATTENTION_WAYS[way]
    st.caption(chosen.where)
    sides = {chosen.queries_from, chosen.keys_from}
    state = st.session_state
    state.setdefault("src_text", "Le chat est assis sur le tapis .\nIl dort .")
    state.setdefault("target", "The cat sits on the mat .\nIt sleeps .")
    columns = st.columns(len(sides))
    texts = {}
    for column, side in zip(columns, sorted(sides), strict=True):
        key = "src_text" if side == "source" else "target"
        with column:
            texts[side] = st.text_area(
                f"{side.title()} sentences, one per line", height=90, **kept(key)
            )
    c1, c2, c3 = st.columns(3)
    d_model = int(c1.number_input("d_model", 1, limits.MAX_FEATURES, 16, **bound("mh_dmodel")))
    heads = int(
        c2.number_input("Heads h (d_model divisible by h)", 1, limits.MAX_HEADS, 4, **bound("mh_h"))
    )
    with c3:
        positional = st.toggle("Sinusoidal positional encoding", value=True, **bound("pos"))
    encoded = {}
    for side, text in texts.items():
        encoded[side] = _parse(
            lambda t=text: encode_sentences(
                t, d_model=d_model, d_k=d_model, seed=seed, positional=positional
            )
        )
    return encoded, heads


TRAINED_WAYS = {  # way of attention -> the attention of a trained Transformer's forward pass
    "bidirectional": "encoder self",
    "causal": "decoder self",
    "cross": "cross",
}


def multihead_panel(settings: AttentionSettings) -> None:
    """One multi-head attention block: the way of attention, every head, their average, W_O."""
    task = weights_choice("mh_weights")
    way = st.radio(
        "Way of attention",
        list(ATTENTION_WAYS),
        horizontal=True,
        captions=[way.title for way in ATTENTION_WAYS.values()],
        **bound("way"),
    )
    if task is not None:
        _trained_way(task, way)
        return
    encoded, heads = _way_inputs(way, settings.seed)
    if any(e is None for e in encoded.values()):
        return
    src, tgt = encoded.get("source"), encoded.get("target")
    if src is not None and tgt is not None and not paired(src, tgt):
        return
    result = _parse(
        lambda: compute_way(
            way,
            None if src is None else src.inputs,
            None if tgt is None else tgt.inputs,
            num_heads=heads,
            source_padding_mask=None if src is None else src.padding_mask,
            target_padding_mask=None if tgt is None else tgt.padding_mask,
            scale=settings.scale,
            mask_value=settings.mask_value,
            seed=settings.seed,
        )
    )
    if result is None:
        return
    chosen = ATTENTION_WAYS[way]
    sides = {"source": src, "target": tgt}
    b = sequence_selector(result.weights.shape[0], "sentence")
    rows = sides[chosen.queries_from].tokens[b]
    cols = sides[chosen.keys_from].tokens[b]
    _heads_view(result, b, rows, cols)


def _trained_way(task: str, way: str) -> None:
    """The way's attention in a forward pass of the Transformer trained on `task`."""
    st.caption(
        f"{ATTENTION_WAYS[way].where} All three ways come from the same forward pass of the "
        "trained Transformer: its encoder self-attention, its decoder's masked self-attention "
        "and its encoder–decoder attention (scaled dot product; padding is never attended)."
    )
    trace = shipped_trace(task)
    if trace is None:
        return
    layers = trace.translation.cross.shape[0]
    layer = int(st.selectbox("Layer", range(layers), **bound("mh_layer")) or 0)
    attention = TRAINED_WAYS[way]
    rows, cols = (char_labels(labels) for labels in trace.labels(attention))
    _heads_view(trace.results[(attention, min(layer, layers - 1))], 0, rows, cols)


def _heads_view(result, b: int, rows, cols) -> None:
    h = result.num_heads
    scaling = f"scores × 1/√{result.d_k}" if result.settings.scale else "no scaling"
    st.caption(
        f"{h} heads · Dk = Dv = {result.d_k} per head · d_model = {result.output.shape[-1]}"
        f" · {scaling}"
    )
    common = {"row_labels": rows, "col_labels": cols}
    st.subheader("Every head's weights")
    head_grid(result.weights[b], result.mask[b], rows, cols, "Head {head}", "head")
    head = int(st.selectbox("Enlarge head", range(h), **bound("mh_head")) or 0)
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(
            figures.heatmap(
                result.weights[b, head], kind="weights", title=f"Head {head} (enlarged)", **common
            )
        )
    with right:
        line_view(result.weights[b, head], rows, cols)
    left, right = st.columns(2)
    with left:
        st.plotly_chart(
            figures.heatmap(
                result.head_average[b], kind="weights", title="Average of the heads", **common
            )
        )
    with right:
        st.plotly_chart(
            figures.heatmap(
                result.concat[b],
                kind="values",
                row_labels=rows,
                title=f"Concatenated head outputs (T × {h}·Dv)",
                col_title="head feature",
            )
        )
    st.latex(
        r"\text{MultiHead}(Q,K,V) = \operatorname{Concat}(\text{head}_1,\dots,"
        r"\text{head}_h)\,W^O"
    )
    st.plotly_chart(
        figures.heatmap(
            result.output[b],
            kind="values",
            row_labels=rows,
            title="Output = Concat · W_O (T × d_model)",
            col_title="feature",
        )
    )


@st.cache_resource(max_entries=2, show_spinner="Building and running the decoder…")
def _run_decoder_cached(sizes: tuple[int, ...], seed: int, causal: bool):
    batch, t, s, vocab, h, d_model, d_ff, n = sizes
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, size=(batch, t))  # (B, T) target token ids
    memory = rng.random((batch, s, d_model))  # (B, S, D) stand-in encoder output, as in the seed
    start = time.perf_counter()
    result = run_decoder(
        tokens,
        memory,
        h=h,
        d_k=d_model // h,
        d_v=d_model // h,
        d_model=d_model,
        d_ff=d_ff,
        n=n,
        vocab_size=vocab,
        causal=causal,
        seed=seed,
    )
    return result, tokens, time.perf_counter() - start


def decoder_panel(settings: AttentionSettings) -> None:
    """N stacked decoder layers, every layer's self- and cross-attention per head."""
    task = weights_choice("dec_weights")
    if task is not None:
        _trained_decoder(task)
        return
    st.caption(
        "Masked multi-head self-attention → Add & Norm → encoder–decoder attention → "
        "Add & Norm → feed-forward → Add & Norm, N times; dropout off at inference. "
        "Defaults are the tutorial's sizes; token ids and the encoder output are drawn "
        "from the seed."
    )
    columns = st.columns(len(DECODER_FIELDS))
    sizes = []
    for column, (key, label, default, low, high) in zip(columns, DECODER_FIELDS, strict=True):
        sizes.append(int(column.number_input(label, low, high, default, **bound(key))))
    batch, t, s, vocab, h, d_model, d_ff, n = sizes
    if d_model % h:
        st.error(
            f"d_model must be divisible by the number of heads h: {d_model} is not "
            f"divisible by {h}. Try d_model = {h * max(1, d_model // h)}.",
            icon=":material/error:",
        )
        return
    run = _parse(lambda: _run_decoder_cached(tuple(sizes), settings.seed, True))
    if run is None:
        return
    result, tokens, seconds = run
    st.success(
        f"Decoder output shape: {tuple(result.output.shape)} "
        f"(batch, target tokens, d_model) · ran in {seconds:.2f} s"
    )
    if _decoder_view() == "Model view":
        _decoder_model_view(result, tokens)
    else:
        _decoder_attention(result, tokens)


def _decoder_model_view(result: DecoderResult, tokens: np.ndarray) -> None:
    """Every layer × head of one sequence's self- and cross-attention."""
    b = int(st.number_input("Sequence", 0, tokens.shape[0] - 1, 0, **bound("dec_seq")))
    rows = [f"t{j}={tok}" for j, tok in enumerate(tokens[b])]
    sources = [f"s{j}" for j in range(result.cross_attention[0].shape[-1])]
    view = HeadsView(
        stacks={
            "decoder self": np.stack([w[b] for w in result.self_attention]),  # (N, H, T, T)
            "cross": np.stack([w[b] for w in result.cross_attention]),  # (N, H, T, S)
        },
        labels={"decoder self": (rows, rows), "cross": (rows, sources)},
        axis_titles={"decoder self": ("target", "target"), "cross": ("target", "source")},
    )
    model_view_panel(view)


def _trained_decoder(task: str) -> None:
    """The decoder of the Transformer trained on `task`, on the user's text."""
    st.caption(
        "The decoder layers of the seed tutorial (masked self-attention, encoder–decoder "
        "attention, feed-forward, each + Add & Norm), trained with a matching encoder. Its "
        "rows are the decoder's positions: each was fed the character before (<s> first) and "
        "wrote the next one."
    )
    trace = shipped_trace(task)
    if trace is None:
        return
    if _decoder_view() == "Model view":
        view = HeadsView.of_trace(trace, task)
        decoder_only = {w: view.stacks[w] for w in ("decoder self", "cross")}
        model_view_panel(replace(view, stacks=decoder_only))
        return
    t = trace.translation
    c1, c2 = st.columns(2)
    layer = int(c1.number_input("Layer", 0, t.cross.shape[0] - 1, 0, **bound("dec_tlayer")))
    which = _which_attention(c2)
    fed = char_labels(trace.decoder_tokens)
    if which == "self":
        _decoder_heads(t.decoder_self[layer], None, fed, fed, layer, causal=True)
    else:
        rows = [f"{a}→{b}" for a, b in zip(fed, char_labels(trace.output_tokens), strict=True)]
        _decoder_heads(t.cross[layer], None, rows, char_labels(trace.source_tokens), layer)


def _decoder_view() -> str:
    return st.segmented_control(
        "View", DECODER_VIEWS, default=DECODER_VIEWS[0], required=True, **bound("dec_view")
    )


def _which_attention(column) -> str:
    return column.radio(
        "Attention",
        ["self", "cross"],
        horizontal=True,
        **bound("dec_which"),
        captions=["masked self-attention", "encoder–decoder attention"],
    )


def _decoder_attention(result: DecoderResult, tokens: np.ndarray) -> None:
    n = len(result.self_attention)
    c1, c2, c3 = st.columns(3)
    b = int(c1.number_input("Sequence", 0, tokens.shape[0] - 1, 0, **bound("dec_seq")))
    layer = int(c2.number_input("Layer", 0, n - 1, 0, **bound("dec_layer")))
    which = _which_attention(c3)
    weights = (result.self_attention if which == "self" else result.cross_attention)[layer][b]
    rows = [f"t{j}={tok}" for j, tok in enumerate(tokens[b])]
    cols = rows if which == "self" else [f"s{j}" for j in range(weights.shape[-1])]
    mask = (result.self_mask if which == "self" else result.cross_mask)[b]
    _decoder_heads(weights, mask, rows, cols, layer)


def _decoder_heads(weights, mask, rows, cols, layer: int, causal: bool = False) -> None:
    """One decoder layer's heads `(H, T, ·)`; `mask` None = causal (self) or none (cross)."""
    if mask is None:
        t, s = weights.shape[-2:]
        mask = np.tril(np.ones((t, s), dtype=bool)) if causal else np.ones((t, s), dtype=bool)
    head_grid(weights, mask, rows, cols, f"Layer {layer} · head {{head}}", "dec-head")


def head_grid(weights: np.ndarray, mask: np.ndarray, rows, cols, title: str, key: str) -> None:
    """Every head's `(H, T, S)` weights as thumbnails, `HEADS_PER_ROW` a row, on one shared
    colour scale; `mask (T, S)` True = allowed; `title` is formatted with `head`."""
    h = weights.shape[0]
    st.caption(
        "All heads share one colour scale: weight 0 (dark) to 1 (yellow); grey = masked. "
        "Hover a cell for its query, key and weight."
    )
    for start in range(0, h, HEADS_PER_ROW):
        columns = st.columns(HEADS_PER_ROW)
        for column, head in zip(columns, range(start, min(h, start + HEADS_PER_ROW)), strict=False):
            with column:
                st.plotly_chart(
                    figures.heatmap(
                        weights[head],
                        kind="weights",
                        title=title.format(head=head),
                        row_labels=rows,
                        col_labels=cols,
                        blocked=~mask & (weights[head] == 0),
                        thumbnail=True,
                    ),
                    key=f"{key}-{head}",
                )
