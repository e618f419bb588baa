"""Your model: the model the person who started the server chose (`attnviz view MODEL`), on the
text you type: every layer × head in the model view, head summaries, rollout, one head enlarged
and opened step by step in the explorer, and a causal LM's next token.

The model comes only from the server's environment (`server_config.MODEL_ENV`, set by
`attnviz view`): a visitor can neither choose nor upload a model file (model files can carry
code), so this page has no file uploader and no field naming a file; without a chosen model it
says how to start one. Wiring only: loading and running are `attnviz.heads`' (`user_model`,
`text_run`, `head_inputs`).
"""

from __future__ import annotations

import contextlib
import functools
import os
from typing import TYPE_CHECKING

import streamlit as st

from attnviz.core import limits
from attnviz.core.settings import AttentionSettings
from attnviz.core.words import plural
from attnviz.drawing.standalone import call_text
from attnviz.inputs.problem import LearnedWeights
from attnviz.ui.explorer.opening import Opened, reopens
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import plain, shown
from attnviz.ui.frame.mode import Mode
from attnviz.ui.frame.server_config import MODEL_ENV
from attnviz.ui.frame.state import slot
from attnviz.ui.frame.tables import data_table
from attnviz.ui.frame.takeaway import view_download
from attnviz.ui.models.heads_panel import (
    HeadOpening,
    HeadsView,
    Section,
    model_view_panel,
    view_about,
)

if TYPE_CHECKING:
    from attnviz.heads.text_run import TextRun
    from attnviz.heads.user_model import UserModel

TEXT = slot("model_text", "")  # the text (or token ids) the model runs on
RUNS = slot("model_runs", None, kind=dict, kept=True)  # (source, text) -> (model, TextRun)
RUNS_KEPT = 3  # texts a session keeps inspected (a 12 × 12-head run at 256 tokens: ~75 MB)
NAMES = {  # kind -> (section name, in chart titles, rows, columns)
    "self": ("self-attention", "self", "token", "token"),
    "cross": ("cross-attention", "cross", "query", "key"),
    "unknown": ("attention", "attention", "query", "key"),
}
HOW_TO_START = """No model was chosen when this server started. To see your own model here, start
attnviz with it, on your machine:

```sh
attnviz view my_model.keras          # a .keras file (loaded with safe_mode=True)
attnviz view ./my_preset_folder      # a keras-hub preset folder (save_to_preset)
attnviz view gpt2_base_en            # a keras-hub preset name (keras-hub downloads it)
```

or, in a notebook, `attnviz.view(model, tokenizer=tokenizer)`. Presets need keras-hub:
`pip install "attnviz[hub]"`. Only the person who starts the server chooses its model: this page
never takes a model file from a visitor (a model file can carry code)."""


@st.cache_resource(max_entries=1, show_spinner="Loading your model…")
def chosen_model(source: str) -> UserModel:
    """The chosen model, loaded once per server and shared read-only by every session."""
    with back_end(draws=False):
        from attnviz.heads.user_model import load_model
    return load_model(source)


def draw() -> None:
    """The whole page."""
    source = os.environ.get(MODEL_ENV, "").strip()
    if not source:
        st.info(HOW_TO_START, icon=":material/info:")
        return
    user = shown(lambda: chosen_model(source), "Your model could not be loaded. ")
    if user is None:
        return
    st.caption(plain(user.description) + ".")
    text = _text_input(user)
    run = _inspected(user, text)
    if run is None:
        return
    tokens = run.inputs.tokens
    st.caption(plain(f"{plural(len(tokens), 'token')}: {' · '.join(tokens)}"))
    for note in (*run.inputs.notes, *(f"Not drawn: {s}." for s in run.skipped)):
        st.caption(plain(note))
    if run.next:
        _next_tokens(run)
    _checks(run)
    view = _heads_view(user, run, text)
    about = functools.partial(_taken, user, text, run, view)
    with view_download("attnviz: your model", "model-take-away", about):
        model_view_panel(view)


