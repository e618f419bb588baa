"""Matrices: Q, K and V typed, uploaded or drawn at random, presets, padding keys, and the
explorer's results. Other pages open a trained attention here with the explorer's
`open_in_explorer` (`attnviz.ui.explorer.state`, which holds what these inputs say).

The panel shows every error next to the input that caused it and draws no results then, so the
rest of the page keeps working; what the user typed stays in its box.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from attnviz.core import limits
from attnviz.inputs.parsing import load_matrix, parse_matrix_text
from attnviz.inputs.presets import Preset, RandomSpec, random_qkv, shipped_presets
from attnviz.inputs.problem import LearnedWeights, Problem
from attnviz.ui.controls import sidebar
from attnviz.ui.controls.input_widgets import first_sequence, sequence_selector
from attnviz.ui.explorer import compare_view, results
from attnviz.ui.explorer.state import (
    K_TEXT,
    LEARNED,
    MATRIX_NAMES,
    OPENED_TEXTS,
    PAD_KEYS,
    Q_TEXT,
    SOURCE,
    SOURCES,
    V_TEXT,
    forget_learned,
    origin_in_url,
    reopen_from_link,
    set_texts,
)
from attnviz.ui.frame.messages import error, plain, shown
from attnviz.ui.frame.mode import Mode
from attnviz.ui.frame.navigation import write_fields
from attnviz.ui.frame.state import slot, slot_family

DEFAULT_PRESET = "01_numpy_lab"
CUSTOM = "custom"  # what the preset box says when the inputs are not a preset's
PRESET = slot("preset", DEFAULT_PRESET)  # what the preset box shows: a preset's name, or CUSTOM
PRESET_BOXES = slot_family("preset_box", None)  # preset_box_<n>: the box's widget, drawn anew
BOX = slot("preset_drawn", 0, kept=True)  # (n + 1) whenever the page changes what it shows: a
# box the browser still shows the old choice of can never send it back as a new one
LAST_PRESET = slot("last_preset", DEFAULT_PRESET)  # the preset applied last (Reset goes back)
UPLOAD = slot_family("upload", None, kept=True)  # upload_<Q|K|V>: the file uploader of that matrix
UPLOADED = slot_family("uploaded", None, kept=True)  # uploaded_<Q|K|V>: (file name, array) kept
UPLOAD_TYPES = ["csv", "tsv", "txt", "json", "npy"]
SHAPE = (limits.APP_MAX_TOKENS, limits.APP_MAX_FEATURES)  # most rows and columns of Q, K, V
RANDOM_FIELDS = (  # (slot, label, least, most) of a seeded random draw; defaults: RandomSpec's
    (slot("r_batch", 1, url=True), "Batch B", 1, limits.MAX_BATCH),
    (slot("r_t", 6, url=True), "Queries T", 1, limits.APP_MAX_TOKENS),
    (slot("r_s", 6, url=True), "Keys S", 1, limits.APP_MAX_TOKENS),
    (slot("r_dk", 8, url=True), "Dk", 1, limits.APP_MAX_FEATURES),
    (slot("r_dv", 4, url=True), "Dv", 1, limits.APP_MAX_FEATURES),
    (slot("r_seed", 0, url=True), "Seed", 0, limits.MAX_SEED),
)


@st.cache_resource
def presets() -> dict[str, Preset]:
    """The shipped presets, read once per server."""
    return shipped_presets()


def apply_preset(preset: Preset) -> None:
    """Fill the inputs and switch the controls a preset asks for (a widget callback)."""
    if preset.random:
        SOURCE.set("random")
        spec = preset.random
        values = (spec.batch, spec.queries, spec.keys, spec.d_k, spec.d_v, spec.seed)
        for (field, *_), value in zip(RANDOM_FIELDS, values, strict=True):
            field.set(value)
    else:
        SOURCE.set("type")
        set_texts(preset.query, preset.key, preset.value)
    for keys in PAD_KEYS.members():  # the last preset's
        keys.set([])
    for b, keys in enumerate(preset.padding):
        PAD_KEYS.of(b).set(list(keys))
    sidebar.apply_settings(preset.settings)
    first_sequence(preset.sequence)
    forget_learned()
    LAST_PRESET.set(preset.name)
    PRESET.set(preset.name)
    BOX.set(BOX.get() + 1)  # the box shows it afresh


def _unchanged(preset: Preset) -> bool:
    """Whether the inputs, padding keys and controls are still exactly what `preset` set."""
    if LEARNED.get() is not None:
        return False
    return _numbers_are(preset) and sidebar.settings_are(preset.settings)


def _numbers_are(preset: Preset) -> bool:
    """Whether Q, K, V and the padding keys are `preset`'s (whatever the controls say)."""
    if preset.random:
        spec = preset.random
        drawn = (spec.batch, spec.queries, spec.keys, spec.d_k, spec.d_v, spec.seed)
        if SOURCE.get() != "random" or tuple(f.get() for f, *_ in RANDOM_FIELDS) != drawn:
            return False
    elif SOURCE.get() != "type" or tuple(t.get() for *_, t in MATRIX_NAMES) != (
        preset.query, preset.key, preset.value
    ):  # fmt: skip
        return False
    marked = {keys.key: list(keys.get()) for keys in PAD_KEYS.members() if keys.get()}
    wanted = {PAD_KEYS.of(b).key: list(keys) for b, keys in enumerate(preset.padding) if keys}
    return marked == wanted


