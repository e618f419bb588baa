"""Lesson 10's exercises: what the heads of the shipped dates Transformer do, read as the model
view reads them (its alignment score, and where one head looks).

Shape letters: L layers, H heads, T decoder positions (rows: the output characters, then the
end step), S input characters (columns).

The alignment score is the model view's (`heads.summaries.head_summaries` with the spans of
`learn.translation.tasks.known_alignment`): the share of the digit rows whose largest weight
falls inside the part of the input they come from. Every check runs the shipped model
(`learn.pretrained.load_transformer`), loaded once per process and imported inside the
function that loads it, so listing the exercises does not import TensorFlow.
"""

from __future__ import annotations

import functools

import numpy as np

from attnviz.heads.summaries import head_summaries, summary_table
from attnviz.learn.translation.tasks import known_alignment, make_pairs
from attnviz.lessons.exercises.base import (
    Exercise,
    PickOne,
    Reveal,
    TypeNumber,
    Variant,
    Verdict,
    count,
    labels,
    number_text,
    rng,
    typed_verdict,
)
from attnviz.lessons.exercises.learned import DIGIT_ROWS, ISO_PARTS, KEPT, char_label

TASK = "dates"
CANDIDATES = 12  # dates a variant draws; it takes the first that fits
MARGIN = 0.1  # 10b: the head's largest weight leads its next by at least this
SCORE_TOLERANCE = 0.01  # 10c: a typed alignment score this close counts
END = "</s>"  # the label of the end step's row


@functools.lru_cache(maxsize=1)
def trained_model():
    """The shipped dates Transformer, loaded once."""
    from attnviz.learn.pretrained import load_transformer

    return load_transformer(TASK)


def head_label(layer: int, head: int) -> str:
    """How the page names a head: "layer 1 · head 0"."""
    return f"layer {layer} · head {head}"


def _head_options() -> tuple[str, ...]:
    c = trained_model().config
    return tuple(head_label(a, b) for a in range(c.layers) for b in range(c.heads))


@functools.lru_cache(maxsize=KEPT)
def _cross(source: str) -> np.ndarray:
    """Every encoder–decoder head's weights on `source`, `(L, H, T, S)`, as the model view
    draws them (greedy decoding); read-only."""
    cross = np.asarray(trained_model().translate(source).cross, dtype=np.float64)
    cross.setflags(write=False)
    return cross


def _spans(source: str, target: str) -> list:
    """Each row's source span, as the model view reads them: the end step has none."""
    return [*known_alignment(TASK, source, target, any_form=True), None]


def _scores(source: str, target: str) -> np.ndarray:
    """The alignment score of every cross head `(L, H)`, by the model view's summaries."""
    return summary_table(head_summaries(_cross(source), spans=_spans(source, target)), "alignment")


def _right_dates(exercise_id: str, seed: int) -> list[tuple[str, str, np.ndarray]]:
    """The seed's candidate dates the model translates right, with their cross weights."""
    pairs = make_pairs(TASK, CANDIDATES, int(rng(seed, exercise_id).integers(0, 2**32)))
    translations = trained_model().translate_batch([s for s, _ in pairs])
    return [
        (source, target, np.asarray(t.cross, dtype=np.float64))
        for (source, target), t in zip(pairs, translations, strict=True)
        if t.output == target
    ]


def _row_labels(target: str) -> tuple[str, ...]:
    return (*(char_label(i, c) for i, c in enumerate(target)), END)


def _col_labels(source: str) -> tuple[str, ...]:
    return tuple(char_label(j, c) for j, c in enumerate(source))


def _parts_said(source: str, target: str) -> str:
    """ "the year is characters 7–10 ('2026'), the month 3–5 ('nov'), the day 0–1 ('22')"."""
    spans = _spans(source, target)
    said = []
    for part, row in (("year", 0), ("month", 5), ("day", 8)):
        a, b = spans[row]
        where = f"character {a}" if b - a == 1 else f"characters {a}–{b - 1}"
        said.append(f"the {part} is {where} ('{source[a:b]}')")
    return ", ".join(said)


def _said(source: str, column: int) -> str:
    """ "character 8 ('2')"."""
    return f"character {column} ('{source[column]}')"


# ---- 10a: which head aligns best? ----------------------------------------------------------


