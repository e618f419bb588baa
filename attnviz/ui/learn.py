"""Learn: attention that was learned. Pick a task, open a shipped model or train one and watch
its attention align, translate your own text, compare the score functions, and open one decoder
step in the Matrices explorer. Wiring and drawing only: the models are `attnviz.learn`'s.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.core.settings import AttentionSettings
from attnviz.drawing import figures
from attnviz.drawing.curves import training_curves
from attnviz.learn import TASKS, load_pretrained, make_pairs
from attnviz.learn.runs import RunSnapshot, TrainingRun
from attnviz.learn.tasks import get_task
from attnviz.ui.controls import MODES
from attnviz.ui.inputs import _parse
from attnviz.ui.state import bound, kept, plain

MODEL_SOURCES = ("Shipped", "Train")  # a checkpoint from assets/learn, or one trained here
LEARN_VIEWS = ("Translate", "Compare scores", "One step in the explorer")
EPOCHS = (1, 30, 6)  # (least, most, default) epochs of a run in the app
PAIRS = (500, 1_000, 2_000, 5_000, 10_000, 20_000)  # training pairs a run may draw
DEFAULT_PAIRS = 10_000
TIME_LIMIT = 90.0  # seconds of training at most per run in the app
SPACE = "␣"  # how a space is labelled on the heatmaps' axes


def learn_panel(settings: AttentionSettings) -> None:
    """The whole Learn mode."""
    task = _task_picker()
    source = st.segmented_control(
        "Model", MODEL_SOURCES, default="Shipped", required=True, **bound("learn_model")
    )
    panel = _training_panel if source == "Train" else _shipped_panel
    model = panel(task, settings)
    if model is None:
        return
    tabs = st.tabs(LEARN_VIEWS, key="learn_view", bind="query-params", on_change="rerun")
    draws = (_translate_view, _compare_view, _explorer_view)
    for tab, draw in zip(tabs, draws, strict=True):
        if tab.open:
            with tab:
                draw(model, task)


def _task_picker() -> str:
    task = st.segmented_control("Task", TASKS, default=TASKS[0], required=True, **bound("task"))
    spec = get_task(task)
    st.caption(f"**{spec.title}.** {spec.description}")
    pairs = make_pairs(task, 5, seed=0)
    st.dataframe(
        {"input": [s for s, _ in pairs], "output": [t for _, t in pairs]},
        hide_index=True,
        width="content",
    )
    return task


@st.cache_resource(max_entries=12, show_spinner="Loading the shipped model…")
def _pretrained(task: str, score: str):
    """A shipped checkpoint, loaded once per server and shared read-only by every session."""
    return load_pretrained(task, score)


def _shipped_panel(task: str, settings: AttentionSettings):
    if settings.scale:
        st.info(
            "The shipped models score without √D scaling. Turn scaling off in the sidebar to "
            "open them, or train a scaled model in this session.",
            icon=":material/info:",
        )
        return None
    model = _parse(lambda: _pretrained(task, settings.score))
    if model is None:
        return None
    _model_summary(model)
    history = getattr(model.stats, "history", ())
    if history:
        st.plotly_chart(training_curves(history, title="How it was trained"), key="curves")
    return model


def _model_summary(model) -> None:
    s = model.stats
    st.caption(
        f"{s.score} score{' · scaled' if s.scale else ''} · {s.parameters:,} parameters · "
        f"trained {s.epochs_run} epochs in {s.train_seconds:.0f} s on {s.n_pairs:,} pairs "
        f"(seed {s.seed}) · validation: {100 * s.val_char_accuracy:.2f} % characters, "
        f"{100 * s.val_exact_match:.2f} % exact, alignment score {s.val_alignment:.3f}"
    )


def _training_panel(task: str, settings: AttentionSettings):
    """Train button, live progress and the model this session trained last for these settings."""
    key = (task, settings.score, settings.scale, settings.seed)  # one model per choice
    runs = st.session_state.setdefault("learn_runs", {})
    left, middle, right = st.columns([2, 2, 1])
    epochs = int(left.slider("Epochs (at most)", *EPOCHS, **bound("learn_epochs")))
    n_pairs = int(
        middle.select_slider(
            "Training pairs",
            PAIRS,
            value=DEFAULT_PAIRS,
            format_func="{:,}".format,
            **bound("learn_pairs"),
        )
    )
    run: TrainingRun | None = runs.get(key)
    busy = any(r.running for r in runs.values())
    with right:
        st.write("")
        if st.button("Train", type="primary", disabled=busy, icon=":material/school:"):
            run = TrainingRun.start(
                task=task,
                score=settings.score,
                scale=settings.scale,
                epochs=epochs,
                n_pairs=n_pairs,
                seed=settings.seed,
                time_limit=TIME_LIMIT,
            )
            runs[key] = run
    st.caption(
        f"Trains on {n_pairs:,} pairs drawn from seed {settings.seed}, at most {epochs} epochs or "
        f"{TIME_LIMIT:.0f} s; the epoch with the best validation accuracy is kept. One run at "
        "a time per session; the model stays in your session only."
    )
    if run is None:
        st.info("Press Train to train this task with these settings.", icon=":material/school:")
        return None
    snapshot = _progress(run)
    return snapshot.model


@st.fragment(run_every=1.0)
def _live_progress(run: TrainingRun) -> None:
    snapshot = run.snapshot()
    _draw_progress(run, snapshot)
    if not run.running:
        st.rerun()  # the whole page: the trained model's views appear


def _progress(run: TrainingRun) -> RunSnapshot:
    """While the run trains, a fragment redraws its progress every second; then, once."""
    snapshot = run.snapshot()
    if run.running:
        _live_progress(run)
    else:
        _draw_progress(run, snapshot)
    return snapshot


def _draw_progress(run: TrainingRun, snapshot: RunSnapshot) -> None:
    done = len(snapshot.reports) - 1 if snapshot.reports else 0
    words = {
        "waiting": "Waiting for another session's training to finish…",
        "training": f"Training: epoch {done} of {snapshot.epochs} done ({snapshot.seconds:.0f} s)",
        "done": f"Trained {done} epochs in {snapshot.seconds:.0f} s.",
        "stopped": f"Stopped after {done} epochs; the best epoch is kept.",
        "failed": f"Training failed: {snapshot.error}",
    }[snapshot.state]
    if snapshot.state == "failed":
        st.error(plain(words), icon=":material/error:")
        return
    st.progress(min(1.0, done / max(1, snapshot.epochs)), text=words)
    if run.running:
        st.button("Stop", on_click=run.stop, icon=":material/stop:", key="learn_stop")
    if not snapshot.reports:
        return
    rows = [_history_row(r) for r in snapshot.reports]
    st.plotly_chart(training_curves(rows, title="Loss and accuracy per epoch"), key="live-curves")
    _probe_history(snapshot)


def _history_row(report) -> tuple[float, ...]:
    nan = math.nan
    loss = nan if report.loss is None else report.loss
    acc = nan if report.char_accuracy is None else report.char_accuracy
    return (
        report.epoch,
        loss,
        acc,
        report.val_char_accuracy,
        report.val_exact_match,
        report.seconds,
    )


def _probe_history(snapshot: RunSnapshot) -> None:
    """The probe's attention after the chosen epoch: alignment forming out of uniform noise."""
    reports = {r.epoch: r for r in snapshot.reports}
    epochs = list(reports)
    chosen = epochs[-1]
    if len(epochs) > 1:
        chosen = st.select_slider(
            "Probe attention after epoch (0 = untrained)", epochs, value=epochs[-1]
        )
    probe = reports[chosen].probe
    st.plotly_chart(
        _attention_figure(probe, f"Epoch {chosen}: {probe.source} → {probe.output}"),
        key="probe",
    )