def _reset() -> None:
    """Back to the preset applied last, as it came (a button callback)."""
    apply_preset(presets()[LAST_PRESET.get()])


def _on_preset(box: str) -> None:
    """A preset was picked in the box `box` (its widget key): apply it."""
    chosen = presets().get(PRESET_BOXES.of(box).get())
    if chosen:
        apply_preset(chosen)


def start_session() -> None:
    """A new visitor without a shared link starts on the NumPy lab preset, settings and all.

    Runs before the sidebar is drawn, so the preset may still switch its controls. A session
    whose inputs something set already (typed, a preset a lesson applied, "open in the
    explorer") keeps them: a random preset sets no text."""
    if Q_TEXT.is_set() or LAST_PRESET.is_set():
        return
    preset = presets()[DEFAULT_PRESET]
    if st.query_params:  # a shared link: its own settings, the lab's matrices unless it has some
        typed = (preset.query, preset.key, preset.value)
        for (_, _, text), default in zip(MATRIX_NAMES, typed, strict=True):
            text.setdefault(default)
        return
    apply_preset(preset)
    # A bound control set before its first draw does not reach the URL by itself: write the
    # preset's settings here, so a reload or a copied link shows them, not the defaults.
    write_fields(sidebar.changed_settings(dict(preset.settings)))


def prepare(preset: str, view: str | None = None, compare: str | None = None) -> None:
    """Open this page on `preset` (a shipped preset's name, settings and all: the preset box then
    names it, and its caption describes what is shown), on the results tab `view`, comparing
    `compare` (a key of `inputs.attend.COMPARISONS`)."""
    apply_preset(presets()[preset])
    results.show_view(view or results.VIEWS[0])
    if compare is not None:
        compare_view.show_comparison(compare)


def _preset_box() -> None:
    """The preset box, saying what the inputs are (a preset's, or "Custom"), its caption and
    "Reset to example"."""
    shipped = presets()
    last = shipped.get(LAST_PRESET.get(), shipped[DEFAULT_PRESET])
    # the preset the inputs equal: the one applied last, or any other (a link never applies one)
    equal = last if _unchanged(last) else next((p for p in shipped.values() if _unchanged(p)), None)
    if equal is not None and equal is not last:
        LAST_PRESET.set(equal.name)  # "Reset to example" goes back to what the box names
        last = equal
    shown = CUSTOM if equal is None else equal.name  # the box says what the inputs are
    if shown != PRESET.get():
        PRESET.set(shown)
        BOX.set(BOX.get() + 1)  # a new box: the old one's choice is stale
    for old in PRESET_BOXES.members():
        if old.key != PRESET_BOXES.of(BOX.get()).key:
            old.clear()
    learned = LEARNED.get()
    numbers_of = None  # the preset whose numbers these are, under other settings
    if equal is None and learned is None:
        numbers_of = next((p for p in (last, *shipped.values()) if _numbers_are(p)), None)
    if numbers_of is not None and numbers_of is not last:
        LAST_PRESET.set(numbers_of.name)  # "Reset to example" brings its settings back
        last = numbers_of
    custom, said = _described(learned, numbers_of)
    choice, reset = st.columns([5, 1], vertical_alignment="bottom")
    options = [CUSTOM, *shipped]
    choice.selectbox(
        "Preset",
        options,
        index=options.index(shown),
        format_func=lambda n: custom if n == CUSTOM else shipped[n].title,
        on_change=_on_preset,
        args=(BOX.get(),),
        key=PRESET_BOXES.of(BOX.get()).key,
    )
    reset.button(
        "Reset to example",
        on_click=_reset,
        help=f"Back to “{last.title}” as it came.",
        disabled=PRESET.get() != CUSTOM,
        key="reset_preset",
    )
    chosen = shipped.get(PRESET.get())
    st.caption(chosen.teaches if chosen else plain(said))