def _make_best(seed: int) -> Variant:
    dates = _right_dates("10a", seed)
    chosen = dates[0]
    for source, target, cross in dates:  # a date with one best head, if there is one
        scores = summary_table(head_summaries(cross, spans=_spans(source, target)), "alignment")
        if np.sum(scores == scores.max()) == 1:
            chosen = (source, target, cross)
            break
    source, target, _ = chosen
    return Variant(
        seed,
        f"The shipped Transformer translates `{source}` into `{target}`. Which "
        "encoder–decoder head has the highest **alignment score** on it: for the most digits "
        "of the output, its largest weight falls inside the part of the input the digit "
        "comes from?",
        PickOne("The best-aligned head", _head_options()),
        {"source": source, "target": target},
    )


def _best_heads(scores: np.ndarray) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in zip(*np.nonzero(scores == scores.max()), strict=True)]


def _check_best(variant: Variant, answer) -> Verdict:
    options = variant.answer.options
    if answer not in options:
        return Verdict(False, f"Pick one of the heads: {', '.join(options)}.")
    scores = _scores(variant.data["source"], variant.data["target"])
    layer, head = divmod(options.index(answer), scores.shape[1])
    mine, best = scores[layer, head], _best_heads(scores)
    hits = round(mine * len(DIGIT_ROWS))
    if (layer, head) in best:
        also = [head_label(*h) for h in best if h != (layer, head)]
        tied = f" ({', '.join(also)} too)" if also else ""
        return Verdict(
            True,
            f"Right: {answer} scores **{mine:.3f}**{tied}: its largest weight falls in the "
            f"right part for {hits} of the {len(DIGIT_ROWS)} digits.",
        )
    named = " and ".join(head_label(*h) for h in best)
    return Verdict(
        False,
        f"Not this time: {answer} scores {mine:.3f} (the right part for {hits} of the "
        f"{len(DIGIT_ROWS)} digits); {named} {'scores' if len(best) == 1 else 'score'} "
        f"**{scores.max():.3f}**.",
    )


def _explain_best(variant: Variant) -> str:
    scores = _scores(variant.data["source"], variant.data["target"])
    best = head_label(*_best_heads(scores)[0])
    return (
        f"Each square of the chart is one encoder–decoder head's alignment score on this date. "
        f"{best} scores {scores.max():.3f}: when the decoder writes a year, month or day digit, "
        "that head looks inside the year, month or day of the input. Other heads look at "
        "separators or spread out; the decoder needs only some heads to read the date."
    )


def _reveal_best(variant: Variant, answer) -> Reveal:
    scores = _scores(variant.data["source"], variant.data["target"])
    options = variant.answer.options
    guessed = (divmod(options.index(answer), scores.shape[1]),) if answer in options else ()
    return Reveal(
        "Alignment score of every encoder–decoder head on this date",
        scores,
        labels("layer", scores.shape[0]),
        labels("head", scores.shape[1]),
        guessed=guessed,
        right=tuple(_best_heads(scores)),
    )


BEST_HEAD = Exercise(
    "10a",
    "predict",
    "Which head reads the date?",
    _make_best,
    _check_best,
    lambda variant: head_label(
        *_best_heads(_scores(variant.data["source"], variant.data["target"]))[0]
    ),
    _explain_best,
    _reveal_best,
    wrong=lambda variant: _head_options()[
        int(np.argmin(_scores(variant.data["source"], variant.data["target"])))
    ],
    needs_models=True,
)


# ---- 10b: where does one head look? --------------------------------------------------------


def _make_where(seed: int) -> Variant:
    order = [int(r) for r in rng(seed, "10b-row").permutation(DIGIT_ROWS)]
    fallback = None
    for source, target, cross in _right_dates("10b", seed):
        spans = _spans(source, target)
        scores = summary_table(head_summaries(cross, spans=spans), "alignment")
        layer, head = _best_heads(scores)[0]
        for row in order:
            fallback = fallback or (source, target, layer, head, row)
            weights = np.sort(cross[layer, head, row])
            top = int(cross[layer, head, row].argmax())
            if weights[-1] - weights[-2] >= MARGIN and spans[row][0] <= top < spans[row][1]:
                return _where_variant(seed, source, target, layer, head, row)
    return _where_variant(seed, *fallback)


