"""Cross: encoder–decoder attention between two sentences, queries from the target, keys and
values from the source; then the explorer's results.
"""

from __future__ import annotations

import streamlit as st

from attnviz.inputs.problem import Problem
from attnviz.inputs.text import encode_sentences
from attnviz.ui.controls import sidebar
from attnviz.ui.controls.input_widgets import (
    ENCODING,
    SOURCE,
    TARGET,
    encoding_controls,
    first_sequence,
    paired,
    sentence_box,
    sequence_selector,
)
from attnviz.ui.explorer import results
from attnviz.ui.frame.messages import shown
from attnviz.ui.frame.mode import Mode


def cross_panel(seed: int) -> Problem | None:
    """Source and target sentences, paired by line, as a `Problem` (None after showing why
    not): queries from the target, keys and values from the source."""
    columns = st.columns(2)
    with columns[0]:
        source = sentence_box(SOURCE, "Source (keys and values), one sentence per line", 90)
    with columns[1]:
        target = sentence_box(TARGET, "Target (queries), one sentence per line, paired by line", 90)
    d_model, d_k, positional = encoding_controls()
    kwargs = {"d_model": d_model, "d_k": d_k, "seed": seed, "positional": positional, **ENCODING}
    src = shown(lambda: encode_sentences(source, **kwargs), "Source: ")
    tgt = shown(lambda: encode_sentences(target, **kwargs), "Target: ")
    if src is None or tgt is None or not paired(src, tgt):
        return None
    item = sequence_selector(len(src.sentences), "pair")
    return Problem.of_sentences(tgt, src, item)


def prepare(source: str, target: str, view: str | None = None) -> None:
    """Open this page on the sentence pairs `source` and `target` (paired by line), the
    controls at their defaults, on the results tab `view`."""
    SOURCE.set(source)
    TARGET.set(target)
    first_sequence()
    sidebar.apply_settings({})
    results.show_view(view or results.VIEWS[0])


def draw() -> None:
    """The whole Cross page."""
    controls = sidebar.explorer_controls()
    if controls.settings is not None and controls.settings.causal:
        st.info(
            "A causal mask on cross-attention lets target token i see only the source tokens "
            "at positions 0 … i, as if the two sentences were aligned word by word. A "
            "Transformer's encoder–decoder attention is never causal: every target token may "
            "read the whole source (switch the causal mask off to see it).",
            icon=":material/info:",
        )
    if controls.settings is not None and controls.settings.position != "none":
        st.info(
            "RoPE and ALiBi on cross-attention compare target token i's position with source "
            "token j's, as if the two sentences were one sequence aligned word by word. "
            "Today's models use them in self-attention; encoder–decoder attention, where there "
            "is one, adds no position scheme (choose None under Positions to see it).",
            icon=":material/info:",
        )
    problem = cross_panel(sidebar.SEED.get())
    if problem is not None:
        results.results_panel(problem, controls)


MODE = Mode(
    name="cross",
    label="Cross (two sentences)",
    icon=":material/compare_arrows:",
    intro="Encoder–decoder (cross) attention: queries come from the target sentence, keys "
    "and values from the source sentence.",
    draw=draw,
    url_texts=(SOURCE, TARGET),
    prepare=prepare,
)
