"""Multi-head: one multi-head attention block in the three ways a Transformer uses it
(bi-directional, causal, cross): every head, their average, the concatenation through W_O; with
random weights, weights made to differ (`transformer.made_heads`) or the weights of a shipped
Transformer. Wiring and drawing only.
"""

from __future__ import annotations

import streamlit as st

from attnviz.core import limits
from attnviz.core.ways import WAYS, get_way
from attnviz.drawing.construction import head_side
from attnviz.drawing.heatmap import heatmap
from attnviz.drawing.translation import char_labels
from attnviz.inputs.text import encode_sentences
from attnviz.ui.controls import sidebar
from attnviz.ui.controls.input_widgets import (
    ENCODING,
    SOURCE,
    TARGET,
    heads_fit,
    page_limit_help,
    paired,
    positional_toggle,
    say_page_limit,
    sentence_box,
    sequence_selector,
)
from attnviz.ui.explorer.cache_view import heads_cache_view
from attnviz.ui.frame.charts import (
    ACROSS,
    chart,
    fit_toggle,
    folded,
    head_grid,
    line_view,
    made_from_tokens,
)
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import counted, shown
from attnviz.ui.frame.mode import Mode
from attnviz.ui.frame.presenter import chart_columns
from attnviz.ui.frame.state import slot
from attnviz.ui.models.shipped import (
    TASK_TEXTS,
    open_in_learn_button,
    shipped_trace,
    weights_choice,
)

WEIGHTS = slot("mh_weights", "Random weights", url=True)  # random, made, or a shipped model's
MADE = "Made to differ"  # weights built so that each head looks in its own place
WAY = slot("way", next(iter(WAYS)), url=True)  # the way of attention
D_MODEL = slot("mh_dmodel", 16, url=True)  # d_model of the random-weights block
HEADS = slot("mh_h", 4, url=True)  # H of the random-weights block
KV_HEADS = slot("mh_kv", 4, url=True)  # G key/value heads the H query heads share
HEADS_DRAWN = slot("mh_h_drawn", 4)  # the H last drawn, which a change of H compares G with
LAYER = slot("mh_layer", 0, url=True)  # the trained Transformer's layer shown
HEAD = slot("mh_head", 0, url=True)  # the enlarged head
FIT = slot("mh_fit", False, url=True)  # the enlarged head and the average coloured 0 to their max
MADE_OPEN = slot("mh_made_open", False)  # "How head h's Q, K and V are made" is open
CACHE_OPEN = slot("mh_cache_open", False)  # "Decoding token by token with a KV cache" is open
HEADS_TITLE = f"Every head{ACROSS}"  # the grid of every head
HEADS_PYTHON = (
    "In Python, `compute_multihead` takes any number of heads, of any size (`d_k`, `d_v`)."
)
SIDES = {  # a side of the Transformer -> its sentences and their first text
    "source": (SOURCE, "Le chat est assis sur le tapis .\nIl dort ."),
    "target": (TARGET, "The cat sits on the mat .\nIt sleeps ."),
}