def _where_variant(seed: int, source: str, target: str, layer: int, head: int, row: int) -> Variant:
    name = head_label(layer, head)
    return Variant(
        seed,
        f"The shipped Transformer translates `{source}` into `{target}`; {name} is its "
        f"best-aligned encoder–decoder head on this date. When the decoder writes character "
        f"{row} of {target[:row]}**{target[row]}**{target[row + 1 :]}, which input character "
        f"does {name} weigh most?",
        PickOne(f"{name} weighs most", _col_labels(source)),
        {"source": source, "target": target, "head": (layer, head), "row": row},
    )


def _head_weights(variant: Variant) -> np.ndarray:
    """The variant's head on its date `(T, S)`."""
    layer, head = variant.data["head"]
    return _cross(variant.data["source"])[layer, head]


def _top_column(variant: Variant) -> int:
    return int(_head_weights(variant)[variant.data["row"]].argmax())


def _check_where(variant: Variant, answer) -> Verdict:
    options = variant.answer.options
    if answer not in options:
        return Verdict(False, f"Pick one input character, {options[0]} to {options[-1]}.")
    row, picked, top = variant.data["row"], options.index(answer), _top_column(variant)
    weights = _head_weights(variant)[row]
    if picked == top:
        return Verdict(
            True,
            f"Right: input {_said(variant.data['source'], top)} gets **{weights[top]:.2f}** of "
            f"row {row}'s weight.",
        )
    return Verdict(False, _where_mistake(variant, picked, top, weights))


def _where_mistake(variant: Variant, picked: int, top: int, weights: np.ndarray) -> str:
    """Where the guess went wrong: the right part but not its brightest character, output
    character k read as input character k, or another part."""
    source, row = variant.data["source"], variant.data["row"]
    span = _spans(source, variant.data["target"])[row]
    said = (
        f"Input {_said(source, picked)} gets {weights[picked]:.2f}; the most, "
        f"**{weights[top]:.2f}**, goes to {_said(source, top)}."
    )
    if span[0] <= picked < span[1]:
        return f"The right part, the {ISO_PARTS[row]}, but not its brightest character: {said}"
    if picked == row:
        return (
            f"Output character {row} does not read input character {row}: the head looks "
            f"where the digit comes from, the {ISO_PARTS[row]} of the input. {said}"
        )
    part = ISO_PARTS[row]
    return f"Output character {row} is a {part} digit: it reads the input's {part}. {said}"


def _wrong_where(variant: Variant) -> str:
    """The usual mistake: output character k read as input character k (else a neighbour of
    the brightest character)."""
    top, row, n = _top_column(variant), variant.data["row"], len(variant.data["source"])
    picked = row if row < n and row != top else (top + 1) % n
    return variant.answer.options[picked]


def _explain_where(variant: Variant) -> str:
    layer, head = variant.data["head"]
    row = variant.data["row"]
    part = ISO_PARTS[row]
    return (
        f"Row {row} of the chart is what layer {layer} · head {head} weighs when the decoder "
        f"writes that {part} digit: its bright cell sits in the input's {part}, the part the "
        f"digit is copied from ({_parts_said(variant.data['source'], variant.data['target'])})."
    )


def _reveal_where(variant: Variant, answer) -> Reveal:
    row, options = variant.data["row"], variant.answer.options
    layer, head = variant.data["head"]
    return Reveal(
        f"{head_label(layer, head)}: your guess and its largest weight",
        _head_weights(variant),
        _row_labels(variant.data["target"]),
        options,
        guessed=((row, options.index(answer)),) if answer in options else (),
        right=((row, _top_column(variant)),),
    )


WHERE = Exercise(
    "10b",
    "predict",
    "Where does the head look?",
    _make_where,
    _check_where,
    lambda variant: variant.answer.options[_top_column(variant)],
    _explain_where,
    _reveal_where,
    wrong=_wrong_where,
    needs_models=True,
)


# ---- 10c: one head's alignment score by hand -----------------------------------------------


