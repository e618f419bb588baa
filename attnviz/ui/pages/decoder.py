"""Decoder: the Transformer decoder stack of the Keras tutorial, N layers, every layer's masked
self-attention and encoder–decoder attention per head, with random weights or a shipped
Transformer's decoder; one layer at a time or the model view. Wiring and drawing only.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import streamlit as st

from attnviz.core import limits
from attnviz.core.ways import get_way
from attnviz.drawing.translation import char_labels
from attnviz.ui.controls.input_widgets import heads_fit, page_limit_help, say_page_limit
from attnviz.ui.controls.sidebar import SEED, seed_control
from attnviz.ui.frame.charts import ACROSS, head_grid
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import shown
from attnviz.ui.frame.mode import Mode
from attnviz.ui.frame.presenter import controls
from attnviz.ui.frame.state import slot
from attnviz.ui.models.heads_panel import HeadsView, model_view_panel
from attnviz.ui.models.shipped import (
    TASK_TEXTS,
    open_in_learn_button,
    shipped_trace,
    weights_choice,
)

DECODER_VIEWS = ("One layer", "Model view")  # one layer's heads, or every layer's at once
ATTENTIONS = {"self": "causal", "cross": "cross"}  # the decoder's two attentions -> their way
WEIGHTS = slot("dec_weights", "Random weights", url=True)  # random, or a shipped Transformer's
VIEW = slot("dec_view", DECODER_VIEWS[0], url=True)
WHICH = slot("dec_which", "self", url=True)  # the attention of the layer shown
SEQUENCE = slot("dec_seq", 0, url=True)  # the batch item shown
LAYER = slot("dec_layer", 0, url=True)  # the random decoder's layer shown
TRAINED_LAYER = slot("dec_tlayer", 0, url=True)  # the trained decoder's layer shown
SIZES = (  # (slot, label, least, most); defaults: the tutorial's sizes
    (slot("dec_batch", 64, url=True), "Batch", 1, limits.APP_DECODER_BATCH),
    (slot("dec_t", 5, url=True), "Target tokens T", 1, limits.APP_DECODER_SIDE),
    (slot("dec_s", 5, url=True), "Source tokens S", 1, limits.APP_DECODER_SIDE),
    (slot("dec_vocab", 20, url=True), "Vocabulary", 2, limits.MAX_VOCAB),
    (slot("dec_h", 8, url=True), "Heads h", 1, limits.APP_HEADS),
    (slot("dec_dmodel", 512, url=True), "d_model", 1, limits.APP_MAX_FEATURES),
    (slot("dec_dff", 2048, url=True), "d_ff", 1, limits.MAX_D_FF),
    (slot("dec_n", 6, url=True), "Layers N", 1, limits.MAX_LAYERS),
)
PAGE_LIMITS = {  # the sizes this page keeps below what `run_decoder` takes: what they count
    "dec_batch": ("sequences", "In Python, `run_decoder` takes up to "
                  f"{limits.MAX_BATCH:,} sequences."),
    "dec_t": ("target tokens", "In Python, `run_decoder` takes up to "
              f"{limits.MAX_DECODER_TOKENS:,} tokens in all."),
    "dec_s": ("source tokens", "In Python, `run_decoder` takes up to "
              f"{limits.MAX_DECODER_TOKENS:,} tokens in all."),
    "dec_h": ("heads", "In Python, `run_decoder` takes any number of heads, of any size."),
}  # fmt: skip


@st.cache_resource(max_entries=2, show_spinner="Building and running the decoder…")
def _run_decoder_cached(sizes: tuple[int, ...], seed: int):
    batch, t, s, vocab, h, d_model, d_ff, n = sizes
    with back_end(draws=False):
        from attnviz.transformer.decoder import run_decoder  # builds no Keras layer
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, size=(batch, t))  # (B, T) target token ids
    memory = rng.random((batch, s, d_model))  # (B, S, D) stand-in encoder output, as in the seed
    start = time.perf_counter()
    result = run_decoder(
        tokens, memory, h=h, d_k=d_model // h, d_v=d_model // h, d_model=d_model, d_ff=d_ff,
        n=n, vocab_size=vocab, causal=True, seed=seed,
    )  # fmt: skip
    return result, tokens, time.perf_counter() - start


def warm_up() -> None:
    """The decoder of the page's default sizes and seed, run into the cache the page reads."""
    _run_decoder_cached(tuple(size.default for size, *_ in SIZES), SEED.default)


def _help(key: str, most: int) -> str | None:
    """The help of a size this page keeps below the library's limit; None for the others."""
    return page_limit_help(most, *PAGE_LIMITS[key]) if key in PAGE_LIMITS else None