def _described(learned: LearnedWeights | None, numbers_of: Preset | None) -> tuple[str, str]:
    """What the preset box calls inputs that are no preset as it came, and its caption: a
    trained attention's (as opened, or edited since), a preset's numbers under other settings,
    or the user's own."""
    if learned is not None:
        texts = tuple(text.get() for *_, text in MATRIX_NAMES)
        if SOURCE.get() == "type" and OPENED_TEXTS.get() == texts:
            return f"From {learned.source}", f"Q, K and V of {learned.source}. {learned.note}"
        return (
            f"Custom: edited from {learned.source}",
            f"These numbers began as Q, K and V of {learned.source}; you have changed them "
            "since, so they are yours now (pick a preset to start from one).",
        )
    if numbers_of is not None:
        changed = ", ".join(sidebar.settings_differing(numbers_of.settings))
        return (
            f"Custom: other settings on “{numbers_of.title}”",  # a phone cuts the end
            f"The numbers are those of “{numbers_of.title}”; the settings differ from it "
            f"({changed}). Reset to example brings its settings back.",
        )
    return (
        "Custom: your own inputs",
        "These inputs are not a preset's: the numbers below are yours (pick a preset to start "
        "from one).",
    )


def matrix_panel() -> Problem | None:
    """Q, K, V from typed text, uploads or a seeded random draw, plus padding keys."""
    top = st.container()  # the preset box: drawn once the inputs below are read (on a link's
    # first run their widgets hold the link's values only once drawn)
    source = st.segmented_control(
        "Q, K, V from",
        list(SOURCES),
        format_func=SOURCES.get,
        required=True,
        **SOURCE.widget("default"),  # a preset may have set it
    )
    readers = {"random": _random_matrices, "upload": _uploaded_matrices}
    arrays = readers.get(source, _typed_matrices)()
    with top:
        _preset_box()
    if arrays is None:
        return None
    problem = _matrix_problem(*arrays)
    learned = LEARNED.get()
    if problem is None or learned is None:
        return problem
    if learned.params:  # a learned score's trained weights (a dot-product head has none)
        left, right = st.columns([4, 1])
        left.caption(plain(f"The score's weights are the trained ones of {learned.source}."))
        right.button("Use seeded weights", on_click=forget_learned, key="forget_learned")
    rows, cols = learned.labels
    if (len(rows), len(cols)) == (problem.query.shape[-2], problem.key.shape[-2]):
        problem = replace(problem, query_labels=(rows,), key_labels=(cols,))  # Q, K unchanged
    return replace(problem, params=learned.params)


def _typed_matrices():
    columns = st.columns(3)
    arrays = []
    for column, (name, short, text) in zip(columns, MATRIX_NAMES, strict=True):
        with column:
            typed = st.text_area(f"{short} ({name}): one row per line", height=150, **text.widget())
            arrays.append(
                shown(lambda t=typed, s=short: parse_matrix_text(t, name=s, max_shape=SHAPE))
            )
    return None if any(a is None for a in arrays) else arrays