def _taken(user: UserModel, text: str, run: TextRun, view: HeadsView) -> dict:
    """What "Download this view" writes beside the charts: the model, the text and its tokens,
    every attention call (class, shape, mask, positions, its check) and the next tokens."""
    about = view_about(view)
    calls = {f"call {call.key}": call_text(call) for call in run.inspection.calls}
    after = ", ".join(f"{p.token} ({p.probability:.3g})" for p in run.next)
    settings = {"model": user.description, **calls, **({"next token": after} if after else {})}
    tokens = " · ".join(run.inputs.tokens)
    inputs = {"text": text, f"tokens ({len(run.inputs.tokens)})": tokens, **about["inputs"]}
    return {"settings": {**settings, **about["settings"]}, "inputs": inputs}


def _text_input(user: UserModel) -> str:
    """The text box (token ids when the model has no tokenizer)."""
    if not TEXT.is_set():
        TEXT.set(default_text(user))
    if user.tokenizer is not None:
        label = f"Your text ({limits.MAX_VIEW_TOKENS} tokens at most)"
    else:
        label = "Token ids, separated by spaces (the model has no tokenizer)"
    return st.text_area(label, height=80, **TEXT.widget())


def default_text(user: UserModel) -> str:
    """The text the page opens on (`model_text.default_text`: one that fits the model)."""
    with back_end(draws=False):
        from attnviz.heads import model_text
    return model_text.default_text(user)


def warm_up() -> None:
    """What the page's first open does first, on a server started on a model: the model loaded
    into the cache the page reads, and run once on the text the page opens on (tracing its
    TensorFlow functions; the run itself is the session's, made again)."""
    source = os.environ.get(MODEL_ENV, "").strip()
    if not source:
        return
    user = chosen_model(source)
    with contextlib.suppress(ValueError):  # a text the model refuses: the page says why
        with back_end(draws=False):
            from attnviz.heads.text_run import run_text
        run_text(user, default_text(user))


def _inspected(user: UserModel, text: str) -> TextRun | None:
    """The model's run on `text` (None after showing why not), kept per session: clicking
    through heads does not run the model again. The model is kept beside its runs, so an id is
    never reused."""
    cache = RUNS.get()
    if cache is None:
        cache = {}
        RUNS.set(cache)
    key = (id(user), text)
    if key not in cache:
        with back_end():
            from attnviz.heads.text_run import run_text
        with st.spinner("Running your model…"):
            run = shown(lambda: run_text(user, text))
        if run is None:
            return None
        while len(cache) >= RUNS_KEPT:
            cache.pop(next(iter(cache)))
        cache[key] = (user, run)
    return cache[key][1]


def _next_tokens(run: TextRun) -> None:
    st.subheader("Next token")
    st.caption("The causal LM's prediction after the last token: the softmax of its logits.")
    data_table(
        {
            "next token": [p.token for p in run.next],
            "id": [p.token_id for p in run.next],
            "probability": [p.probability for p in run.next],
        },
        column_config={
            "probability": st.column_config.ProgressColumn(
                "probability", format="%.3f", min_value=0.0, max_value=1.0
            )
        },
    )


def _checks(run: TextRun) -> None:
    """Each attention call, in the order the model ran them, with how its capture compared
    with what its layer returned in the same run."""
    calls = run.inspection.calls
    st.caption(
        "Each attention call as recorded here, checked against its layer's own result in the "
        "same run: the weights times the values, through the layer's output projection."
    )
    data_table(
        {
            "attention call": [call.key for call in calls],
            "check": [call.verified.describe() for call in calls],
        },
    )


def _heads_view(user: UserModel, run: TextRun, text: str) -> HeadsView:
    """The model view of every stacked kind: tokens as labels where they fit."""
    groups, titles, sections = {}, {}, {}
    for kind, stack in run.stacks.items():
        part, short, rows, cols = NAMES[kind]
        groups[kind], titles[kind] = stack.keys, (rows, cols)
        said = (f"Each row of heads is one {part} call, in the order the model ran them "
                f"(layer 0: {stack.keys[0]}). {run.positions[kind]}")  # fmt: skip
        sections[kind] = Section(part, short, kind == "self", said)
    return HeadsView(
        run.inspection, groups, axis_titles=titles, sections=sections,
        opener=lambda kind, layer, head: _opening(user, run, text, (kind, layer, head)),
        tokens=tuple(run.inputs.tokens),  # its self-attention heads' induction score on them
    )  # fmt: skip


