"""Language model: a small decoder-only Transformer (causal self-attention only, RoPE), shipped
or trained here on a task, to watch an induction head form (a layer-1 head that looks at the
token after the previous occurrence of the current one, built on a layer-0 previous-token head),
switch heads off and see copying break, and generate token by token with the KV cache.
Wiring only: the models are `attnviz.learn`'s, loaded (with TensorFlow) once the controls are
drawn; the views are `ui.lm_views`.
"""

from __future__ import annotations

import functools
from dataclasses import fields, replace
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from attnviz.core import limits
from attnviz.core.words import plural
from attnviz.drawing.model_view import model_view
from attnviz.drawing.phase_change import phase_change_figure
from attnviz.drawing.translation import char_labels
from attnviz.learn.language.tasks import LM_TASKS, get_lm_task
from attnviz.learn.recipes import LM_RECIPES
from attnviz.ui.explorer.opening import Opened, reading_link, reopens
from attnviz.ui.frame.charts import chart
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import plain, readable, shown, unlike_training
from attnviz.ui.frame.mode import Mode
from attnviz.ui.frame.presenter import controls
from attnviz.ui.frame.state import slot, slot_family
from attnviz.ui.frame.tabs import open_tab
from attnviz.ui.frame.takeaway import view_download
from attnviz.ui.language_model.views import (
    ablation_view,
    generation_view,
    head_opening,
    heads_view,
    learned_view,
    phase_change_caption,
)
from attnviz.ui.models.training_progress import (
    array_key,
    epoch_slider,
    epochs_in_words,
    forget_ended,
    named_run,
    progress,
    shared_figure,
    start_run,
)

if TYPE_CHECKING:
    from attnviz.learn.language.model import LanguageModel
    from attnviz.learn.runs import RunSnapshot

SOURCES = ("Shipped", "Train")  # the shipped checkpoint, or one trained here
VIEWS = ("Every head", "Switch heads off", "Generate", "How it learned")
TASK = slot(  # the URL holds the task's title, as the control shows it
    "lm_task", LM_TASKS[0], url=True, url_aliases={n: get_lm_task(n).title for n in LM_TASKS}
)
SOURCE = slot("lm_model", SOURCES[0], url=True)
VIEW = slot("lm_view", VIEWS[0], url=True)
EPOCHS = slot("lm_epochs", 20, url=True)  # epochs of a run started here
SEQUENCES = slot("lm_sequences", 4_096, url=True)  # fresh training sequences per epoch
SEQUENCE_CHOICES = (512, 1_024, 2_048, 4_096)
TEXTS = slot_family("lm_text", "")  # lm_text_<task>: the text the model reads, per task
TASK_TEXTS = tuple(TEXTS.of(task) for task in LM_TASKS)
SEED = slot("lm_seed", 0, url=True)  # the training run's seed
RUNS = slot("lm_runs", None, kind=dict, kept=True)  # (task, seed) -> this session's run
RUN_FIELD = "lm_run"  # the URL field naming the run this page trains (a reload finds it again)
PROBE_EPOCHS = epoch_slider("lm_probe", "Probe heads after epoch (0 = untrained)")
POSITION_NAMES = {"rope": "RoPE", "alibi": "ALiBi", "none": "no position scheme"}
GENERATE_FROM = 8  # the default generation prompt leaves this many of the example's tokens


def prepare(task: str = LM_TASKS[0], source: str = "Shipped", view: str | None = None) -> None:
    """Open this page on `task` (one of `LM_TASKS`), shipped or to train, on the tab `view`."""
    TASK.set(get_lm_task(task).name)
    SOURCE.set(source if source in SOURCES else SOURCES[0])
    VIEW.set(view if view in VIEWS else VIEWS[0])


@st.cache_resource(max_entries=2, show_spinner="Loading the shipped language model…")
def shipped_lm(task: str) -> LanguageModel:
    """A shipped language model, loaded once per server and shared read-only by every session."""
    with back_end(draws=False):
        from attnviz.learn.pretrained import load_lm
    return load_lm(task)


def warm_up() -> None:
    """What the page's first open does first: every shipped language model loaded into the
    cache the page reads, and traced on its task's example (tracing its TensorFlow functions)."""
    for task in LM_TASKS:
        shipped_lm(task).trace(get_lm_task(task).example)