def _way_inputs(way: str, seed: int):
    """Encode the source and/or target sentences the way needs."""
    chosen = get_way(way)
    st.caption(chosen.where)
    sides = sorted({chosen.queries_from, chosen.keys_from})
    texts = {}
    for column, side in zip(st.columns(len(sides)), sides, strict=True):
        text, first = SIDES[side]
        with column:
            texts[side] = sentence_box(text, f"{side.title()} sentences, one per line", 90, first)
    c1, c2, c3, c4 = st.columns(4)
    d_model = int(
        c1.number_input("d_model", 1, limits.APP_MAX_FEATURES, D_MODEL.default, **D_MODEL.widget())
    )
    say_page_limit(HEADS, limits.APP_HEADS, "heads", HEADS_PYTHON)
    heads = int(
        c2.number_input(
            "Heads h (d_model divisible by h)", 1, limits.APP_HEADS, HEADS.default,
            on_change=_snap_kv_heads, help=page_limit_help(limits.APP_HEADS, "heads", HEADS_PYTHON),
            **HEADS.widget(),
        )
    )  # fmt: skip
    HEADS_DRAWN.set(heads)
    if KV_HEADS.get() > heads:  # a link's g above its h
        KV_HEADS.set(heads)
    kv_heads = int(
        c3.number_input(
            "K/V heads g (g divides h)",
            1,
            limits.APP_HEADS,
            help="Query heads that share one key and value head: g = h is multi-head attention, "
            "g = 1 multi-query, in between grouped-query (Llama, Mistral, Gemma).",
            **KV_HEADS.widget("value"),
        )
    )
    with c4:
        positional = positional_toggle()
    encoded = {
        side: shown(
            lambda t=text: encode_sentences(
                t, d_model=d_model, d_k=d_model, seed=seed, positional=positional, **ENCODING
            ),
            f"{side.title()}: ",  # which box, when there are two
        )
        for side, text in texts.items()
    }
    return encoded, heads, kv_heads


def _snap_kv_heads() -> None:
    """When h changes, g follows: multi-head attention (g was h) stays multi-head; otherwise g
    becomes the largest divisor of the new h not above it (4 heads on 2 K/V heads, h set to 3:
    1 K/V head; h set to 8: still 2)."""
    heads, kv_heads = HEADS.get(), KV_HEADS.get()
    if kv_heads == HEADS_DRAWN.get():
        KV_HEADS.set(heads)
    elif heads % kv_heads:
        KV_HEADS.set(max(g for g in range(1, min(heads, kv_heads) + 1) if heads % g == 0))


def _random_way(way: str, settings, made: bool = False) -> None:
    """The way's attention over the typed sentences, with seeded random weights or, `made`,
    W_Q and W_K made so that each head looks in its own place (`transformer.made_heads`)."""
    encoded, heads, kv_heads = _way_inputs(way, sidebar.SEED.get())
    if settings is None:  # the sidebar says which control does not fit
        return
    if not heads_fit(D_MODEL.get(), heads, kv_heads):
        return
    if any(e is None for e in encoded.values()):
        return
    src, tgt = encoded.get("source"), encoded.get("target")
    if src is not None and tgt is not None and not paired(src, tgt):
        return
    with back_end():
        from attnviz.transformer.way_attention import compute_way
    sentences = {
        "source_padding_mask": None if src is None else src.padding_mask,
        "target_padding_mask": None if tgt is None else tgt.padding_mask,
    }
    made_heads = shown(lambda: _made(way, src, tgt, heads, kv_heads, settings)) if made else None
    if made and made_heads is None:
        return
    result = shown(
        lambda: compute_way(
            way,
            None if src is None else src.inputs,
            None if tgt is None else tgt.inputs,
            num_heads=heads,
            num_kv_heads=kv_heads,
            settings=settings,
            max_cells=limits.APP_SCORE_CELLS,
            params=None if made_heads is None else made_heads.params,
            **sentences,
        )
    )
    if result is None:
        return
    chosen = get_way(way)
    if made_heads is not None:
        from attnviz.transformer.made_heads import place_shares, said

        real = {side: sentences[f"{side}_padding_mask"] for side in ("source", "target")}
        shares = place_shares(result.weights, result.mask, made_heads.places,
                              real[chosen.keys_from], real[chosen.queries_from])  # fmt: skip
        st.caption(said(made_heads, shares))
    sides = {"source": src, "target": tgt}
    b = sequence_selector(result.weights.shape[0], "sentence")
    rows = sides[chosen.queries_from].tokens[b]
    cols = sides[chosen.keys_from].tokens[b]
    made_from = {"Q": sides[chosen.queries_from], "K": sides[chosen.keys_from]}
    heads_view(result, b, rows, cols, made_from)
    if chosen.causal:  # a decoder's self-attention: decoding reads and fills a KV cache
        box = folded("Decoding token by token with a KV cache", CACHE_OPEN.key)
        if box is not None:
            with box:
                heads_cache_view(result, b, rows)