def _make_score(seed: int) -> Variant:
    dates = _right_dates("10c", seed)
    source, target, cross = dates[0]
    for candidate in dates:  # a date with a head that is right for some digits, not all
        scores = summary_table(head_summaries(candidate[2], spans=_spans(*candidate[:2])),
                               "alignment")  # fmt: skip
        if np.any((scores > 0) & (scores < 1)):
            source, target, cross = candidate
            break
    scores = summary_table(head_summaries(cross, spans=_spans(source, target)), "alignment")
    partial = [(int(a), int(b)) for a, b in zip(*np.nonzero((scores > 0) & (scores < 1)),
                                                 strict=True)] or [(0, 0)]  # fmt: skip
    layer, head = partial[int(rng(seed, "10c-head").integers(0, len(partial)))]
    name = head_label(layer, head)
    return Variant(
        seed,
        f"The shipped Transformer translates `{source}` into `{target}`. The chart shows "
        f"{name}'s weights: one row per output character (and the end), one column per input "
        f"character; {_parts_said(source, target)}. Work out {name}'s **alignment score**: "
        "the share of the output's digits whose largest weight falls inside the part they "
        f"come from. (Within {SCORE_TOLERANCE}.)",
        TypeNumber(f"Alignment score of {name}", tolerance=SCORE_TOLERANCE),
        {"source": source, "target": target, "head": (layer, head)},
        ((name, cross[layer, head], _row_labels(target), _col_labels(source)),),
    )


def _score_of(variant: Variant) -> float:
    layer, head = variant.data["head"]
    return float(_scores(variant.data["source"], variant.data["target"])[layer, head])


def _check_score(variant: Variant, answer) -> Verdict:
    right, digits = _score_of(variant), len(DIGIT_ROWS)
    hits = round(right * digits)
    return typed_verdict(
        answer, right, SCORE_TOLERANCE,
        lambda: f"Right: {count(hits, 'digit')} of {digits} look inside their part: "
        f"{hits}/{digits} = **{number_text(right)}**.",
        lambda typed: _score_mistake(variant, typed, hits),
    )  # fmt: skip


def _score_mistake(variant: Variant, typed: float, hits: int) -> str:
    """The step that went wrong, found by computing what each usual mistake gives."""
    digits, rows = len(DIGIT_ROWS), len(variant.data["target"]) + 1
    if abs(typed - hits) <= SCORE_TOLERANCE:
        return f"That is the count of digits that look inside their part: divide by {digits}."
    for total in (rows - 1, rows):  # the output's characters, and with the end step
        if abs(typed - hits / total) <= SCORE_TOLERANCE:
            return (
                f"You divided by {total}, the rows with the '-' and the end step. They come "
                f"from no part of the input, so the score leaves them out: divide by {digits}."
            )
    return (
        f"Not quite. For each of the {digits} digit rows, find its brightest cell and check "
        f"whether it falls inside the part the digit comes from; the score is the share that do."
    )


def _explain_score(variant: Variant) -> str:
    right, digits = _score_of(variant), len(DIGIT_ROWS)
    hits = round(right * digits)
    layer, head = variant.data["head"]
    return (
        f"Of the {digits} digit rows of layer {layer} · head {head}, {hits} have their largest "
        f"weight inside the part they come from, so the score is {hits}/{digits} = "
        f"{number_text(right)}. The '-' rows and the end step come from no part and are left "
        "out. The model view sorts the heads by this score."
    )


def _reveal_score(variant: Variant, answer) -> Reveal:
    weights = _head_weights(variant)
    spans = _spans(variant.data["source"], variant.data["target"])
    top = weights.argmax(axis=1)
    hits = tuple(
        (row, int(top[row])) for row in DIGIT_ROWS if spans[row][0] <= top[row] < spans[row][1]
    )
    return Reveal(
        f"{head_label(*variant.data['head'])}: the largest weights that fall inside their part",
        weights,
        _row_labels(variant.data["target"]),
        _col_labels(variant.data["source"]),
        right=hits,
    )


ALIGNMENT_SCORE = Exercise(
    "10c",
    "compute",
    "An alignment score by hand",
    _make_score,
    _check_score,
    lambda variant: number_text(_score_of(variant)),
    _explain_score,
    _reveal_score,
    wrong=lambda variant: str(round(_score_of(variant) * len(DIGIT_ROWS))),
    needs_models=True,
)

EXERCISES = (BEST_HEAD, WHERE, ALIGNMENT_SCORE)