def draw() -> None:
    """The whole page."""
    task = st.segmented_control(
        "Task", LM_TASKS, default=LM_TASKS[0], required=True,
        format_func=lambda name: get_lm_task(name).title, **TASK.widget(),
    )  # fmt: skip
    spec = get_lm_task(task)
    st.caption(f"**{spec.title}.** {plain(spec.description)}")
    source = st.segmented_control(
        "Weights", SOURCES, default=SOURCES[0], required=True, **SOURCE.widget()
    )
    controls().caption(
        "A decoder-only Transformer: causal self-attention only, RoPE positions, scaled dot "
        "product; each block adds an MLP after its attention."
    )
    with back_end():  # the models need TensorFlow from here on
        from attnviz.learn import pretrained  # noqa: F401
    if source == "Train":
        model = _training_panel(task)
    else:
        model = shown(lambda: shipped_lm(task))
        if model is not None:
            _summary(model, shipped=True)
    if model is None:
        return
    text = _text(task)
    trace = None if text is None else shown(lambda: model.trace(text))
    shipped_task = task if source == "Shipped" else None
    draws = (  # the text's views wait for a text the model can read (the box says why not)
        lambda: trace and heads_view(model, trace, shipped_task),
        lambda: trace and ablation_view(model, task, text),
        lambda: trace and _generation(model, task, text),
        lambda: learned_view(model),  # the model's training alone
    )
    name = open_tab(VIEWS, key=VIEW.key, bind="query-params")
    about = functools.partial(_taken, model, source, text, name)
    with view_download(f"attnviz language model: {name}", "lm-take-away", about):
        draws[VIEWS.index(name)]()


def _taken(model, source: str, text: str | None, view: str) -> dict:
    """What "Download this view" writes beside the charts: the task, the weights, the model's
    sizes and the text it read."""
    settings = {"task": model.task.title, "weights": source, "view": view}
    settings |= {f"model {f.name}": getattr(model.config, f.name) for f in fields(model.config)}
    return {"settings": settings, "inputs": {"text": text} if text is not None else {}}


def _text(task: str) -> str | None:
    """The text the model reads, kept per task; its example to start. None, after saying why
    right under the box, when the model cannot read it."""
    spec = get_lm_task(task)
    text = TEXTS.of(task)
    text.setdefault(spec.example)
    symbols = "".join(spec.symbols)
    known = f"letters {symbols[0]}–{symbols[-1]}" if symbols.isalpha() and symbols.islower() \
        else "the characters of its stories"  # fmt: skip
    typed = st.text_input(
        f"Text ({known}; it trained on {spec.context} tokens at a time)", **text.widget()
    )
    if not readable(lambda: spec.encode(typed, "text"), "text", "Your text"):
        return None  # said under the box: "Your text is empty. Type ..."
    unlike_training(spec.outside(typed))  # readable, but unlike every training sequence
    return typed


def _generation(model: LanguageModel, task: str, text: str) -> None:
    """The Generate tab, from `_prompt`; saying so when that leaves the text's last letters."""
    prompt = _prompt(task, text)
    if prompt != text:
        left = text[len(prompt) :]
        st.caption(
            f"Generating from the example less its last {plural(len(left), 'character')} "
            f"({plain(left)}), so that the model's guesses can be checked against them. Type a "
            "text of your own to generate after all of it."
        )
    generation_view(model, prompt)


def _prompt(task: str, text: str) -> str:
    """Generation starts from the text, less its last tokens when it is the task's example
    (so the model has something to copy)."""
    spec = get_lm_task(task)
    if text == spec.example and len(text) > GENERATE_FROM:
        return text[:-GENERATE_FROM]
    return text


def _summary(model: LanguageModel, shipped: bool) -> None:
    c, s = model.config, model.stats
    record = {}
    if shipped:
        with back_end():
            from attnviz.learn.pretrained import read_record
        record = read_record(model.task.name, "lm")["fresh"]
    fresh = ""
    if record:
        fresh = (
            f" · on {record['sequences']:,} fresh sequences: in-context accuracy "
            f"{100 * record['in_context_accuracy']:.1f} %, loss {record['loss']:.2f} nats "
            f"(guessing by letter frequency: {record['unigram_loss']:.2f})"
        )
    st.caption(
        f"{plural(c.layers, 'layer')} × {plural(c.heads, 'head')}, d_model {c.d_model}, "
        f"MLPs of {c.d_ff}, "
        f"{POSITION_NAMES[c.position]} · "
        f"{model.parameter_count:,} parameters · trained {epochs_in_words(s.epochs_run)} in "
        f"{s.train_seconds:.0f} s on {s.sequences:,} fresh sequences an epoch (best epoch "
        f"{s.best_epoch}){fresh}"
    )


