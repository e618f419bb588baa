"""Sentences: one or more sentences attending to themselves (self-attention), tokens embedded,
position-encoded and projected to Q, K and V with seeded weights; then the explorer's results.
"""

from __future__ import annotations

from attnviz.inputs.problem import Problem
from attnviz.inputs.text import encode_sentences
from attnviz.ui.controls import sidebar
from attnviz.ui.controls.input_widgets import (
    ENCODING,
    POSITIONAL,
    SENTENCES,
    encoding_controls,
    first_sequence,
    sentence_box,
    sequence_selector,
)
from attnviz.ui.explorer import results
from attnviz.ui.frame.messages import shown
from attnviz.ui.frame.mode import Mode


def sentence_panel(seed: int) -> Problem | None:
    """The sentences and how they are encoded, as a `Problem` (None after showing why not)."""
    text = sentence_box(
        SENTENCES, "Sentences, one per line (shorter ones are padded with <pad>)", height=110
    )
    d_model, d_k, positional = encoding_controls()
    enc = shown(
        lambda: encode_sentences(
            text, d_model=d_model, d_k=d_k, seed=seed, positional=positional, **ENCODING
        )
    )
    if enc is None:
        return None
    item = sequence_selector(len(enc.sentences), "sentence")
    return Problem.of_sentences(enc, enc, item)


def prepare(text: str, view: str | None = None, settings: dict | None = None) -> None:
    """Open this page on `text` (sentences, one per line) with the controls at their defaults
    but `settings`, on the results tab `view`."""
    SENTENCES.set(text)
    POSITIONAL.set(POSITIONAL.default)
    first_sequence()
    sidebar.apply_settings(settings or {})
    results.show_view(view or results.VIEWS[0])


def draw() -> None:
    """The whole Sentences page."""
    controls = sidebar.explorer_controls()
    problem = sentence_panel(sidebar.SEED.get())
    if problem is not None:
        results.results_panel(problem, controls)


MODE = Mode(
    name="sentences",
    label="Sentences",
    icon=":material/notes:",
    intro="Self-attention: the tokens of each sentence attend to the tokens of the same "
    "sentence (which ones, the masks decide). Tokens are embedded, position-encoded and "
    "projected to Q, K and V with seeded weights.",
    draw=draw,
    url_texts=(SENTENCES,),
    prepare=prepare,
)
