"""Lesson 12's exercises: the shipped induction language model copies. Which head is the
induction head, which heads copying needs (switched off, as "Switch heads off" does), and
what it predicts inside a repeat.

Shape letters: L layers, H heads, T tokens (`<s>` and the text).

The scores are the model view's (`heads.summaries.head_summaries` over the text's tokens) and
the ablation is the page's (`learn.language.metrics.evaluate_lm` with one head switched off,
its output zeroed, on fresh sequences of the task). Every check runs the shipped model
(`learn.pretrained.load_lm`), loaded once per process and imported inside the functions that
need it, so listing the exercises does not import TensorFlow.
"""

from __future__ import annotations

import functools

import numpy as np

from attnviz.heads.summaries import head_summaries, induction_targets, summary_table
from attnviz.learn.language.tasks import COPY_SHAPES, get_lm_task, shape_sequences
from attnviz.lessons.exercises.base import (
    Control,
    Exercise,
    PickOne,
    Reveal,
    SetControls,
    Variant,
    Verdict,
    labels,
    rng,
)
from attnviz.lessons.exercises.learned import KEPT
from attnviz.lessons.exercises.trained_heads import head_label

TASK = "induction"
ABLATION_MODE = "zero"  # a switched-off head outputs zeros (the page's default)
SCORED_SEQUENCES = 64  # 12b: fresh sequences the in-context accuracy is scored on
BARS = (0.3, 0.4, 0.5)  # 12b: the in-context accuracy to fall below, one drawn per seed
LETTERS = 4  # 12c: letters offered


@functools.lru_cache(maxsize=1)
def trained_model():
    """The shipped induction language model, loaded once."""
    from attnviz.learn.pretrained import load_lm

    return load_lm(TASK)


def _heads() -> tuple[str, ...]:
    c = trained_model().config
    return tuple(head_label(a, b) for a in range(c.layers) for b in range(c.heads))


def _text(exercise_id: str, seed: int) -> str:
    """A seeded text of the task: runs of letters that come back, of one of `COPY_SHAPES`."""
    gen = rng(seed, exercise_id)
    shapes = sorted(COPY_SHAPES)
    shape = shapes[int(gen.integers(0, len(shapes)))]
    ids = shape_sequences(shape, 1, int(gen.integers(0, 2**32)))[0]
    return get_lm_task(TASK).decode(ids)


def _token_labels(tokens: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"{i}: {t}" for i, t in enumerate(tokens))


@functools.lru_cache(maxsize=KEPT)
def _forward_of(text: str):
    """The model's forward pass over `text` (`LMForward`: every head, the predictions)."""
    return trained_model().forward(text)


def _summary(text: str, field: str) -> np.ndarray:
    """One summary of every head on `text` `(L, H)`, as the model view computes it."""
    forward = _forward_of(text)
    return summary_table(head_summaries(forward.weights, tokens=forward.tokens), field)


def _pick(answer, options: tuple[str, ...]) -> tuple[int, int] | None:
    """`(layer, head)` of a picked head, or None for anything else."""
    if answer not in options:
        return None
    return divmod(options.index(answer), trained_model().config.heads)


# ---- 12a: which head is the induction head? ------------------------------------------------


def _make_which(seed: int) -> Variant:
    text = _text("12a", seed)
    return Variant(
        seed,
        f"The shipped language model reads `{text}`: runs of letters that come back. Which "
        "head is its **induction head**: from each letter of a repeat, it looks at the letter "
        "that came *after* the same letter the time before?",
        PickOne("The induction head", _heads()),
        {"text": text},
    )


def _check_which(variant: Variant, answer) -> Verdict:
    options = variant.answer.options
    picked = _pick(answer, options)
    if picked is None:
        return Verdict(False, f"Pick one of the heads: {', '.join(options)}.")
    scores = _summary(variant.data["text"], "induction")
    best = np.unravel_index(int(np.argmax(scores)), scores.shape)
    mine = scores[picked]
    if picked == best:
        return Verdict(True, f"Right: {answer} puts **{mine:.2f}** of its weight, on average, on "
                       "the letter after the earlier occurrence.")  # fmt: skip
    said = (
        f"{answer}'s induction score is {mine:.2f}; {head_label(*best)}'s is "
        f"**{scores[best]:.2f}**."
    )
    previous = _summary(variant.data["text"], "previous")
    if picked == np.unravel_index(int(np.argmax(previous)), previous.shape):
        return Verdict(False, f"That is the **previous-token head**: it looks one letter back "
                       f"(weight {previous[picked]:.2f} on it). {said}")  # fmt: skip
    return Verdict(False, f"Not this time. {said}")