def _training_panel(task: str) -> LanguageModel | None:
    """Epochs, sequences per epoch, seed, Train; the run's progress; the model once trained."""
    runs = RUNS.get()
    if runs is None:
        runs = {}
        RUNS.set(runs)
    left, middle, seeds, right = st.columns([2, 2, 1, 1])
    epochs = int(left.slider("Epochs (at most)", 1, limits.APP_MAX_EPOCHS, EPOCHS.default,
                             **EPOCHS.widget()))  # fmt: skip
    sequences = int(middle.select_slider("Fresh sequences per epoch", SEQUENCE_CHOICES,
                                         value=SEQUENCES.default, format_func="{:,}".format,
                                         **SEQUENCES.widget()))  # fmt: skip
    seed = int(seeds.number_input("Seed", 0, limits.MAX_SEED, **SEED.widget("value")))
    key = (task, seed)
    recipe = LM_RECIPES[task]
    training = replace(recipe.training, epochs=epochs, n_pairs=sequences, seed=seed,
                       time_limit=limits.APP_TIME_LIMIT)  # fmt: skip
    run = runs.get(key) or named_run(RUN_FIELD, task, recipe.network, training)
    with right:
        st.write("")
        busy = any(r.running for r in runs.values())
        if st.button("Train", type="primary", disabled=busy, icon=":material/school:",
                     key="lm_train"):  # fmt: skip
            run = start_run(task, recipe.network, training, RUN_FIELD)
    if run is not None:
        runs[key] = run
    st.caption(
        f"Trains the shipped recipe's model from seed {seed} on {sequences:,} fresh sequences "
        f"an epoch, at most {epochs_in_words(epochs)} or {limits.APP_TIME_LIMIT:.0f} s; the "
        "epoch with the best validation loss is kept. The model stays in your session only."
    )
    if run is None:
        st.info("Press Train to watch the loss fall and the heads form, epoch by epoch.",
                icon=":material/school:")  # fmt: skip
        return None
    snapshot = progress(run, lambda: _open_shipped(task), draw_reports=_draw_reports)
    forget_ended(RUN_FIELD, snapshot)
    if snapshot.model is not None:
        _summary(snapshot.model, shipped=False)
    return snapshot.model


def _open_shipped(task: str) -> None:
    """Show the shipped model of `task` while a run waits (a button callback)."""
    SOURCE.set("Shipped")
    TASK.set(task)


def _draw_reports(snapshot: RunSnapshot) -> None:
    """A language model's epochs so far: the phase change, and the probe's heads at an epoch."""
    with back_end():
        from attnviz.learn.language.training import LMCurves
    curves = LMCurves.of(snapshot.reports)
    key = ("lm-phase-change", *(array_key(getattr(curves, f.name)) for f in fields(curves)))
    title = "Loss, copying and every head's scores per epoch"
    figure = shared_figure(key, lambda: phase_change_figure(curves, title=title))  # all watchers'
    chart(figure, "phase-change", key="lm-live-phase-change")
    phase_change_caption(curves)
    _probe_heads(snapshot)


def _probe_heads(snapshot: RunSnapshot) -> None:
    """The fixed probe's attention in every head after the chosen epoch."""
    reports = {r.epoch: r for r in snapshot.reports}
    chosen = PROBE_EPOCHS.draw(list(reports))
    probe = reports[chosen].probe
    labels = char_labels(probe.tokens)
    st.caption(f"Every head on the probe {plain(probe.text)} after epoch {chosen}.")
    blocked = ~np.tri(len(labels), dtype=bool)  # (T, T) the causal mask, drawn grey
    figure = shared_figure(  # built once for every session watching the run
        ("lm-probe-heads", tuple(labels), array_key(probe.weights)),
        lambda: model_view(probe.weights, labels, labels, blocked=blocked, row_title="token",
                           col_title="token"),
    )  # fmt: skip
    chart(figure, "probe-heads", key="lm-probe-heads")


MODE = Mode(
    name="language-model",
    label="Language model",
    icon=":material/auto_stories:",
    intro="A small language model that learns to copy: watch an induction head form, switch "
    "heads off, and generate token by token with the KV cache.",
    draw=draw,
    url_texts=TASK_TEXTS,
    prepare=prepare,
    warm_up=warm_up,
)


@reopens("lm")
def reopened_lm_head(rest: str) -> Opened:
    """A head of the shipped language model on a text, from a link's `from` field
    (`lm:<task>:<layer>:<head>:<text>`, `rest` without its `lm:`).

    Raises:
        ValueError: for a field that names no such model, head or readable text.
    """
    with reading_link():
        task, layer, head, text = rest.split(":", 3)
        model = shipped_lm(task)
        return head_opening(model, model.trace(text), int(layer), int(head), task).opened
