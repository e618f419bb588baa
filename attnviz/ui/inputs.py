"""Input panels: matrices, sentences, or a source/target pair. Each returns a `Problem` or None.

A panel shows every error next to the input that caused it and returns None, so the rest of the
page keeps working; what the user typed stays in its box.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import streamlit as st

from attnviz.core import limits
from attnviz.inputs.parsing import load_matrix, parse_matrix_text
from attnviz.inputs.presets import Preset, RandomSpec, random_qkv
from attnviz.inputs.text import encode_sentences
from attnviz.ui.state import bound, initial, kept, plain

MATRIX_NAMES = (("queries", "Q", "q_text"), ("keys", "K", "k_text"), ("values", "V", "v_text"))
SOURCES = {"type": "Type or paste", "upload": "Upload files", "random": "Random"}
DEFAULT_PRESET = "01_numpy_lab"
RANDOM_FIELDS = (  # (session key, label, default, max)
    ("r_batch", "Batch B", 1, limits.MAX_BATCH),
    ("r_t", "Queries T", 6, limits.MAX_TOKENS),
    ("r_s", "Keys S", 6, limits.MAX_TOKENS),
    ("r_dk", "Dk", 8, limits.MAX_FEATURES),
    ("r_dv", "Dv", 4, limits.MAX_FEATURES),
    ("r_seed", "Seed", 0, limits.MAX_SEED),
)
CONTROL_DEFAULTS = {  # the sidebar controls' own defaults, which a preset starts from
    "score": "dot",
    "scale": True,
    "causal": False,
    "padding": True,
    "window_on": False,
    "mask_value": "-inf",
}


@dataclass(frozen=True)
class Problem:
    """The inputs of one attention computation, shaped as they were given: plain matrices for
    one sequence, a leading batch axis B for a batch (typed 3-D, or sentences). The page never
    adds or drops that axis: `compute_attention` does, once, and its messages speak of the
    shapes the user gave."""

    query: np.ndarray  # (T, Dq) or (B, T, Dq)
    key: np.ndarray  # (S, Dk) or (B, S, Dk)
    value: np.ndarray  # (S, Dv) or (B, S, Dv)
    query_labels: tuple[tuple[str, ...], ...]  # (B, T) token or index of each query (B = 1
    key_labels: tuple[tuple[str, ...], ...]  # (B, S) of each key             for a matrix)
    padding: np.ndarray | None  # (S,) or (B, S) bool, True = real key; None = nothing marked
    item: int = 0  # the batch item the views draw: what the sequence selector returned
    params: dict[str, np.ndarray] | None = None  # learned score weights (from Learn), or None

    @property
    def batched(self) -> bool:
        """True if the inputs carry a batch axis."""
        return self.query.ndim == 3

    @property
    def batch(self) -> int:
        """B, the number of sequences (1 for plain matrices)."""
        return self.query.shape[0] if self.batched else 1

    def sequence(self, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """`(query (T, Dq), key (S, Dk), value (S, Dv), padding (S,) or None)` of item `b`."""
        arrays = (self.query, self.key, self.value, self.padding)
        if not self.batched:
            return arrays
        return tuple(None if a is None else a[b] for a in arrays)


def apply_preset(preset: Preset) -> None:
    """Fill the inputs and switch the controls a preset asks for (a widget callback)."""
    state = st.session_state
    if preset.random:
        state["source"] = "random"
        spec = preset.random
        values = (spec.batch, spec.queries, spec.keys, spec.d_k, spec.d_v, spec.seed)
        for (key, *_), value in zip(RANDOM_FIELDS, values, strict=True):
            state[key] = value
    else:
        state["source"] = "type"
        state["q_text"], state["k_text"], state["v_text"] = preset.query, preset.key, preset.value
    for key in [k for k in state if str(k).startswith("pad_keys_")]:  # the last preset's
        state[key] = []
    for b, keys in enumerate(preset.padding):
        state[f"pad_keys_{b}"] = list(keys)
    for key, value in {**CONTROL_DEFAULTS, **preset.settings}.items():
        state[key] = value
    state["seq"] = 0
    forget_learned_weights()


def forget_learned_weights() -> None:
    """Back to weights drawn from the seed (a preset, or the button beside the caption)."""
    for key in ("learned_params", "learned_from", "learned_labels", "learned_note"):
        st.session_state.pop(key, None)


def _on_preset(presets: dict[str, Preset]) -> None:
    name = st.session_state.get("preset")
    if name in presets:
        apply_preset(presets[name])


def start_session(presets: dict[str, Preset]) -> None:
    """A new visitor without a shared link starts on the NumPy lab preset, settings and all.

    Runs before the sidebar is drawn, so the preset may still switch its controls."""
    state = st.session_state
    if "q_text" not in state and not st.query_params:
        preset = presets[DEFAULT_PRESET]
        apply_preset(preset)
        state["preset"] = DEFAULT_PRESET
        # Streamlit puts a bound control in the URL only when it changes after the first run, so
        # write the preset's settings here (nothing is bound yet): a reload or a copied link then
        # shows the same settings, not the controls' defaults.
        st.query_params.update(
            {
                key: str(value).lower() if isinstance(value, bool) else str(value)
                for key, value in preset.settings.items()
                if CONTROL_DEFAULTS.get(key) != value
            }
        )


def matrix_panel(presets: dict[str, Preset]) -> Problem | None:
    """Q, K, V from typed text, uploads or a seeded random draw, plus padding keys."""
    state = st.session_state
    if "q_text" not in state:  # first visit: start from the NumPy lab's matrices
        default = presets[DEFAULT_PRESET]
        state["q_text"], state["k_text"], state["v_text"] = (
            default.query,
            default.key,
            default.value,
        )
        state["preset"] = DEFAULT_PRESET
    names = list(presets)
    st.selectbox(
        "Preset",
        names,
        format_func=lambda n: presets[n].title,
        on_change=_on_preset,
        args=(presets,),
        **kept("preset"),
    )
    chosen = presets.get(state.get("preset"))
    if chosen:
        st.caption(chosen.teaches)
    source = st.segmented_control(
        "Q, K, V from",
        list(SOURCES),
        format_func=SOURCES.get,
        **initial("source", "type", arg="default"),  # a preset may have set it
        required=True,
        **bound("source"),
    )
    if source == "random":
        arrays = _random_matrices()
    elif source == "upload":
        arrays = _uploaded_matrices()
    else:
        arrays = _typed_matrices()
    if arrays is None:
        return None
    problem = _matrix_problem(*arrays)
    learned = state.get("learned_params")
    if problem is None or learned is None:
        return problem
    left, right = st.columns([4, 1])
    left.caption(
        f"Trained weights from Learn: {plain(state.get('learned_from', ''))}. "
        f"{state.get('learned_note', '')}"
    )
    right.button("Use seeded weights", on_click=forget_learned_weights, key="forget_learned")
    rows, cols = state.get("learned_labels", ((), ()))
    if (len(rows), len(cols)) == (problem.query.shape[-2], problem.key.shape[-2]):
        problem = replace(problem, query_labels=(rows,), key_labels=(cols,))  # Q, K unchanged
    return replace(problem, params=learned)


def _typed_matrices():
    columns = st.columns(3)
    arrays = []
    for column, (name, short, key) in zip(columns, MATRIX_NAMES, strict=True):
        with column:
            text = st.text_area(f"{short} ({name}): one row per line", height=150, **kept(key))
            arrays.append(_parse(lambda t=text, s=short: parse_matrix_text(t, name=s)))
    return None if any(a is None for a in arrays) else arrays


def _uploaded_matrices():
    st.caption("CSV (no header), JSON nested lists or .npy (no pickles); up to 20 MB each.")
    columns = st.columns(3)
    arrays = []
    for column, (name, short, _) in zip(columns, MATRIX_NAMES, strict=True):
        with column:
            upload = st.file_uploader(
                f"{short} ({name})",
                type=["csv", "tsv", "txt", "json", "npy"],
                key=f"upload_{short}",
            )
            arrays.append(_uploaded(upload, short))
    return None if any(a is None for a in arrays) else arrays


def _uploaded(upload, short: str) -> np.ndarray | None:
    """Parse an upload; remember it so it survives a mode switch."""
    kept_key = f"uploaded_{short}"
    if upload is not None:
        array = _parse(lambda: load_matrix(upload.getvalue(), upload.name, name=short))
        if array is not None:
            st.session_state[kept_key] = (upload.name, array)
        return array
    if kept_key in st.session_state:
        name, array = st.session_state[kept_key]
        st.caption(f"Using {name} {array.shape}, uploaded earlier.")
        return array
    st.info(f"Upload {short} to continue.")
    return None


def _random_matrices():
    columns = st.columns(len(RANDOM_FIELDS))
    values = []
    for column, (key, label, default, high) in zip(columns, RANDOM_FIELDS, strict=True):
        with column:
            values.append(
                int(
                    st.number_input(
                        label,
                        min_value=1 if key != "r_seed" else 0,
                        max_value=high,
                        value=default,
                        step=1,
                        **bound(key),
                    )
                )
            )
    spec = _parse(lambda: RandomSpec(*values))
    if spec is None:
        return None
    st.caption("Uniform in [0, 1), drawn with numpy from the seed, as in the Keras tutorials.")
    return list(random_qkv(spec))


def _parse(read, where: str = ""):
    """Run a parser; show its ValueError right here (after `where`) and return None."""
    try:
        return read()
    except ValueError as err:
        st.error(plain(f"{where}{err}"), icon=":material/error:")
        return None


def _matrix_problem(query, key, value) -> Problem | None:
    ranks = {query.ndim, key.ndim, value.ndim}
    if len(ranks) > 1:
        st.error(
            "Q, K and V must all be batches (3-D JSON / .npy) or all plain matrices. "
            f"Received shapes Q {query.shape}, K {key.shape}, V {value.shape}.",
            icon=":material/error:",
        )
        return None
    batched = query.ndim == 3
    same_batch = not batched or query.shape[0] == key.shape[0] == value.shape[0]
    if not same_batch or key.shape[-2] != value.shape[-2]:
        st.error(
            f"Shapes do not fit together: Q {query.shape}, K {key.shape}, V {value.shape}. "
            "K and V need the same number of rows (one value per key), and a batch needs "
            "the same batch size B in all three.",
            icon=":material/error:",
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
    key = f"pad_keys_{b}"
    current = [k for k in st.session_state.get(key, []) if isinstance(k, int) and 0 <= k < s]
    st.session_state[key] = current
    label = "Padding keys" + (f" of sequence {b}" if batch > 1 else "")
    st.multiselect(
        label,
        list(range(s)),
        help="Keys marked here are padding: with the padding mask on, no query may attend them.",
        **bound(key),
    )
    padding = np.ones((batch, s), dtype=bool)
    for item in range(batch):
        marked = [k for k in st.session_state.get(f"pad_keys_{item}", []) if 0 <= k < s]
        padding[item, marked] = False
    return None if padding.all() else padding


def sequence_selector(batch: int, what: str) -> int:
    """Which batch item the views show (hidden for a single item)."""
    if batch <= 1:
        st.session_state["seq"] = 0
        return 0
    if not 0 <= st.session_state.get("seq", 0) < batch:
        st.session_state["seq"] = 0
    return int(
        st.number_input(
            f"View {what} (0 – {batch - 1})",
            min_value=0,
            max_value=batch - 1,
            step=1,
            **bound("seq"),
        )
    )


def _encoding_controls():
    columns = st.columns(3)
    most = limits.MAX_FEATURES
    d_model = columns[0].number_input("d_model (embedding size)", 1, most, 16, **bound("d_model"))
    d_k = columns[1].number_input("Dk = Dv (projection size)", 1, most, 8, **bound("d_k"))
    with columns[2]:
        positional = st.toggle("Sinusoidal positional encoding", value=True, **bound("pos"))
    return int(d_model), int(d_k), bool(positional)


def sentence_panel(seed: int) -> Problem | None:
    """One or more sentences attending to themselves (self-attention)."""
    if "sentences" not in st.session_state:
        st.session_state["sentences"] = "The cat sat on the mat.\nIt slept."
    text = st.text_area(
        "Sentences, one per line (shorter ones are padded with <pad>)",
        height=110,
        **kept("sentences"),
    )
    d_model, d_k, positional = _encoding_controls()
    enc = _parse(
        lambda: encode_sentences(text, d_model=d_model, d_k=d_k, seed=seed, positional=positional)
    )
    if enc is None:
        return None
    batch = len(enc.sentences)
    item = sequence_selector(batch, "sentence")
    return Problem(
        np.asarray(enc.query),
        np.asarray(enc.key),
        np.asarray(enc.value),
        enc.tokens,
        enc.tokens,
        enc.padding_mask,
        item,
    )


def paired(source, target) -> bool:
    """Source and target sentences pair up by line; say so next to the inputs when they don't."""
    if len(source.sentences) == len(target.sentences):
        return True
    st.error(
        f"Give as many target lines as source lines: they are paired by line. Received "
        f"{len(source.sentences)} source and {len(target.sentences)} target sentences.",
        icon=":material/error:",
    )
    return False


def cross_panel(seed: int) -> Problem | None:
    """Encoder–decoder attention: queries from the target, keys and values from the source."""
    state = st.session_state
    if "target" not in state:
        state["src_text"] = "Le chat est assis sur le tapis ."
        state["target"] = "The cat sits on the mat ."
    columns = st.columns(2)
    with columns[0]:
        source = st.text_area(
            "Source (keys and values), one sentence per line", height=90, **kept("src_text")
        )
    with columns[1]:
        target = st.text_area(
            "Target (queries), one sentence per line, paired by line", height=90, **kept("target")
        )
    d_model, d_k, positional = _encoding_controls()
    kwargs = {"d_model": d_model, "d_k": d_k, "seed": seed, "positional": positional}
    src = _parse(lambda: encode_sentences(source, **kwargs), "Source: ")
    tgt = _parse(lambda: encode_sentences(target, **kwargs), "Target: ")
    if src is None or tgt is None:
        return None
    if not paired(src, tgt):
        return None
    batch = len(src.sentences)
    item = sequence_selector(batch, "pair")
    return Problem(
        np.asarray(tgt.query),
        np.asarray(src.key),
        np.asarray(src.value),
        tgt.tokens,
        src.tokens,
        src.padding_mask,
        item,
    )