def _best_of(text: str, field: str) -> tuple[int, int]:
    scores = _summary(text, field)
    layer, head = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(layer), int(head)


def _explain_which(variant: Variant) -> str:
    text = variant.data["text"]
    induction, previous = _best_of(text, "induction"), _best_of(text, "previous")
    return (
        f"{head_label(*induction)} has the highest induction score: in the chart, its square "
        f"is the brightest. It works with the previous-token head of layer 0, "
        f"{head_label(*previous)}, which marks every letter with the one before it; the "
        "induction head then finds the letter whose mark is the current letter, the one that "
        "followed it last time, and the model copies it."
    )


def _reveal_which(variant: Variant, answer) -> Reveal:
    scores = _summary(variant.data["text"], "induction")
    picked = _pick(answer, variant.answer.options)
    return Reveal(
        "Induction score of every head on this text",
        scores,
        labels("layer", scores.shape[0]),
        labels("head", scores.shape[1]),
        guessed=(picked,) if picked else (),
        right=(_best_of(variant.data["text"], "induction"),),
    )


WHICH_HEAD = Exercise(
    "12a",
    "predict",
    "Find the induction head",
    _make_which,
    _check_which,
    lambda variant: head_label(*_best_of(variant.data["text"], "induction")),
    _explain_which,
    _reveal_which,
    wrong=lambda variant: head_label(*_best_of(variant.data["text"], "previous")),
    needs_models=True,
)


# ---- 12b: switch a head off so that copying breaks -----------------------------------------


@functools.lru_cache(maxsize=8)
def _ablations(sequence_seed: int):
    """Every head switched off alone on the variant's fresh sequences: an `AblationTable`."""
    from attnviz.learn.language.metrics import ablation_table
    from attnviz.learn.language.tasks import make_sequences

    ids = make_sequences(TASK, SCORED_SEQUENCES, sequence_seed)
    return ablation_table(trained_model(), ids, ABLATION_MODE)


def _in_context_off(variant: Variant, layer: int, head: int) -> float:
    """In-context accuracy on the variant's sequences with `(layer, head)` switched off."""
    from attnviz.learn.language.metrics import evaluate_lm
    from attnviz.learn.language.model import Ablation
    from attnviz.learn.language.tasks import make_sequences

    ids = make_sequences(TASK, SCORED_SEQUENCES, variant.data["sequences"])
    off = Ablation(((layer, head),), ABLATION_MODE)
    return float(evaluate_lm(trained_model(), ids, off).in_context_accuracy)


def _make_break(seed: int) -> Variant:
    gen = rng(seed, "12b")
    bar = float(BARS[int(gen.integers(0, len(BARS)))])
    sequences = int(gen.integers(1, 2**32))  # not 0: the seed training validated on
    table = _ablations(sequences)
    c = trained_model().config
    harmless = np.unravel_index(int(np.argmax(table.in_context_accuracy)), (c.layers, c.heads))
    intact = table.baseline.in_context_accuracy
    return Variant(
        seed,
        f"On {SCORED_SEQUENCES} fresh texts of runs that come back, the intact model predicts "
        f"**{intact:.0%}** of the letters that copying can predict (in-context accuracy). "
        f"Switch **one head** off (its output zeroed) so that in-context accuracy falls "
        f"below **{bar:.0%}**.",
        SetControls(
            (
                Control("layer", "Layer", low=0, high=c.layers - 1, default=int(harmless[0])),
                Control("head", "Head", low=0, high=c.heads - 1, default=int(harmless[1])),
            )
        ),
        {"bar": bar, "sequences": sequences, "intact": float(intact)},
    )


def _read_head(answer) -> tuple[int, int]:
    """`(layer, head)` of a SetControls answer, or a ValueError saying what is expected."""
    c = trained_model().config
    expected = (
        f"Choose a layer from 0 to {c.layers - 1} and a head from 0 to {c.heads - 1} (whole "
        "numbers)."
    )
    if not isinstance(answer, dict):
        raise ValueError(expected)
    chosen = [answer.get("layer"), answer.get("head")]
    for k, value in enumerate(chosen):
        if isinstance(value, float) and value.is_integer():
            chosen[k] = int(value)
        if isinstance(chosen[k], bool) or not isinstance(chosen[k], int | np.integer):
            raise ValueError(expected)
    layer, head = (int(x) for x in chosen)
    if not (0 <= layer < c.layers and 0 <= head < c.heads):
        raise ValueError(f"{expected} Received: layer {layer}, head {head}.")
    return layer, head