def _opening(user: UserModel, run: TextRun, text: str, which: tuple[str, int, int]) -> HeadOpening:
    """What the enlarged head `which` (kind, layer, head) of the run on `text` says, and its Q,
    K and V for the explorer."""
    kind, layer, head = which
    call = run.inspection[run.stacks[kind].keys[layer]]
    with back_end():
        from attnviz.heads.head_inputs import head_inputs
    try:
        inputs = head_inputs(call, head)
    except ValueError as err:
        return HeadOpening(plain(str(err)), None)
    t, d_k = inputs.query.shape
    s, d_v = inputs.value.shape
    if inputs.scale:
        scaling = f"scores × 1/√{d_k}"
    elif inputs.factor == 1.0:
        scaling = "the layer scaled Q before Q·Kᵀ, so the scores are used as they are"
    else:
        scaling = f"Q × the layer's scale {inputs.factor:.6g}"
    if inputs.reproduced:
        verdict = f"The explorer reproduces this head's weights (to {inputs.difference:.0e})."
    else:
        verdict = (f"The explorer's weights differ from this head's by up to "
                   f"{inputs.difference:.3g}: {'; '.join(inputs.reasons)}.")  # fmt: skip
    caption = (
        f"Q, K and V of this head as `{call.key}` multiplied them (after its position scheme): "
        f"{t} × {d_k}, {s} × {d_k} and {s} × {d_v}; {scaling}"
        f"{', causal mask' if inputs.causal else ''}. {verdict} The recorded call: "
        f"{call.verified.describe()}."
    )
    rows, cols = call.labels()
    learned = LearnedWeights(
        params={},
        labels=(tuple(rows), tuple(cols)),
        source=f"your model {user.name}, {call.key} · head {head}",
        note="Q, K and V are this head's, as the layer multiplied them (after RoPE, if any); "
        "the score is the dot product.",
        origin=f"model:{_origin_name(user)}:{kind}:{layer}:{head}:{text}",
    )
    opened = Opened(inputs.query, inputs.key, inputs.value, learned,
                    AttentionSettings(scale=inputs.scale, causal=inputs.causal))  # fmt: skip
    return HeadOpening(plain(caption), opened)


def _origin_name(user: UserModel) -> str:
    """The model's name as a link's `from` field carries it (no ":", which separates fields)."""
    return user.name.replace(":", "_")


@reopens("model")
def reopened_model_head(rest: str) -> Opened:
    """A head of the server's model on a text, from a link's `from` field
    (`model:<name>:<kind>:<layer>:<head>:<text>`, `rest` without its `model:`).

    Raises:
        ValueError: when the server runs no model, or another one than the link's, or the
            field names no head of it (each says so).
    """
    name, kind, layer, head, text = (rest.split(":", 4) + [""] * 5)[:5]
    source = os.environ.get(MODEL_ENV, "").strip()
    if not source:
        raise ValueError(
            f"This link opened a head of the model {name!r}, which the server was started with; "
            "this server runs no model of yours now, so the head cannot be opened again. Start "
            "it with `attnviz view MODEL` and open the head on the Your model page."
        )
    user = chosen_model(source)
    if _origin_name(user) != name:
        raise ValueError(
            f"This link opened a head of the model {name!r}; this server runs {user.name!r} "
            "now, so that head cannot be opened again."
        )
    run = _inspected(user, text)
    if run is None:  # said why, as the page does under its text
        raise ValueError(f"This link's text cannot be run by {user.name}.")
    try:
        opening = _opening(user, run, text, (kind, int(layer), int(head)))
    except (KeyError, IndexError, ValueError) as err:
        raise ValueError(f"This link's `from` field names no head of {user.name}: {err}") from None
    if opening.opened is None:
        raise ValueError(opening.caption)
    return opening.opened


MODE = Mode(
    name="model",
    label="Your model",
    icon=":material/model_training:",
    intro="Your own Keras model, chosen when the server started (attnviz view MODEL): every "
    "layer × head on your text.",
    draw=draw,
    url_texts=(TEXT,),
    warm_up=warm_up,
)
