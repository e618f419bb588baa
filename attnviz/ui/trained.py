"""Trained Transformer weights for the Multi-head, Decoder and Learn views: which weights, the
text to translate, and the traced forward pass. Wiring only: the model is `attnviz.learn`'s.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.learn.pretrained import TRANSFORMER_RECIPES, load_transformer
from attnviz.learn.tasks import get_task
from attnviz.learn.transformer import TransformerTrace, TransformerTranslator
from attnviz.ui.controls import MODES
from attnviz.ui.inputs import _parse
from attnviz.ui.state import bound, kept, plain

RANDOM = "Random weights"
TRAINED = {f"Trained on {task}": task for task in TRANSFORMER_RECIPES}  # label -> task
SPACE = "␣"  # how a space is labelled on the axes
TRACES_KEPT = 8  # traced texts a session keeps


def weights_choice(key: str) -> str | None:
    """The weights a view draws: None for random weights, else the task of a shipped
    Transformer."""
    label = st.segmented_control(
        "Weights", [RANDOM, *TRAINED], default=RANDOM, required=True, **bound(key)
    )
    return TRAINED.get(label)


def char_labels(tokens) -> list[str]:
    """Axis labels of characters (a space shown as ␣)."""
    return [SPACE if t == " " else t for t in tokens]


def task_text(task: str) -> str:
    """The text to translate for `task`, kept per task (shared with Learn)."""
    spec = get_task(task)
    key = f"learn_text_{task}"
    st.session_state.setdefault(key, spec.example[0])
    return st.text_input(f"Your input ({spec.max_source_len} characters at most)", **kept(key))


@st.cache_resource(max_entries=4, show_spinner="Loading the shipped Transformer…")
def shipped_transformer(task: str) -> TransformerTranslator:
    """A shipped Transformer, loaded once per server and shared read-only by every session."""
    return load_transformer(task)


def traced(model: TransformerTranslator, text: str) -> TransformerTrace | None:
    """The model's forward pass on `text` with every head (None after showing why not).

    Kept per session (the last `TRACES_KEPT` texts of each model), so clicking through heads
    does not rerun the model; the model is kept beside its traces, so an id is never reused.
    """
    cache = st.session_state.setdefault("transformer_traces", {})
    key = (id(model), text)
    if key not in cache:
        trace = _parse(lambda: model.trace(text))
        if trace is None:
            return None
        while len(cache) >= TRACES_KEPT:
            cache.pop(next(iter(cache)))
        cache[key] = (model, trace)
    return cache[key][1]


def shipped_trace(task: str) -> TransformerTrace | None:
    """The text input of `task` and the shipped Transformer's trace of it."""
    text = task_text(task)
    model = _parse(lambda: shipped_transformer(task))
    if model is None:
        return None
    trace = traced(model, text)
    if trace is not None:
        out = trace.translation.output
        st.caption(
            f"The Transformer trained on {task} ({model.parameter_count:,} parameters, "
            f"{model.config.layers} layers × {model.config.heads} heads, d_model "
            f"{model.config.d_model}) translates it to: {plain(out) or '(nothing)'}"
        )
    return trace


def _matrix_text(array: np.ndarray) -> str:
    """Rows of float32 numbers with 9 significant digits: parsed back, exactly the same."""
    return "\n".join(" ".join(f"{x:.9g}" for x in row) for row in np.asarray(array, np.float32))


def open_in_explorer(
    query: np.ndarray,
    keys: np.ndarray,
    values: np.ndarray,
    *,
    params: dict[str, np.ndarray],
    labels: tuple[tuple[str, ...], tuple[str, ...]],
    source: str,
    note: str,
    score: str,
    scale: bool,
    causal: bool = False,
) -> None:
    """Fill the Matrices mode with a trained attention's Q `(T, D)`, K, V `(S, ·)` and score
    weights, labelled `(rows, columns)`, and switch to its step-by-step view (a button
    callback: it runs before the next draw). `source` and `note` say where they came from."""
    state = st.session_state
    state["source"] = "type"
    state["q_text"] = _matrix_text(query)
    state["k_text"] = _matrix_text(keys)
    state["v_text"] = _matrix_text(values)
    state["learned_params"] = {name: np.asarray(w) for name, w in params.items()}
    state["learned_labels"] = labels
    state["learned_from"] = source
    state["learned_note"] = note
    for key in [k for k in state if str(k).startswith("pad_keys_")]:
        state[key] = []
    state.update(score=score, scale=scale, causal=causal, window_on=False, seq=0)
    state["mode"] = MODES["matrices"]
    state["view"] = "Step by step"