def _made(way: str, src, tgt, heads: int, kv_heads: int, settings):
    """W_Q and W_K made for the sentences the way attends (`made_heads.made_for_way`)."""
    from attnviz.transformer.made_heads import made_for_way

    return made_for_way(
        way,
        None if src is None else src.inputs,
        None if tgt is None else tgt.inputs,
        num_heads=heads,
        num_kv_heads=kv_heads,
        source_padding_mask=None if src is None else src.padding_mask,
        target_padding_mask=None if tgt is None else tgt.padding_mask,
        scale=settings.scale,
    )


def _trained_way(task: str, way: str) -> None:
    """The way's attention in a forward pass of the Transformer trained on `task`."""
    st.caption(
        f"{get_way(way).where} All three ways come from the same forward pass of the trained "
        "Transformer: its encoder self-attention, its decoder's masked self-attention and its "
        "encoder–decoder attention (scaled dot product; padding is never attended)."
    )
    trace = shipped_trace(task)
    open_in_learn_button(task)
    if trace is None:
        return
    layers = trace.translation.cross.shape[0]
    layer = int(st.selectbox("Layer", range(layers), **LAYER.widget()) or 0)
    layer = min(layer, layers - 1)
    rows, cols = (char_labels(labels) for labels in trace.attention.at(way, layer).labels())
    heads_view(trace.results[(way, layer)], 0, rows, cols)


def heads_view(result, b: int, rows, cols, made_from: dict | None = None) -> None:
    """Every head of one multi-head result's item `b`, one enlarged, the average, W_O; with
    `made_from` ("Q": the queries' `EncodedSentences`, "K": the keys and values'), how the
    enlarged head's Q, K and V are made from the tokens."""
    h = result.num_heads
    scaling = f"scores × 1/√{result.d_k}" if result.settings.scale else "no scaling"
    st.caption(
        f"{counted(h, 'head')} · Dk = Dv = {result.d_k} per head · d_model = "
        f"{result.output.shape[-1]}"
        f" · {scaling}"
    )
    _costs(result)
    common = {"row_labels": rows, "col_labels": cols}
    st.subheader("Every head's weights")
    g = result.num_kv_heads or h
    if g == h:
        head_grid(result.weights[b], result.mask[b], rows, cols, HEADS_TITLE, "head")
    for group in range(g if g < h else 0):  # heads drawn by the key/value head they share
        shared = [q for q in range(h) if int(result.kv_head_of[q]) == group]
        st.markdown(f"**K/V head {group}**, shared by query heads {', '.join(map(str, shared))}")
        head_grid(result.weights[b], result.mask[b], rows, cols, f"Its query heads{ACROSS}",
                  f"head-g{group}", heads=shared)  # fmt: skip
    head = int(st.selectbox("Enlarge head", range(h), **HEAD.widget()) or 0)
    fit = fit_toggle(FIT)
    left, right = chart_columns([3, 2])
    with left:
        chart(
            heatmap(
                result.weights[b, head],
                kind="weights",
                title=f"Head {head} (enlarged)",
                blocked=~result.mask[b] & (result.weights[b, head] == 0),
                fit_scale=fit,
                **common,
            ),
            name="head-enlarged",
        )
    with right:
        line_view(result.weights[b, head], rows, cols)
    if made_from is not None:
        _head_made_from(result, b, head, made_from)
    left, right = chart_columns(2)
    with left:
        chart(
            heatmap(
                result.head_average[b],
                kind="weights",
                title="Average of the heads",
                blocked=~result.mask[b] & (result.head_average[b] == 0),  # masked in every head
                fit_scale=fit,
                **common,
            ),
            name="head-average",
        )
    with right:
        chart(
            heatmap(
                result.concat[b],
                kind="values",
                row_labels=rows,
                title=f"Concatenated head outputs (T × {h}·Dv)",
                col_title="head feature",
            ),
            name="head-concat",
        )
    st.latex(
        r"\text{MultiHead}(Q,K,V) = \operatorname{Concat}(\text{head}_1,\dots,"
        r"\text{head}_h)\,W^O"
    )
    chart(
        heatmap(
            result.output[b],
            kind="values",
            row_labels=rows,
            title="Output = Concat · W_O (T × d_model)",
            col_title="feature",
        ),
        name="head-output",
    )


