"""Learn: attention that was learned. Pick a task and a model (a GRU encoder–decoder with
attention, or a small Transformer), open a shipped one or train one and watch its attention
align, translate your own text, compare the score functions, look at every head of the
Transformer, and open one decoder step or head in the Matrices explorer. Wiring and drawing
only: the models are `attnviz.learn`'s, loaded (with TensorFlow) once the controls are drawn.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from attnviz.core import limits
from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.core.settings import AttentionSettings
from attnviz.core.words import plural
from attnviz.drawing.curves import training_curves
from attnviz.drawing.translation import char_labels, translation_figure
from attnviz.learn.configs import (
    TRANSFORMER_TRAINING,
    NetworkConfig,
    TrainConfig,
    TransformerConfig,
)
from attnviz.learn.recipes import TRANSFORMER_RECIPES
from attnviz.learn.translation.tasks import TASKS, get_task, make_pairs
from attnviz.ui.controls import sidebar
from attnviz.ui.explorer.state import open_in_explorer
from attnviz.ui.frame.charts import chart
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import plain, shown
from attnviz.ui.frame.mode import Mode
from attnviz.ui.frame.presenter import chart_columns, controls, where_settings
from attnviz.ui.frame.state import slot
from attnviz.ui.frame.tables import data_table
from attnviz.ui.frame.tabs import open_tab
from attnviz.ui.models.heads_panel import HeadsView, model_view_panel
from attnviz.ui.models.shipped import (
    TASK_TEXTS,
    shipped_seq2seq,
    shipped_transformer,
    step_opened,
    task_text,
    traced,
    warm_up_shipped,
)
from attnviz.ui.models.training_progress import (
    epochs_in_words,
    forget_ended,
    named_run,
    progress,
    start_run,
)

ARCHITECTURES = ("GRU + attention", "Transformer")  # Seq2SeqAttention, TransformerTranslator
MODEL_SOURCES = ("Shipped", "Train")  # a shipped checkpoint, or one trained here
LEARN_VIEWS = ("Translate", "Compare scores", "One step in the explorer")
TRANSFORMER_VIEWS = ("Translate", "Model view")
TASK = slot(  # the URL holds the task's title, as the control shows it; older links its name
    "task", TASKS[0], url=True, url_aliases={name: get_task(name).title for name in TASKS}
)
ARCHITECTURE = slot("learn_arch", ARCHITECTURES[0], url=True)
SOURCE = slot("learn_model", MODEL_SOURCES[0], url=True)  # shipped or trained here
SCALE = slot("learn_scale", NetworkConfig().scale, url=True)  # the GRU model's √D scaling
EPOCHS = slot("learn_epochs", 6, url=True)  # epochs of a GRU run
TRANSFORMER_EPOCHS = slot("learn_tepochs", 15, url=True)  # epochs of a Transformer run
PAIRS = slot("learn_pairs", TrainConfig().n_pairs, url=True)  # training pairs of a run
VIEW = slot("learn_view", LEARN_VIEWS[0], url=True)  # the GRU model's open tab
TRANSFORMER_VIEW = slot("learn_tview", TRANSFORMER_VIEWS[0], url=True)  # the Transformer's
STEP = slot("learn_step", 0)  # the decoder step opened in the explorer
RUNS = slot("learn_runs", None, kind=dict, kept=True)  # (task, model, seed...) -> a run
RUN_FIELD = "learn_run"  # the URL field naming the run this page trains (the start of its key):
# a reload, or a replica taking over from one that died, finds the run again


def _settings_controls(transformer: bool, shipped: bool) -> AttentionSettings:
    """The sidebar: the score the GRU model attends with and whether it scales (off by
    default: the shipped models do not), or a note (the Transformer's score is fixed); the
    seed, which only a model trained here uses. The source padding mask is always on; there
    are no other masks."""
    if transformer:
        controls().caption(
            "The Transformer attends with Keras's MultiHeadAttention: scaled dot product, "
            "padding never attended, the decoder's self-attention causal."
        )
        score, scale = "dot", True
    else:
        score = sidebar.score_control()
        scale = controls("scale").toggle(
            "Scale by √D",
            help="Divide every score by the square root of the encoder's output size D.",
            **SCALE.widget(),
        )
        controls().caption(
            "The model never attends the padding after its input: that mask is fixed."
        )
    seed = sidebar.seed_control()
    if shipped:
        controls("seed").caption(
            "The seed draws the pairs and first weights of a model you train (Weights: "
            "Train); a shipped model keeps the seed it was trained with."
        )
    return AttentionSettings(score=score, scale=bool(scale), seed=seed)


def prepare(task: str, architecture: str, source: str = "Shipped", view: str | None = None) -> None:
    """Open this page on `task` with the model `architecture` (one of `ARCHITECTURES`), shipped
    or to train (`source`, one of `MODEL_SOURCES`), on the tab `view`; the GRU model scores
    with the unscaled dot product, as the shipped ones do."""
    TASK.set(get_task(task).name)
    ARCHITECTURE.set(architecture)
    SOURCE.set(source)
    sidebar.apply_settings({"score": "dot"})
    SCALE.set(SCALE.default)
    views, tab = (
        (TRANSFORMER_VIEWS, TRANSFORMER_VIEW)
        if architecture == "Transformer"
        else (LEARN_VIEWS, VIEW)
    )
    tab.set(view if view in views else views[0])


def draw() -> None:
    """The whole Learn page."""
    task = _task_picker()
    left, right = st.columns(2)
    with left:
        architecture = st.segmented_control(
            "Model", ARCHITECTURES, default=ARCHITECTURES[0], required=True, **ARCHITECTURE.widget()
        )
    with right:
        source = st.segmented_control(
            "Weights", MODEL_SOURCES, default=MODEL_SOURCES[0], required=True, **SOURCE.widget()
        )
    transformer = architecture == "Transformer"
    settings = _settings_controls(transformer, shipped=source == "Shipped")
    with back_end():  # the models need TensorFlow from here on
        from attnviz.learn import pretrained  # noqa: F401
    if source == "Train":
        model = _training_panel(task, settings, transformer)
    else:
        model = (_shipped_transformer_panel if transformer else _shipped_panel)(task, settings)
    if model is None:
        return
    if transformer:
        views, draws, tab = TRANSFORMER_VIEWS, (_translate_view, _model_view), TRANSFORMER_VIEW
    else:
        views, draws, tab = LEARN_VIEWS, (_translate_view, _compare_view, _explorer_view), VIEW
    draws[views.index(open_tab(views, key=tab.key, bind="query-params"))](model, task)


def _task_picker() -> str:
    task = st.segmented_control(
        "Task",
        TASKS,
        default=TASKS[0],
        required=True,
        format_func=lambda name: get_task(name).title,
        **TASK.widget(),
    )
    spec = get_task(task)
    st.caption(f"**{spec.title}.** {spec.description}")
    with st.expander("What the models were trained on"):
        st.markdown("\n".join(f"- {plain(example)}" for example in spec.trained_on))
    pairs = make_pairs(task, 5, seed=0)
    data_table(
        {"input": [s for s, _ in pairs], "output": [t for _, t in pairs]},
        width="content",
    )
    return task


def _shipped_panel(task: str, settings: AttentionSettings):
    if settings.scale:
        st.info(
            f"The shipped models score without √D scaling. Turn scaling off {where_settings()} "
            "to open them, or train a scaled model in this session.",
            icon=":material/info:",
        )
        return None
    return _shipped(lambda: shipped_seq2seq(task, settings.score))


def _shipped(load):
    """The shipped model `load()` gives (None after showing why not), its summary and curves."""
    model = shown(load)
    if model is None:
        return None
    _model_summary(model)
    history = getattr(model.stats, "history", ())
    if history:
        chart(
            training_curves(history, title="How it was trained"), key="curves", name="how-trained"
        )
    return model


def _shipped_transformer_panel(task: str, settings: AttentionSettings):
    if task not in TRANSFORMER_RECIPES:
        st.info(
            f"No Transformer is shipped for this task: choose {' or '.join(TRANSFORMER_RECIPES)}, "
            "or press Train to train one here.",
            icon=":material/info:",
        )
        return None
    return _shipped(lambda: shipped_transformer(task))


def _model_summary(model) -> None:
    s = model.stats
    c = model.config
    kind = (
        f"Transformer: {c.layers} encoder and {plural(c.layers, 'decoder layer')} × "
        f"{plural(c.heads, 'head')}, "
        f"d_model {c.d_model}, scaled dot product"
        if hasattr(c, "heads")
        else f"{s.score} score{' · scaled' if s.scale else ''}"
    )
    st.caption(
        f"{kind} · {s.parameters:,} parameters · "
        f"trained {epochs_in_words(s.epochs_run)} in {s.train_seconds:.0f} s "
        f"on {s.n_pairs:,} pairs "
        f"(seed {s.seed}) · validation: {100 * s.val_char_accuracy:.2f} % characters, "
        f"{100 * s.val_exact_match:.2f} % exact, alignment score {s.val_alignment:.3f}"
    )


def _training_panel(task: str, settings: AttentionSettings, transformer: bool = False):
    """Train button, live progress and the model this session trained last for these settings."""
    if transformer:  # one model per choice; the Transformer's score is fixed
        key = (task, "transformer", settings.seed)
    else:
        key = (task, settings.score, settings.scale, settings.seed)
    runs = RUNS.get()
    if runs is None:
        runs = {}
        RUNS.set(runs)
    left, middle, right = st.columns([2, 2, 1])
    epochs_slot = TRANSFORMER_EPOCHS if transformer else EPOCHS
    epochs = int(
        left.slider(
            "Epochs (at most)", 1, limits.APP_MAX_EPOCHS, epochs_slot.default,
            **epochs_slot.widget(),
        )
    )  # fmt: skip
    n_pairs = int(
        middle.select_slider(
            "Training pairs",
            limits.APP_TRAIN_PAIRS,
            value=PAIRS.default,
            format_func="{:,}".format,
            **PAIRS.widget(),
        )
    )
    network, training = _configs(settings, transformer, epochs, n_pairs)
    run = runs.get(key) or named_run(RUN_FIELD, task, network, training)
    busy = any(r.running for r in runs.values())
    with right:
        st.write("")
        if st.button("Train", type="primary", disabled=busy, icon=":material/school:"):
            run = start_run(task, network, training, RUN_FIELD)
    if run is not None:
        runs[key] = run
    st.caption(
        f"Trains on {n_pairs:,} pairs drawn from seed {settings.seed}, at most "
        f"{epochs_in_words(epochs)} or "
        f"{limits.APP_TIME_LIMIT:.0f} s; the epoch with the best validation accuracy is kept. "
        "One run at a time per session; the model stays in your session only."
    )
    if run is None:
        st.info("Press Train to train this task with these settings.", icon=":material/school:")
        return None
    shipped = not transformer or task in TRANSFORMER_RECIPES  # else nothing to offer meanwhile
    snapshot = progress(run, _open_shipped if shipped else None)
    forget_ended(RUN_FIELD, snapshot)
    return snapshot.model


def _open_shipped() -> None:
    """Show the shipped model of the task and architecture chosen (a button callback: the run
    being trained stays in its queue)."""
    SOURCE.set(MODEL_SOURCES[0])


def _configs(
    settings: AttentionSettings, transformer: bool, epochs: int, n_pairs: int
) -> tuple[NetworkConfig | TransformerConfig, TrainConfig]:
    """The network and training of a run of the chosen model."""
    base = TRANSFORMER_TRAINING if transformer else TrainConfig()
    training = replace(
        base, epochs=epochs, n_pairs=n_pairs, seed=settings.seed, time_limit=limits.APP_TIME_LIMIT
    )
    network = TransformerConfig() if transformer else NetworkConfig(settings.score, settings.scale)
    return network, training


def _translate_view(model, task: str) -> None:
    text = task_text(task)
    translation = None if text is None else shown(lambda: model.translate(text))
    if translation is None:
        return
    st.markdown(f"**Output:** `{plain(translation.output)}`" if translation.output else "")
    heads = hasattr(model.config, "heads")
    title = "Heads' mean" if heads else "Attention"
    chart(
        translation_figure(translation, f"{title}: output × input"),
        key="translation",
        name="translation",
    )
    st.caption(
        "Each row is one decoding step: the output character it produced and where the "
        "model looked in the input. Hover or tap a cell for both characters and the weight."
        + (
            " Here: the last layer's cross-attention, averaged over its heads; every head of "
            "every layer is in the Model view."
            if heads
            else ""
        )
    )


def _model_view(model, task: str) -> None:
    st.caption(
        "Every layer and head of the three attentions in one forward pass: the encoder's "
        "self-attention over your input, the decoder's masked self-attention over what it was "
        "fed, and the encoder–decoder attention from each output character to the input."
    )
    text = task_text(task)
    trace = None if text is None else traced(model, text)
    if trace is None:
        return
    st.markdown(f"**Output:** `{plain(trace.translation.output)}`")
    model_view_panel(HeadsView.of_trace(trace, task, shipped=SOURCE.get() == "Shipped"))


def _compare_view(model, task: str) -> None:
    st.caption(
        "The shipped models of this task, one per score function, trained on the same pairs "
        "with the same seed and settings."
    )
    models = {score: shown(lambda s=score: shipped_seq2seq(task, s)) for score in SCORE_KINDS}
    if any(m is None for m in models.values()):
        return
    data_table(
        {
            "score": list(models),
            "validation characters (%)": [
                round(100 * m.stats.val_char_accuracy, 2) for m in models.values()
            ],
            "exact match (%)": [round(100 * m.stats.val_exact_match, 2) for m in models.values()],
            "alignment score": [round(m.stats.val_alignment, 3) for m in models.values()],
            "training time (s)": [round(m.stats.train_seconds, 1) for m in models.values()],
            "parameters": [m.parameter_count for m in models.values()],
        },
    )
    text = task_text(task)
    if text is None:
        return
    columns = chart_columns(len(models))
    for column, (score, other) in zip(columns, models.items(), strict=True):
        translation = shown(lambda o=other: o.translate(text))
        if translation is None:
            return
        with column:
            chart(
                translation_figure(translation, f"{score}: {translation.output}"),
                key=f"compare-{score}",
                name="compare",
            )


def _explorer_view(model, task: str) -> None:
    text = task_text(task)
    translation = None if text is None else shown(lambda: model.translate(text))
    if translation is None or not translation.output:
        return
    steps = list(range(len(translation.output)))
    step = st.selectbox(
        "Decoder step",
        steps,
        format_func=lambda i: f"step {i}: output {char_labels(translation.target_tokens)[i]}",
        **STEP.widget(),
    )
    step = min(int(step or 0), steps[-1])
    inputs = shown(lambda: model.attention_inputs(text, step))
    if inputs is None:
        return
    d = inputs.query.shape[1]
    learned = (
        f"with its trained weights ({', '.join(inputs.params)})"
        if inputs.params
        else "(no weights of its own)"
    )
    st.caption(
        f"At step {step} the query is the decoder's state (1 × {d}), the keys and values are "
        f"the encoder's outputs for the {len(inputs.source_tokens)} input characters "
        f"({len(inputs.source_tokens)} × {d}), and the score is {inputs.score} {learned}."
    )
    st.button(
        "Open this step in the Matrices explorer",
        on_click=_open_in_explorer,
        args=(inputs, task),
        type="primary",
        icon=":material/open_in_new:",
    )


def _open_in_explorer(inputs, task: str) -> None:
    """Open this step in the Matrices page (a button callback: runs before the next draw)."""
    open_in_explorer(step_opened(inputs, task, shipped=SOURCE.get() == "Shipped"))


MODE = Mode(
    name="learn",
    label="Learn",
    icon=":material/school:",
    intro="Attention that was learned: a GRU encoder–decoder with attention or a small "
    "Transformer, trained on a small task. Open a shipped model or train one and watch its "
    "attention align; look at every head of the Transformer in the model view.",
    draw=draw,
    url_texts=TASK_TEXTS,
    old_names=("Learn",),
    prepare=prepare,
    warm_up=warm_up_shipped,  # every shipped model, its functions traced: compare, the model
    # view and the other tasks open without waiting for them
)