def _labels(tokens) -> list[str]:
    return [SPACE if t == " " else t for t in tokens]


def _attention_figure(translation, title: str):
    weights = np.asarray(translation.weights)
    if weights.size == 0:  # nothing decoded: one empty row keeps the figure drawable
        weights = np.zeros((1, len(translation.source_tokens)))
    return figures.heatmap(
        weights,
        kind="weights",
        title=title,
        row_labels=_labels(translation.target_tokens) or ["(none)"],
        col_labels=_labels(translation.source_tokens),
        row_title="output",
        col_title="input",
        annotate=False,
    )


def _text_input(task: str) -> str:
    spec = get_task(task)
    key = f"learn_text_{task}"
    st.session_state.setdefault(key, spec.example[0])
    return st.text_input(
        f"Your input ({spec.max_source_len} characters at most)",
        **kept(key),
    )


def _translate_view(model, task: str) -> None:
    text = _text_input(task)
    translation = _parse(lambda: model.translate(text))
    if translation is None:
        return
    st.markdown(f"**Output:** `{plain(translation.output)}`" if translation.output else "")
    st.plotly_chart(
        _attention_figure(translation, "Attention: output × input"),
        key="translation",
    )
    st.caption(
        "Each row is one decoding step: the output character it produced and where the "
        "model looked in the input. Hover a cell for both characters and the weight."
    )


