"""Input widgets several modes share: the sentences typed for the sentence modes, how they are
encoded, and which sequence of a batch the views show. Their slots are declared here.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import streamlit as st

from attnviz.core import limits
from attnviz.inputs.text import EncodedSentences
from attnviz.ui.frame.messages import error
from attnviz.ui.frame.state import Slot, slot

SENTENCES = slot("sentences", "The cat sat on the mat.\nIt slept.")  # the Sentences mode's
SOURCE = slot("src_text", "Le chat est assis sur le tapis .")  # the encoder side's sentences
TARGET = slot("target", "The cat sits on the mat .")  # the decoder side's sentences
D_MODEL = slot("d_model", 16, url=True)  # embedding size of the sentence modes
D_K = slot("d_k", 8, url=True)  # projection size Dk = Dv of the sentence modes
POSITIONAL = slot("pos", True, url=True)  # add the sinusoidal positional encoding
SEQUENCE = slot("seq", 0, url=True)  # the batch item the views show
ENCODING = MappingProxyType(  # what a sentence page encodes at most (`encode_sentences`)
    {"max_tokens": limits.APP_MAX_TOKENS, "max_cells": limits.APP_INPUT_CELLS}
)


def sentence_box(text: Slot[str], label: str, height: int, default: str | None = None) -> str:
    """A text area for sentences, one per line, kept across reruns and modes; `default` is its
    first text when it is not the slot's own (a mode that starts with a batch of two)."""
    text.setdefault(default)
    return st.text_area(label, height=height, **text.widget())


def page_limit_help(most: int, what: str, python: str) -> str:
    """The help of an input this page keeps below what the library takes (an `APP_` limit)."""
    return f"This page takes at most {most} {what}. {python}"


def say_page_limit(size: Slot[int], most: int, what: str, python: str, where: Any = st) -> None:
    """Before the input of a URL-bound `size`: when the link asks for more than this page draws
    (`most`, an `APP_` limit of `limits`), say so in `where` (a container; the page by
    default); the input starts at its default then, as Streamlit leaves a bound value out of
    the input's range."""
    linked = st.query_params.get(size.key) if size.url and not size.is_set() else None
    if linked is None or not linked.strip().isdigit() or int(linked) <= most:
        return
    where.info(
        f"This page takes at most {most} {what}; the link asks for {int(linked)}, so it shows "
        f"{size.default}. {python}",
        icon=":material/info:",
    )


def heads_fit(d_model: int, heads: int, kv_heads: int | None = None) -> bool:
    """Whether `heads` (and `kv_heads`, the K/V heads they share) fit `d_model`; if not, an
    error says so in the page's words, with sizes that fit."""
    if d_model % heads:
        error(
            f"d_model must be divisible by the number of heads h: {d_model} is not "
            f"divisible by {heads}. Try d_model = {heads * max(1, d_model // heads)}."
        )
        return False
    if kv_heads is not None and heads % kv_heads:
        fits = [g for g in range(1, heads + 1) if heads % g == 0]
        error(
            f"The K/V heads g must divide the heads h: {heads} heads can share "
            f"{', '.join(map(str, fits[:-1]))} or {fits[-1]} K/V heads, not {kv_heads}."
            if len(fits) > 1
            else f"The K/V heads g must divide the heads h: 1 head has 1 K/V head, not {kv_heads}."
        )
        return False
    return True


def encoding_controls() -> tuple[int, int, bool]:
    """`(d_model, d_k, positional)`: how the sentence modes embed and project their tokens."""
    columns = st.columns(3)
    most = limits.APP_MAX_FEATURES
    d_model = columns[0].number_input(
        "d_model (embedding size)", 1, most, D_MODEL.default, **D_MODEL.widget()
    )
    d_k = columns[1].number_input("Dk = Dv (projection size)", 1, most, D_K.default, **D_K.widget())
    with columns[2]:
        positional = st.toggle(
            "Sinusoidal positional encoding", value=POSITIONAL.default, **POSITIONAL.widget()
        )
    return int(d_model), int(d_k), bool(positional)


def positional_toggle() -> bool:
    """Only the positional-encoding switch (the multi-head inputs size their own d_model)."""
    return bool(
        st.toggle("Sinusoidal positional encoding", value=POSITIONAL.default, **POSITIONAL.widget())
    )


def paired(source: EncodedSentences, target: EncodedSentences) -> bool:
    """Source and target sentences pair up by line; say so next to the inputs when they don't."""
    if len(source.sentences) == len(target.sentences):
        return True
    error(
        f"Give as many target lines as source lines: they are paired by line. Received "
        f"{len(source.sentences)} source and {len(target.sentences)} target sentences."
    )
    return False


def first_sequence(b: int = 0) -> None:
    """Show sequence `b` (the first by default) of a batch: new inputs came in."""
    SEQUENCE.set(b)


def sequence_selector(batch: int, what: str) -> int:
    """Which batch item the views show (hidden for a single item)."""
    if batch <= 1:
        SEQUENCE.set(0)
        return 0
    if not 0 <= SEQUENCE.get() < batch:
        SEQUENCE.set(0)
    return int(
        st.number_input(
            f"View {what} (0 – {batch - 1})",
            min_value=0,
            max_value=batch - 1,
            step=1,
            **SEQUENCE.widget(),
        )
    )