def _check_break(variant: Variant, answer) -> Verdict:
    try:
        layer, head = _read_head(answer)
    except ValueError as error:
        return Verdict(False, str(error))
    bar, intact = variant.data["bar"], variant.data["intact"]
    off = _in_context_off(variant, layer, head)
    close = float(np.clip((intact - off) / max(intact - bar, 1e-9), 0.0, 1.0))
    said = f"{head_label(layer, head)} off, in-context accuracy is **{off:.0%}** "
    if off < bar:
        return Verdict(True, f"Solved: with {said}(intact: {intact:.0%}). Copying needs that head.",
                       1.0)  # fmt: skip
    return Verdict(
        False,
        f"With {said}(intact: {intact:.0%}); it must fall below {bar:.0%}. The model copies "
        "without this head: look for the heads with a high induction or previous-token "
        "score in the model view.",
        close,
    )


def _breaking(variant: Variant) -> list[tuple[int, int]]:
    """The heads whose switching off breaks copying, most harmful first."""
    accuracy = _ablations(variant.data["sequences"]).in_context_accuracy  # (L, H)
    order = np.argsort(accuracy, axis=None)
    heads = [np.unravel_index(int(k), accuracy.shape) for k in order]
    return [(int(a), int(b)) for a, b in heads if accuracy[a, b] < variant.data["bar"]]


def _explain_break(variant: Variant) -> str:
    table = _ablations(variant.data["sequences"])
    named = ", ".join(head_label(*h) for h in _breaking(variant))
    shape = table.baseline.induction.shape  # (L, H)
    induction = np.unravel_index(int(np.argmax(table.baseline.induction)), shape)
    previous = np.unravel_index(int(np.argmax(table.baseline.previous_token)), shape)
    return (
        f"Copying is a circuit of two heads in two layers: the previous-token head "
        f"{head_label(*previous)} marks each letter with the one before it, and the induction "
        f"head {head_label(*induction)} reads those marks. Switch either off and the model "
        f"can no longer copy. Each of these breaks it here: {named}; the chart shows the "
        "in-context accuracy with each head off."
    )


def _reveal_break(variant: Variant, answer) -> Reveal:
    accuracy = _ablations(variant.data["sequences"]).in_context_accuracy
    try:
        guessed = (_read_head(answer),)
    except ValueError:
        guessed = ()
    return Reveal(
        f"In-context accuracy with each head switched off (intact: {variant.data['intact']:.0%})",
        np.asarray(accuracy, dtype=np.float64),
        labels("layer", accuracy.shape[0]),
        labels("head", accuracy.shape[1]),
        guessed=guessed,
        right=tuple(_breaking(variant)),
    )


def _control_answer(layer_head: tuple[int, int]) -> dict[str, int]:
    return {"layer": layer_head[0], "head": layer_head[1]}


BREAK_COPYING = Exercise(
    "12b",
    "make",
    "Switch off copying",
    _make_break,
    _check_break,
    lambda variant: _control_answer(_breaking(variant)[0]),
    _explain_break,
    _reveal_break,
    wrong=lambda variant: {c.name: c.default for c in variant.answer.controls},  # the
    # least harmful head, where the controls start
    needs_models=True,
)


# ---- 12c: what comes next in a repeat? -----------------------------------------------------


