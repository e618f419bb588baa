"""The shipped Transformers in the pages that show them (Multi-head, Decoder, Learn): which
weights, the text to translate, and the forward pass with every head. Wiring only: the model is
`attnviz.learn`'s, loaded (with TensorFlow) when a page first asks for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from attnviz.learn.recipes import TRANSFORMER_RECIPES
from attnviz.learn.tasks import get_task
from attnviz.ui.loading import back_end
from attnviz.ui.messages import plain, shown
from attnviz.ui.state import Slot, slot, slot_family

if TYPE_CHECKING:
    from attnviz.learn.transformer import TransformerTrace, TransformerTranslator

RANDOM = "Random weights"
TRAINED = {f"Trained on {task}": task for task in TRANSFORMER_RECIPES}  # label -> task
SPACE = "␣"  # how a space is labelled on the axes
TRACES_KEPT = 8  # traced texts a session keeps
TEXTS = slot_family("learn_text", "")  # learn_text_<task>: the text to translate, per task
TRACES = slot("transformer_traces", None, kind=dict)  # (model id, text) -> (model, trace)


def weights_choice(choice: Slot[str]) -> str | None:
    """The weights a view draws: None for random weights, else the task of a shipped
    Transformer. `choice` is the page's own slot for it."""
    label = st.segmented_control(
        "Weights", [RANDOM, *TRAINED], default=RANDOM, required=True, **choice.widget()
    )
    return TRAINED.get(label)


def char_labels(tokens) -> list[str]:
    """Axis labels of characters (a space shown as ␣)."""
    return [SPACE if t == " " else t for t in tokens]


def task_text(task: str) -> str:
    """The text to translate for `task`, kept per task (shared by every page that translates)."""
    spec = get_task(task)
    text = TEXTS.of(task)
    text.setdefault(spec.example[0])
    return st.text_input(f"Your input ({spec.max_source_len} characters at most)", **text.widget())


@st.cache_resource(max_entries=4, show_spinner="Loading the shipped Transformer…")
def shipped_transformer(task: str) -> TransformerTranslator:
    """A shipped Transformer, loaded once per server and shared read-only by every session."""
    return back_end("attnviz.learn.pretrained").load_transformer(task)


def traced(model: TransformerTranslator, text: str) -> TransformerTrace | None:
    """The model's forward pass on `text` with every head (None after showing why not).

    Kept per session (the last `TRACES_KEPT` texts of each model), so clicking through heads
    does not rerun the model; the model is kept beside its traces, so an id is never reused.
    """
    cache = TRACES.get()
    if cache is None:
        cache = {}
        TRACES.set(cache)
    key = (id(model), text)
    if key not in cache:
        trace = shown(lambda: model.trace(text))
        if trace is None:
            return None
        while len(cache) >= TRACES_KEPT:
            cache.pop(next(iter(cache)))
        cache[key] = (model, trace)
    return cache[key][1]


def shipped_trace(task: str) -> TransformerTrace | None:
    """The text input of `task` and the shipped Transformer's trace of it."""
    text = task_text(task)
    model = shown(lambda: shipped_transformer(task))
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