def _uploaded_matrices():
    megabytes = limits.MAX_UPLOAD_BYTES // 2**20
    st.caption(
        f"CSV (no header), JSON nested lists or .npy (no pickles); up to {megabytes} MB each."
    )
    columns = st.columns(3)
    arrays = []
    for column, (name, short, _) in zip(columns, MATRIX_NAMES, strict=True):
        with column:
            upload = st.file_uploader(
                f"{short} ({name})", type=UPLOAD_TYPES, key=UPLOAD.of(short).key
            )
            arrays.append(_uploaded(upload, short))
    return None if any(a is None for a in arrays) else arrays


def _uploaded(upload, short: str) -> np.ndarray | None:
    """Parse an upload; remember it so it survives a mode switch."""
    kept = UPLOADED.of(short)
    if upload is not None:
        array = shown(
            lambda: load_matrix(upload.getvalue(), upload.name, name=short, max_shape=SHAPE)
        )
        if array is not None:
            kept.set((upload.name, array))
        return array
    if kept.get() is not None:
        name, array = kept.get()
        st.caption(f"Using {name} {array.shape}, uploaded earlier.")
        return array
    st.info(f"Upload {short} to continue.")
    return None


def _random_matrices():
    columns = st.columns(len(RANDOM_FIELDS))
    values = []
    for column, (field, label, least, most) in zip(columns, RANDOM_FIELDS, strict=True):
        values.append(
            int(
                column.number_input(
                    label,
                    min_value=least,
                    max_value=most,
                    value=field.default,
                    step=1,
                    **field.widget(),
                )
            )
        )
    spec = shown(lambda: RandomSpec(*values, max_cells=limits.APP_SCORE_CELLS))
    if spec is None:
        return None
    st.caption("Uniform in [0, 1), drawn with numpy from the seed, as in the Keras tutorials.")
    return list(random_qkv(spec))


def _matrix_problem(query, key, value) -> Problem | None:
    ranks = {query.ndim, key.ndim, value.ndim}
    if len(ranks) > 1:
        error(
            "Q, K and V must all be batches (3-D JSON / .npy) or all plain matrices. "
            f"Received shapes Q {query.shape}, K {key.shape}, V {value.shape}."
        )
        return None
    batched = query.ndim == 3
    same_batch = not batched or query.shape[0] == key.shape[0] == value.shape[0]
    if not same_batch or key.shape[-2] != value.shape[-2]:
        error(
            f"Shapes do not fit together: Q {query.shape}, K {key.shape}, V {value.shape}. "
            "K and V need the same number of rows (one value per key), and a batch needs "
            "the same batch size B in all three."
        )
        return None
    batch = query.shape[0] if batched else 1
    t, s = query.shape[-2], key.shape[-2]
    item = sequence_selector(batch, "sequence")
    padding = _padding_keys(batch, s, item)  # (B, S) or None
    return Problem(
        query,
        key,
        value,
        ((*map(str, range(t)),),) * batch,
        ((*map(str, range(s)),),) * batch,
        padding if padding is None or batched else padding[0],
        item,
    )


def _padding_keys(batch: int, s: int, b: int) -> np.ndarray | None:
    """Which keys are padding, chosen per sequence; the picker of sequence `b` is shown."""
    shown_keys = PAD_KEYS.of(b)
    shown_keys.set([k for k in shown_keys.get() if isinstance(k, int) and 0 <= k < s])
    label = "Padding keys" + (f" of sequence {b}" if batch > 1 else "")
    st.multiselect(
        label,
        list(range(s)),
        help="Keys marked here are padding: with the padding mask on, no query may attend them.",
        **shown_keys.widget(),
    )
    padding = np.ones((batch, s), dtype=bool)
    for item in range(batch):
        marked = [k for k in PAD_KEYS.of(item).get() if 0 <= k < s]
        padding[item, marked] = False
    return None if padding.all() else padding


def draw() -> None:
    """The whole Matrices page."""
    reopen_from_link()
    start_session()
    controls = sidebar.explorer_controls()
    problem = matrix_panel()
    origin_in_url()
    if problem is not None:
        results.results_panel(problem, controls)


MODE = Mode(
    name="matrices",
    label="Matrices",
    icon=":material/grid_on:",
    intro="Type Q, K and V (one row per line), upload them, or draw them at random.",
    draw=draw,
    url_texts=(Q_TEXT, K_TEXT, V_TEXT),
    prepare=prepare,
)
