"""The explorer's own state: its Q, K, V (typed, uploaded or drawn at random, and their padding
keys), the trained attention it shows if another page opened one, and `open_in_explorer`, with
which those pages open it (the Matrices page draws these inputs; a link's `from` field opens the
same attention again).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.inputs.problem import LearnedWeights
from attnviz.ui.controls import sidebar
from attnviz.ui.controls.input_widgets import first_sequence
from attnviz.ui.explorer import results
from attnviz.ui.explorer.opening import Opened, reopened
from attnviz.ui.frame.messages import shown
from attnviz.ui.frame.navigation import go_to
from attnviz.ui.frame.state import slot, slot_family

SOURCES = {"type": "Type or paste", "upload": "Upload files", "random": "Random"}
Q_TEXT = slot("q_text", "")  # the typed queries (the NumPy lab's until a session edits them)
K_TEXT = slot("k_text", "")
V_TEXT = slot("v_text", "")
MATRIX_NAMES = (("queries", "Q", Q_TEXT), ("keys", "K", K_TEXT), ("values", "V", V_TEXT))
SOURCE = slot("source", "type", url=True)  # where Q, K, V come from: a key of SOURCES
PAD_KEYS = slot_family("pad_keys", [], url=True)  # pad_keys_<b>: padding keys of sequence b
ORIGIN_FIELD = "from"  # the URL field of a trained attention's origin (`LearnedWeights.origin`)
LEARNED = slot("learned", None, kind=LearnedWeights)  # the weights in use, or None: seeded
OPENED_TEXTS = slot("opened_texts", None, kind=tuple)  # Q, K, V as a trained attention filled
# them in (the preset box says "edited" once they differ)
EXPLORER = "matrices"  # the page that shows the explorer (its `Mode.name`, its URL path)


def set_texts(query: str, key: str, value: str) -> None:
    """Fill the boxes of typed Q, K and V."""
    for (_, _, text), typed in zip(MATRIX_NAMES, (query, key, value), strict=True):
        text.set(typed)


def open_in_explorer(opened: Opened) -> None:
    """Open a trained attention in the explorer (a button callback of another page: it runs
    before the next draw, which then switches to the explorer's page, its URL naming where the
    attention came from)."""
    _fill(opened)
    go_to(EXPLORER, explorer_fields())


def _fill(opened: Opened) -> None:
    """Fill the explorer with a trained attention's Q `(T, D)`, K, V `(S, ·)` and score weights,
    and open its step-by-step view."""
    SOURCE.set("type")
    texts = tuple(_matrix_text(a) for a in (opened.query, opened.keys, opened.values))
    set_texts(*texts)
    LEARNED.set(opened.learned)
    OPENED_TEXTS.set(texts)
    for padding in PAD_KEYS.members():
        padding.set([])
    s = opened.settings  # its score, scaling, causal mask and position scheme; no other mask
    values = {"score": s.score, "scale": s.scale, "causal": s.causal, "position": s.position}
    if s.position == "rope":
        values["rope_theta"] = s.rope_theta
    elif s.position == "alibi":
        values |= {"alibi_heads": s.alibi_heads, "alibi_head": s.alibi_head}
    sidebar.apply_settings(values)
    first_sequence()
    results.show_view("Step by step")


def explorer_fields() -> dict[str, str]:
    """The URL fields of the explorer as `open_in_explorer` filled it (its origin, which opens it
    again, and its open tab, so that Forward to it opens the same tab): for the switch to its
    page."""
    learned = LEARNED.get()
    fields = {ORIGIN_FIELD: learned.origin} if learned is not None and learned.origin else {}
    return fields | {results.VIEW.key: results.VIEW.get()}


def reopen_from_link() -> None:
    """A link's `from` field names a shipped model's step or head: open it again."""
    origin = st.query_params.get(ORIGIN_FIELD)
    if origin and (LEARNED.get() is None or LEARNED.get().origin != origin):
        opened = shown(lambda: reopened(origin))
        if opened is not None:
            _fill(opened)


def forget_learned() -> None:
    """Back to score weights drawn from the seed (a button callback): the link forgets the
    origin too."""
    LEARNED.clear()
    if ORIGIN_FIELD in st.query_params:
        del st.query_params[ORIGIN_FIELD]


def origin_in_url() -> None:
    """Keep the `from` field while the inputs are a shipped model's step or head."""
    learned = LEARNED.get()
    origin = learned.origin if learned is not None else None
    if origin and st.query_params.get(ORIGIN_FIELD) != origin:
        st.query_params[ORIGIN_FIELD] = origin
    elif not origin and ORIGIN_FIELD in st.query_params:
        del st.query_params[ORIGIN_FIELD]


def _matrix_text(array: np.ndarray) -> str:
    """Rows of float32 numbers with 9 significant digits: parsed back, exactly the same."""
    return "\n".join(" ".join(f"{x:.9g}" for x in row) for row in np.asarray(array, np.float32))
