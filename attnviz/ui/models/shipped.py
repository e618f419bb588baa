"""The shipped Transformers in the pages that show them (Multi-head, Decoder, Learn): which
weights, the text to translate, and the forward pass with every head; a translator's step or
head as the explorer opens it (and again from a link). Wiring only: the model is
`attnviz.learn`'s, loaded (with TensorFlow) when a page first asks for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from attnviz.core.kept import Kept
from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.core.settings import AttentionSettings
from attnviz.core.ways import get_way
from attnviz.core.words import plural
from attnviz.drawing.translation import char_labels
from attnviz.inputs.problem import LearnedWeights
from attnviz.learn.recipes import TRANSFORMER_RECIPES
from attnviz.learn.translation.tasks import TASKS, get_task, outside_training
from attnviz.learn.translation.vocab import Vocabulary
from attnviz.ui.explorer.opening import Opened, reading_link, reopens, session
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import plain, readable, shown, unlike_training
from attnviz.ui.frame.navigation import go_to
from attnviz.ui.frame.state import Slot, slot_family

if TYPE_CHECKING:
    from attnviz.learn.translation.transformer_translator import (
        TransformerTrace,
        TransformerTranslator,
    )

RANDOM = "Random weights"
TRAINED = {f"Trained on {task}": task for task in TRANSFORMER_RECIPES}  # label -> task
TRACES_KEPT = 32  # (model, text) traces a server keeps: each task's shipped model on the
# texts being read now, and the models trained in sessions (a few hundred kB each)
TEXTS = slot_family("learn_text", "")  # learn_text_<task>: the text to translate, per task
TASK_TEXTS = tuple(TEXTS.of(task) for task in TASKS)  # every task's text (a page's URL texts)
LEARN = "learn"  # the page that trains and shows every model of a task (its `Mode.name`)


def weights_choice(choice: Slot[str], extra: tuple[str, ...] = ()) -> str | None:
    """The weights a view draws: None for random weights (or one of the page's `extra`
    labels, which `choice` then holds), else the task of a shipped Transformer. `choice` is the
    page's own slot for it."""
    label = st.segmented_control(
        "Weights", [RANDOM, *extra, *TRAINED], default=RANDOM, required=True, **choice.widget()
    )
    return TRAINED.get(label)


def task_text(task: str) -> str | None:
    """The text to translate for `task`, kept per task (shared by every page that translates);
    None, after saying why right under the box, when the models cannot read it."""
    spec = get_task(task)
    text = TEXTS.of(task)
    text.setdefault(spec.example[0])
    typed = st.text_input(f"Your input ({spec.max_source_len} characters at most)", **text.widget())
    check = Vocabulary.of(spec).check_source
    if not readable(lambda: check(typed, "input"), "input", "Your input"):
        return None  # said under the box: "Your input is empty. Type 1 to ..."
    unlike_training(outside_training(task, typed))  # readable, but unlike every training input
    return typed


def open_in_learn_button(task: str) -> None:
    """The button that opens the shipped Transformer of `task` on the Learn page, in its model
    view: the Learn page is prepared with these arguments of its `prepare`, as a lesson would."""
    setup = {"task": task, "architecture": "Transformer", "source": "Shipped", "view": "Model view"}
    st.button(
        "Open this Transformer in Learn: its training, every head, the model view",
        on_click=go_to,
        args=(LEARN,),
        kwargs={"setup": setup},
        icon=":material/school:",
    )


@st.cache_resource(max_entries=4, show_spinner="Loading the shipped Transformer…")
def shipped_transformer(task: str) -> TransformerTranslator:
    """A shipped Transformer, loaded once per server and shared read-only by every session."""
    with back_end(draws=False):
        from attnviz.learn import pretrained
    return pretrained.load_transformer(task)


def traced(model: TransformerTranslator, text: str) -> TransformerTrace | None:
    """The model's forward pass on `text` with every head (None after showing why not);
    `kept_trace`'s."""
    return shown(lambda: kept_trace(model, text))


_TRACES = Kept(TRACES_KEPT)  # (model id, text) -> (the model, kept beside its trace so that its
# id is never reused; the trace)


def kept_trace(model: TransformerTranslator, text: str) -> TransformerTrace:
    """`model.trace(text)`, kept per server (the last `TRACES_KEPT` pairs): every session that
    opens lesson 10, a model view or a trained Multi-head reads the same shipped model on the
    same text (the warm-up traces each task's example), and clicking through heads does not
    run the model again. Traces are shared read-only, as the shipped models are. Raises what
    `model.trace` raises (nothing is kept then)."""
    return _TRACES.get((id(model), text), lambda: (model, model.trace(text)))[1]