def _make_next(seed: int) -> Variant:
    text = _text("12c", seed)
    tokens = ("<s>", *text)
    targets = induction_targets(tokens)  # (T,) where each letter's earlier occurrence led
    copies = [i for i in range(2, len(text)) if targets[i] >= 0]  # ends inside a repeat
    gen = rng(seed, "12c-cut")
    cut = copies[int(gen.integers(len(copies) // 2, len(copies)))] if copies else len(text)
    prefix = text[:cut]  # its last letter, tokens[cut], came before
    copied = tokens[targets[cut]] if copies else text[-1]
    options = _letter_options(prefix, copied, gen)
    return Variant(
        seed,
        f"The shipped language model has read `{prefix}`. Its last letter, **{prefix[-1]}**, "
        "came before. Which letter will the model predict next?",
        PickOne("It predicts next", options),
        {"text": prefix},
    )


def _letter_options(prefix: str, copied: str, gen: np.random.Generator) -> tuple[str, ...]:
    """`LETTERS` letters in alphabetical order: the copy, the last letter again, the letter
    before its earlier occurrence, and letters the text never showed."""
    last = prefix[-1]
    earlier = prefix[:-1].rfind(last)
    offered = [copied, last]
    if earlier > 0 and prefix[earlier - 1] not in offered:
        offered.append(prefix[earlier - 1])
    unseen = [c for c in get_lm_task(TASK).symbols if c not in prefix]
    for k in gen.permutation(len(unseen)):
        if len(offered) >= LETTERS:
            break
        offered.append(unseen[int(k)])
    return tuple(sorted(offered))


def _forward(variant: Variant):
    return _forward_of(variant.data["text"])


def _predicted(variant: Variant) -> str:
    return _forward(variant).predicted[-1]


def _check_next(variant: Variant, answer) -> Verdict:
    options = variant.answer.options
    if answer not in options:
        return Verdict(False, f"Pick one of the letters {', '.join(options)}.")
    forward = _forward(variant)
    predicted = forward.predicted[-1]
    index = get_lm_task(TASK).labels.index
    sure = float(forward.probabilities[-1, index(predicted)])
    if answer == predicted:
        return Verdict(True, f"Right: it predicts **{predicted}** (probability {sure:.2f}).")
    return Verdict(False, _next_mistake(variant, answer, predicted, sure))


def _next_mistake(variant: Variant, answer: str, predicted: str, sure: float) -> str:
    """Why the picked letter is not the model's guess: the usual mistakes named."""
    text = variant.data["text"]
    said = f"It predicts **{predicted}** (probability {sure:.2f})."
    earlier = text[:-1].rfind(text[-1])
    if answer == text[-1]:
        return (
            f"That repeats the last letter; in these texts a letter never comes twice in a "
            f"row. {said}"
        )
    if earlier > 0 and answer == text[earlier - 1]:
        return (
            f"That is the letter *before* the earlier {text[-1]}. The induction head looks at "
            f"the letter *after* it, the one that followed {text[-1]} last time. {said}"
        )
    return f"{answer} never came in the text, so nothing points to it. {said}"


def _induction_head(variant: Variant) -> tuple[int, int]:
    return _best_of(variant.data["text"], "induction")


def _explain_next(variant: Variant) -> str:
    text = variant.data["text"]
    earlier = text[:-1].rfind(text[-1])
    after = text[earlier + 1]
    return (
        f"The last letter, {text[-1]}, came before at place {earlier + 1} (after <s>), and "
        f"{after} followed it. The induction head {head_label(*_induction_head(variant))} "
        f"looks from the last {text[-1]} to that {after}, and the model copies it: its bright "
        "cells in the last row of the chart sit on the letter that followed each earlier "
        f"{text[-1]}."
    )


def _copy_cells(text: str) -> tuple[tuple[int, int], ...]:
    """The cells of the last row (tokens: `<s>` first) on each letter that followed an earlier
    occurrence of the last letter: where an induction head looks from it."""
    last = len(text)  # the last letter's token
    return tuple((last, j + 2) for j in range(len(text) - 1) if text[j] == text[-1])


def _reveal_next(variant: Variant, answer) -> Reveal:
    forward = _forward(variant)
    layer, head = _induction_head(variant)
    weights = np.asarray(forward.weights[layer, head], dtype=np.float64)  # (T, T)
    last = len(forward.tokens) - 1
    text = variant.data["text"]
    picked = isinstance(answer, str) and answer in variant.answer.options
    seen = text.rfind(answer) if picked else -1  # where the picked letter last came
    return Reveal(
        f"{head_label(layer, head)}, the induction head: the letter you picked and where it "
        "looks from the last letter",
        weights,
        _token_labels(forward.tokens),
        _token_labels(forward.tokens),
        allowed=np.tri(len(forward.tokens), dtype=bool),
        guessed=((last, seen + 1),) if seen >= 0 else (),
        right=_copy_cells(variant.data["text"]),
    )


NEXT_LETTER = Exercise(
    "12c",
    "predict",
    "What comes next?",
    _make_next,
    _check_next,
    _predicted,
    _explain_next,
    _reveal_next,
    wrong=lambda variant: variant.data["text"][-1],  # the last letter again
    needs_models=True,
)

EXERCISES = (WHICH_HEAD, BREAK_COPYING, NEXT_LETTER)