def _compare_view(model, task: str) -> None:
    st.caption(
        "The shipped models of this task, one per score function, trained on the same pairs "
        "with the same seed and settings."
    )
    models = {score: _parse(lambda s=score: _pretrained(task, s)) for score in SCORE_KINDS}
    if any(m is None for m in models.values()):
        return
    st.dataframe(
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
        hide_index=True,
    )
    text = _text_input(task)
    columns = st.columns(len(models))
    for column, (score, other) in zip(columns, models.items(), strict=True):
        translation = _parse(lambda o=other: o.translate(text))
        if translation is None:
            return
        with column:
            st.plotly_chart(
                _attention_figure(translation, f"{score}: {translation.output}"),
                key=f"compare-{score}",
            )


def _explorer_view(model, task: str) -> None:
    text = _text_input(task)
    translation = _parse(lambda: model.translate(text))
    if translation is None or not translation.output:
        return
    steps = list(range(len(translation.output)))
    step = st.selectbox(
        "Decoder step",
        steps,
        format_func=lambda i: f"step {i}: output {_labels(translation.target_tokens)[i]}",
        key="learn_step",
    )
    step = min(int(step or 0), steps[-1])
    inputs = _parse(lambda: model.attention_inputs(text, step))
    if inputs is None:
        return
    d = inputs.query.shape[1]
    st.caption(
        f"At step {step} the query is the decoder's state (1 × {d}), the keys and values are "
        f"the encoder's outputs for the {len(inputs.source_tokens)} input characters "
        f"({len(inputs.source_tokens)} × {d}), and the score is {inputs.score} with its trained "
        f"weights ({', '.join(inputs.params) or 'none'})."
    )
    st.button(
        "Open this step in the Matrices explorer",
        on_click=_open_in_explorer,
        args=(inputs, task),
        type="primary",
        icon=":material/open_in_new:",
    )


def _matrix_text(array: np.ndarray) -> str:
    """Rows of float32 numbers with 9 significant digits: parsed back, exactly the same."""
    return "\n".join(" ".join(f"{x:.9g}" for x in row) for row in np.asarray(array, np.float32))


def _open_in_explorer(inputs, task: str) -> None:
    """Fill the Matrices mode with this step (a button callback: runs before the next draw)."""
    state = st.session_state
    state["source"] = "type"
    state["q_text"] = _matrix_text(inputs.query)
    state["k_text"] = _matrix_text(inputs.keys)
    state["v_text"] = _matrix_text(inputs.values)
    state["learned_params"] = {name: np.asarray(w) for name, w in inputs.params.items()}
    state["learned_labels"] = (  # the step's output character; the input characters
        (_labels(inputs.target_tokens)[inputs.step],),
        tuple(_labels(inputs.source_tokens)),
    )
    state["learned_from"] = (
        f"{get_task(task).title}, {inputs.score} score, step {inputs.step} "
        f"(output {inputs.target_tokens[inputs.step]!r})"
    )
    for key in [k for k in state if str(k).startswith("pad_keys_")]:
        state[key] = []
    state.update(score=inputs.score, scale=inputs.scale, causal=False, window_on=False, seq=0)
    state["mode"] = MODES["matrices"]
    state["view"] = "Step by step"