def shipped_trace(task: str) -> TransformerTrace | None:
    """The text input of `task` and the shipped Transformer's trace of it."""
    text = task_text(task)
    model = shown(lambda: shipped_transformer(task))
    if model is None or text is None:
        return None
    trace = traced(model, text)
    if trace is not None:
        out = trace.translation.output
        st.caption(
            f"The Transformer trained on {task} ({model.parameter_count:,} parameters, "
            f"{plural(model.config.layers, 'layer')} × {plural(model.config.heads, 'head')}, "
            f"d_model {model.config.d_model}) translates it to: {plain(out) or '(nothing)'}"
        )
    return trace


@st.cache_resource(max_entries=12, show_spinner="Loading the shipped model…")
def shipped_seq2seq(task: str, score: str):
    """A shipped GRU translator, loaded once per server and shared read-only by every session."""
    with back_end(draws=False):
        from attnviz.learn import pretrained
    return pretrained.load_pretrained(task, score)


def warm_up_shipped() -> None:
    """Load every shipped model into the server's caches, keyed as the pages ask for them
    (`shipped_seq2seq(task, score)`, `shipped_transformer(task)`), and run each on its task's
    example as the pages do: the first calls trace the models' TensorFlow functions (~0.3–1 s
    each), which a first visit would otherwise wait for."""
    for task in TASKS:
        example = get_task(task).example[0]
        for score in SCORE_KINDS:
            model = shipped_seq2seq(task, score)
            model.translate(example)
            model.attention_inputs(example, 0)  # the explorer's step
    for task in TRANSFORMER_RECIPES:  # kept: a page's first open reads it
        kept_trace(shipped_transformer(task), get_task(task).example[0])


def step_opened(inputs, task: str, shipped: bool) -> Opened:
    """One decoder step of a GRU translator (`AttentionInputs`), for the explorer; a shipped
    model's step can be opened again from a link."""
    text = "".join(inputs.source_tokens)
    model = "the shipped GRU translator" if shipped else "a GRU translator trained in this session"
    source = (f"{model} ({get_task(task).title}), {inputs.score} score, step {inputs.step} "
              f"(output {inputs.target_tokens[inputs.step]!r})")  # fmt: skip
    origin = f"step:{task}:{inputs.score}:{inputs.step}:{text}" if shipped else session(source)
    learned = LearnedWeights(
        params=inputs.params,
        labels=(  # the step's output character; the input characters
            (char_labels(inputs.target_tokens)[inputs.step],),
            tuple(char_labels(inputs.source_tokens)),
        ),
        source=source,
        note="Q is the decoder's state at that step, K = V the encoder's outputs.",
        origin=origin,
    )
    settings = AttentionSettings(score=inputs.score, scale=inputs.scale)
    return Opened(inputs.query, inputs.keys, inputs.values, learned, settings)


def head_opened(trace, way: str, layer: int, head: int, task: str | None) -> Opened:
    """One head of a Transformer's forward pass (`TransformerTrace`), its own Q, K and V, for
    the explorer; `task` names the shipped model it came from (None: trained in the session,
    which a link cannot open again)."""
    call = trace.attention.at(way, layer)
    rows, cols = (char_labels(labels) for labels in call.labels())
    text = trace.translation.source
    model = (f"the shipped Transformer ({get_task(task).title})" if task
             else "a Transformer trained in this session")  # fmt: skip
    source = f"{model}, {get_way(way).short} · layer {layer} · head {head}"
    learned = LearnedWeights(
        params={},
        labels=(tuple(rows), tuple(cols)),
        source=source,
        note="Q, K and V are this head's projections of the layer's inputs (its trained "
        "W_Q, W_K and W_V applied); the score is the scaled dot product.",
        origin=session(source) if task is None else f"head:{task}:{way}:{layer}:{head}:{text}",
    )
    return Opened(
        call.query_heads[0, head],  # (T, Dk)
        call.key_heads[0, head],  # (S, Dk)
        call.value_heads[0, head],  # (S, Dv)
        learned,
        AttentionSettings(score="dot", scale=True, causal=get_way(way).causal),
    )


@reopens("step")
def _reopened_step(rest: str) -> Opened:
    """A decoder step of a shipped GRU translator, from a link's `from` field
    (`step:<task>:<score>:<step>:<text>`, `rest` without its `step:`)."""
    with reading_link():
        task, score, step, text = rest.split(":", 3)
        model = shipped_seq2seq(task, score)
        return step_opened(model.attention_inputs(text, int(step)), task, shipped=True)


@reopens("head")
def _reopened_head(rest: str) -> Opened:
    """A head of a shipped Transformer, from a link's `from` field
    (`head:<task>:<way>:<layer>:<head>:<text>`, `rest` without its `head:`)."""
    with reading_link():
        task, way, layer, head, text = rest.split(":", 4)
        trace = shipped_transformer(task).trace(text)
        return head_opened(trace, way, int(layer), int(head), task)


def preload() -> None:
    """Load the default shipped model (the first task, dot score) into the server's cache and
    run its first translation (the server's warm-up calls this once)."""
    task = TASKS[0]
    shipped_seq2seq(task, "dot").translate(get_task(task).example[0])