def _random_decoder(seed: int) -> None:
    st.caption(
        "Masked multi-head self-attention → Add & Norm → encoder–decoder attention → "
        "Add & Norm → feed-forward → Add & Norm, N times; dropout off at inference. "
        "Defaults are the tutorial's sizes; token ids and the encoder output are drawn "
        "from the seed."
    )
    for size, _, _, high in SIZES:
        if size.key in PAGE_LIMITS:
            say_page_limit(size, high, *PAGE_LIMITS[size.key])
    sizes = [
        int(column.number_input(label, low, high, size.default, help=_help(size.key, high),
                                **size.widget()))
        for column, (size, label, low, high) in zip(st.columns(len(SIZES)), SIZES, strict=True)
    ]  # fmt: skip
    if not heads_fit(d_model=sizes[5], heads=sizes[4]):
        return
    run = shown(lambda: _run_decoder_cached(tuple(sizes), seed))
    if run is None:
        return
    result, tokens, seconds = run
    st.success(
        f"Decoder output shape: {tuple(result.output.shape)} "
        f"(batch, target tokens, d_model) · ran in {seconds:.2f} s"
    )
    b = int(st.number_input("Sequence", 0, tokens.shape[0] - 1, 0, **SEQUENCE.widget()))
    if _view() == "Model view":
        model_view_panel(HeadsView(result.attention, item=b))
        return
    n = result.config.n
    c1, c2 = st.columns(2)
    layer = int(c1.number_input("Layer", 0, n - 1, 0, **LAYER.widget()))
    call = result.attention.at(_which_attention(c2), layer)
    _layer_heads(call.weights[b], call.mask[b], *(list(x) for x in call.labels(b)), layer)


def _trained_decoder(task: str) -> None:
    """The decoder of the Transformer trained on `task`, on the user's text."""
    st.caption(
        "The decoder layers of the Keras tutorial (masked self-attention, encoder–decoder "
        "attention, feed-forward, each + Add & Norm), trained with a matching encoder. Its "
        "rows are the decoder's positions: each was fed the character before (<s> first) and "
        "wrote the next one."
    )
    trace = shipped_trace(task)
    open_in_learn_button(task)
    if trace is None:
        return
    if _view() == "Model view":
        view = HeadsView.of_trace(trace, task, shipped=True)
        decoder_only = {way: view.attention.groups()[way] for way in ATTENTIONS.values()}
        model_view_panel(replace(view, groups=decoder_only))
        return
    n = trace.translation.cross.shape[0]
    c1, c2 = st.columns(2)
    layer = int(c1.number_input("Layer", 0, n - 1, 0, **TRAINED_LAYER.widget()))
    way = _which_attention(c2)
    weights = trace.attention.at(way, layer).weights[0]  # (H, T, ·)
    fed = char_labels(trace.decoder_tokens)
    if way == "causal":
        _layer_heads(weights, get_way(way).mask(*weights.shape[-2:]), fed, fed, layer)
    else:
        out = char_labels(trace.output_tokens)
        rows = [f"{a}→{b}" for a, b in zip(fed, out, strict=True)]
        cols = char_labels(trace.source_tokens)
        _layer_heads(weights, get_way(way).mask(*weights.shape[-2:]), rows, cols, layer)


def _view() -> str:
    return st.segmented_control(
        "View", DECODER_VIEWS, default=DECODER_VIEWS[0], required=True, **VIEW.widget()
    )


def _which_attention(column) -> str:
    """The way of the attention shown: "causal" (self) or "cross"."""
    which = column.radio(
        "Attention",
        list(ATTENTIONS),
        horizontal=True,
        captions=[get_way(way).part for way in ATTENTIONS.values()],
        **WHICH.widget(),
    )
    return ATTENTIONS[which]


def _layer_heads(weights, mask, rows, cols, layer: int) -> None:
    """One decoder layer's heads `(H, T, ·)` with their `mask (T, ·)`."""
    head_grid(weights, mask, rows, cols, f"Layer {layer}, every head{ACROSS}", "dec-head")


def draw() -> None:
    """The whole Decoder page."""
    controls().caption(
        "Every head: scaled dot-product attention, the look-ahead mask in self-attention, "
        "masked keys weighted 0, as Keras's MultiHeadAttention computes it."
    )
    task = weights_choice(WEIGHTS)
    if task is None:
        _random_decoder(seed_control())  # the one sidebar control this page has
    else:
        controls().caption("Trained weights: no seed to choose (a seed draws random weights).")
        _trained_decoder(task)


MODE = Mode(
    name="decoder",
    label="Decoder",
    icon=":material/layers:",
    intro="The Transformer decoder of the Keras tutorial: N stacked decoder layers, with every "
    "layer's self- and cross-attention per head, random or trained.",
    draw=draw,
    url_texts=TASK_TEXTS,
    old_names=("Decoder",),
    warm_up=warm_up,
)