def prepare(weights: str, way: str, heads: int | None = None) -> None:
    """Open this page with `weights` ("Random weights", "Made to differ" or "Trained on
    <task>"), the way of attention `way` and (random or made weights) `heads` heads."""
    WEIGHTS.set(weights)
    WAY.set(get_way(way).name)
    HEADS.set(HEADS.default if heads is None else heads)
    D_MODEL.set(D_MODEL.default)
    HEAD.set(0)


def _head_made_from(result, b: int, head: int, made_from: dict) -> None:
    """How head `head`'s Q, K and V are made: the tokens' X times its slices of W_Q, W_K, W_V."""
    box = folded("How the enlarged head's Q, K and V are made from the tokens", MADE_OPEN.key)
    if box is None:
        return
    with box:
        st.caption(
            "Each head has its own W_Q, W_K and W_V (here d_model × Dk, drawn from the seed; "
            "made to differ, W_Q and W_K are solved instead): the same inputs X, projected "
            "differently, so each head can look for something else."
        )
        if made_from["Q"] is made_from["K"]:
            sides = [head_side(made_from["Q"], b, "The tokens", ("Q", "K", "V"), result, head)]
        else:
            sides = [
                head_side(made_from["Q"], b, "The target makes the queries", ("Q",), result, head),
                head_side(made_from["K"], b, "The source makes the keys and values", ("K", "V"),
                          result, head),
            ]  # fmt: skip
        for n, side in enumerate(sides):
            made_from_tokens(side, f"head-made-{n}")


def _costs(result) -> None:
    """What these heads cost: learned numbers and the KV cache a decoder keeps per token."""
    costs = result.costs
    if costs is None:
        return
    saved = 1 - costs.kv_cache_bytes_per_token / costs.mha_kv_cache_bytes_per_token
    st.caption(
        f"{counted(costs.num_heads, 'query head')} on {counted(costs.num_kv_heads, 'K/V head')} · "
        f"{costs.param_count:,} parameters (W_Q, W_K, W_V, W_O) · the KV cache a decoder "
        f"keeps: {costs.kv_cache_bytes_per_token:,} bytes per token (float32)"
        + (f", {saved:.0%} less than multi-head's {costs.mha_kv_cache_bytes_per_token:,}"
           if saved else "")
    )  # fmt: skip


def draw() -> None:
    """The whole Multi-head page."""
    task = weights_choice(WEIGHTS, extra=(MADE,))
    settings = sidebar.multihead_controls(trained=task is not None)
    way = st.radio(
        "Way of attention",
        list(WAYS),
        horizontal=True,
        captions=[w.title for w in WAYS.values()],
        **WAY.widget(),
    )
    if task is not None:
        _trained_way(task, way)
    else:
        _random_way(way, settings, made=WEIGHTS.get() == MADE)


MODE = Mode(
    name="multihead",
    label="Multi-head",
    icon=":material/view_module:",
    intro="Multi-head attention in the three ways a Transformer uses it: every head, their "
    "average, and the concatenation through W_O, with random weights, weights made so that "
    "each head looks in its own place, or the weights of a trained Transformer.",
    draw=draw,
    url_texts=(SOURCE, TARGET, *TASK_TEXTS),
    old_names=("Multi-head",),
    prepare=prepare,
)
