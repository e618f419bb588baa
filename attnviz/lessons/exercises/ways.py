"""Lesson 8's exercises: the three ways a Transformer uses attention (bi-directional, causal,
cross). Checked with attnviz's own registry of the ways and their masks (`core.ways`) and, where a
chart shows, `compute_way` over the two sentences."""

from __future__ import annotations

import numpy as np

from attnviz.core.ways import WAYS, get_way, way_mask
from attnviz.lessons.exercises.base import (
    Control,
    Exercise,
    PickCells,
    PickOne,
    Reveal,
    SetControls,
    Variant,
    Verdict,
    count,
    rng,
)

SOURCE_WORDS = ("le", "chat", "dort", "sur", "un", "tapis", "il", "voit", "la", "maison")
TARGET_WORDS = ("the", "cat", "sleeps", "on", "a", "mat", "he", "sees", "house", "dog")
PAD = "<pad>"
SIDES = ("source", "target")
NAMES = {  # each way in the lesson's words
    "bidirectional": "bi-directional self-attention (the encoder's)",
    "causal": "causal self-attention (the decoder's)",
    "cross": "cross attention (encoder–decoder)",
}


def _draw_sentences(gen: np.random.Generator, differ: bool = False) -> dict:
    """A source and a target sentence of 2 to 4 real words, each padded by 0 to 2 tokens (to
    the batch's length); with `differ`, of different lengths."""
    while True:
        sides = {}
        for side, words in zip(SIDES, (SOURCE_WORDS, TARGET_WORDS), strict=True):
            real = int(gen.integers(2, 5))
            sides[side] = (*map(str, gen.choice(words, size=real)),) + (PAD,) * int(
                gen.integers(0, 3)
            )
        if not differ or len(sides["source"]) != len(sides["target"]):
            return sides


def _real(tokens: tuple[str, ...]) -> np.ndarray:
    """bool `(L,)`, True = a real token (not padding)."""
    return np.array([t != PAD for t in tokens])


def _said(tokens: tuple[str, ...]) -> str:
    """`le` `chat` `<pad>`: a sentence as the learner reads it."""
    return " ".join(f"`{t}`" for t in tokens)


def _sentences_said(data) -> str:
    return (
        f"The source (the encoder's sentence) is {_said(data['source'])}; the target (the "
        f"decoder's) is {_said(data['target'])}"
    )


def _mask(data, way: str) -> np.ndarray:
    """The way's bool `(T, S)` mask over the two sentences, by `core.ways.way_mask`."""
    return way_mask(
        way,
        len(data["source"]),
        len(data["target"]),
        source_padding_mask=_real(data["source"]),
        target_padding_mask=_real(data["target"]),
    )[0]


def _weights(data, way: str) -> np.ndarray:
    """The way's weights `(T, S)` over the two sentences with random weights (`compute_way`,
    one head)."""
    from attnviz.inputs.text import encode_sentences
    from attnviz.transformer.way_attention import compute_way

    encoded = {
        side: encode_sentences(" ".join(t for t in data[side] if t != PAD), d_model=8, d_k=8,
                               pad_to=len(data[side]), seed=0)
        for side in SIDES
    }  # fmt: skip
    result = compute_way(
        way,
        encoded["source"].inputs,
        encoded["target"].inputs,
        num_heads=1,
        source_padding_mask=encoded["source"].padding_mask,
        target_padding_mask=encoded["target"].padding_mask,
        seed=0,
    )
    return np.asarray(result.weights[0, 0], dtype=np.float64)


def _axes(data, way: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The row labels (the queries' tokens) and column labels (the keys') of a way's grid."""
    chosen = get_way(way)
    rows = tuple(
        f"{chosen.queries_from} {i} ({t})" for i, t in enumerate(data[chosen.queries_from])
    )
    cols = tuple(f"{chosen.keys_from} {j} ({t})" for j, t in enumerate(data[chosen.keys_from]))
    return rows, cols


# ---- 8a: which cells are grey ----------------------------------------------------------------


def _make_grey(seed: int) -> Variant:
    gen = rng(seed, "8a")
    way = tuple(WAYS)[int(gen.integers(0, len(WAYS)))]
    while True:
        data = _draw_sentences(gen)
        if np.any(~_mask(data, way)):  # something goes grey (the keys' side has padding)
            break
    data["way"] = way
    rows, cols = _axes(data, way)
    return Variant(
        seed,
        f"{_sentences_said(data)}. In **{NAMES[way]}**, which cells of the "
        "grid go grey (masked)? Rows are the queries, columns the keys. Mark every one.",
        PickCells("Grey cells", rows, cols),
        data,
    )


def _grey(data, way: str | None = None) -> frozenset[tuple[int, int]]:
    hidden = ~_mask(data, way or data["way"])
    return frozenset((int(i), int(j)) for i, j in zip(*np.nonzero(hidden), strict=True))


def _read_cells(variant: Variant, answer) -> frozenset[tuple[int, int]]:
    from attnviz.lessons.exercises.masks import read_cells

    grid = variant.answer
    return read_cells(answer, len(grid.rows), len(grid.cols))


def _check_grey(variant: Variant, answer) -> Verdict:
    try:
        picked = _read_cells(variant, answer)
    except ValueError as error:
        return Verdict(False, str(error))
    grey = _grey(variant.data)
    if picked == grey:
        return Verdict(True, f"Right: {count(len(grey), 'cell')} go grey. {_why_grey(variant)}")
    return Verdict(False, f"{_grey_mistake(variant, picked, grey)} {_why_grey(variant)}")


def _grey_mistake(variant: Variant, picked: frozenset, grey: frozenset) -> str:
    """The usual mistakes, each found by computing the cells it would give."""
    data, way = variant.data, variant.data["way"]
    chosen = get_way(way)
    if not chosen.causal and picked == grey | _look_ahead(data, way):
        return (
            f"{NAMES[way].capitalize()} has no look-ahead mask: only the decoder's "
            "self-attention has one."
        )
    if chosen.causal and picked == grey | _diagonal(data, way):
        return "A token may see itself: the diagonal stays coloured."
    if chosen.causal and picked == _grey({**data, "target": _unpadded(data["target"])}, way):
        return "The padding keys go grey too, in every row."
    if picked == frozenset((j, i) for i, j in grey):
        return "That is the grid flipped: rows are the queries, columns the keys."
    other = "target" if chosen.keys_from == "source" else "source"
    if way == "cross" and picked == _padding_of(data, other, way):
        return "Those are the target's padding tokens; the keys are the source's."
    missed, extra = len(grey - picked), len(picked - grey)
    return (
        f"Not quite: {count(missed, 'grey cell')} missed and {count(extra, 'cell')} marked "
        "that stay visible."
    )


def _unpadded(tokens: tuple[str, ...]) -> tuple[str, ...]:
    return tuple("x" if t == PAD else t for t in tokens)


def _diagonal(data, way: str) -> frozenset[tuple[int, int]]:
    rows, cols = _axes(data, way)
    return frozenset((i, i) for i in range(min(len(rows), len(cols))))


def _look_ahead(data, way: str) -> frozenset[tuple[int, int]]:
    """The cells right of the diagonal of the way's grid: what a look-ahead mask would hide."""
    rows, cols = _axes(data, way)
    return frozenset((i, j) for i in range(len(rows)) for j in range(len(cols)) if j > i)


def _padding_of(data, side: str, way: str) -> frozenset[tuple[int, int]]:
    """The cells of `side`'s padding positions, read as columns of the way's grid."""
    rows, cols = _axes(data, way)
    padded = [j for j, t in enumerate(data[side]) if t == PAD and j < len(cols)]
    return frozenset((i, j) for i in range(len(rows)) for j in padded)


def _why_grey(variant: Variant) -> str:
    chosen, data = get_way(variant.data["way"]), variant.data
    pads = int(np.sum(~_real(data[chosen.keys_from])))
    said = [f"the keys come from the {chosen.keys_from}"]
    said.append(
        f"its {count(pads, 'padding token')} {'is' if pads == 1 else 'are'} hidden in every row"
        if pads
        else "it has no padding"
    )
    said.append(
        "the look-ahead mask hides every key after the query"
        if chosen.causal
        else "there is no look-ahead mask"
    )
    return f"In {NAMES[chosen.name]} {', '.join(said[:-1])}, and {said[-1]}."


def _reveal_grey(variant: Variant, answer) -> Reveal:
    data, way = variant.data, variant.data["way"]
    rows, cols = _axes(data, way)
    try:
        guessed = tuple(sorted(_read_cells(variant, answer)))
    except ValueError:
        guessed = ()
    return Reveal(
        f"{get_way(way).title}: the weights, grey where masked",
        _weights(data, way),
        rows,
        cols,
        allowed=_mask(data, way),
        guessed=guessed,
        right=tuple(sorted(_grey(data))),
    )


def _wrong_grey(variant: Variant) -> frozenset[tuple[int, int]]:
    """Look-ahead added to a way without it; the diagonal greyed in the causal way."""
    data, way = variant.data, variant.data["way"]
    if get_way(way).causal:
        return _grey(data) | _diagonal(data, way)
    return _grey(data) | _look_ahead(data, way)


GREY = Exercise(
    "8a",
    "predict",
    "Which cells go grey in this way?",
    _make_grey,
    _check_grey,
    lambda variant: _grey(variant.data),
    lambda variant: (
        _why_grey(variant) + " The chart shows the way's weights; grey cells get exactly 0."
    ),
    _reveal_grey,
    wrong=_wrong_grey,
)


# ---- 8b: which sentence gives the queries --------------------------------------------------

ROLES = {"queries": "the queries", "keys": "the keys and values"}
OPTIONS = ("the source sentence", "the target sentence")


def _make_role(seed: int) -> Variant:
    gen = rng(seed, "8b")
    data = _draw_sentences(gen, differ=True)
    data["way"] = tuple(WAYS)[int(gen.integers(0, len(WAYS)))]
    data["role"] = tuple(ROLES)[int(gen.integers(0, 2))]
    return Variant(
        seed,
        f"{_sentences_said(data)}. In **{NAMES[data['way']]}**, which "
        f"sentence gives **{ROLES[data['role']]}**?",
        PickOne(f"{ROLES[data['role']].capitalize()} come from", OPTIONS),
        data,
    )


def _role(variant: Variant) -> str:
    """The side that gives the role, found by computing: the way's weights `(T, S)` have a row
    per query and a column per key, and the two sentences have different lengths."""
    data = variant.data
    size = _weights(data, data["way"]).shape[0 if data["role"] == "queries" else 1]
    (side,) = [s for s in SIDES if len(data[s]) == size and _uses(data["way"], s)]
    return side


def _uses(way: str, side: str) -> bool:
    chosen = get_way(way)
    return side in (chosen.queries_from, chosen.keys_from)


def _check_role(variant: Variant, answer) -> Verdict:
    if not isinstance(answer, str) or answer not in OPTIONS:
        return Verdict(False, f"Pick one of: {', '.join(OPTIONS)}.")
    side = _role(variant)
    if answer == f"the {side} sentence":
        return Verdict(True, f"Right: {_role_said(variant)}")
    return Verdict(False, f"Not this one: {_role_said(variant)}")


def _role_said(variant: Variant) -> str:
    data = variant.data
    chosen, side = get_way(data["way"]), _role(variant)
    rows, cols = len(data[chosen.queries_from]), len(data[chosen.keys_from])
    return (
        f"in {NAMES[chosen.name]} the queries come from the {chosen.queries_from} and the "
        f"keys and values from the {chosen.keys_from}, so {ROLES[data['role']]} are the "
        f"{side}'s: the grid has {count(rows, 'row')} (queries) and {count(cols, 'column')} "
        "(keys)."
    )


def _explain_role(variant: Variant) -> str:
    return (
        f"{_role_said(variant)[0].upper()}{_role_said(variant)[1:]} The encoder's "
        "self-attention reads the source alone, the decoder's self-attention the target alone; "
        "only cross attention mixes them: the target asks, the source answers."
    )


def _reveal_role(variant: Variant, answer) -> Reveal:
    data = variant.data
    rows, cols = _axes(data, data["way"])
    return Reveal(
        f"{get_way(data['way']).title}: a row per query, a column per key",
        _weights(data, data["way"]),
        rows,
        cols,
        allowed=_mask(data, data["way"]),
    )


def _wrong_role(variant: Variant) -> str:
    side = _role(variant)
    return next(option for option in OPTIONS if side not in option)


ROLE = Exercise(
    "8b",
    "predict",
    "Which sentence asks?",
    _make_role,
    _check_role,
    lambda variant: f"the {_role(variant)} sentence",
    _explain_role,
    _reveal_role,
    wrong=_wrong_role,
)


# ---- 8c: choose the way --------------------------------------------------------------------


def _make_choose(seed: int) -> Variant:
    gen = rng(seed, "8c")
    data = _draw_sentences(gen)
    data = {side: tuple(t for t in data[side] if t != PAD) for side in SIDES}  # no padding
    way = tuple(WAYS)[int(gen.integers(0, len(WAYS)))]  # the way the task is drawn for
    chosen = get_way(way)
    t, s = len(data[chosen.queries_from]), len(data[chosen.keys_from])
    if way == "causal":
        i = int(gen.integers(0, t - 1))
        j = int(gen.integers(0, i + 1))
        task = ((i, j, True), (i, int(gen.integers(i + 1, s)), False))
    elif way == "bidirectional":
        i = int(gen.integers(0, t - 1))
        task = ((i, int(gen.integers(i + 1, s)), True),)
    else:
        task = ((int(gen.integers(0, t)), int(gen.integers(0, s)), True),)
    data["task"] = task
    data["sides"] = (chosen.queries_from, chosen.keys_from)
    return Variant(
        seed,
        f"{_sentences_said(data)}. Choose the way of attention in which {_task_said(data)}.",
        SetControls((Control("way", "Way of attention", tuple(WAYS), default=_other(way)),)),
        data,
    )


def _other(way: str) -> str:
    """The way after `way` (the controls start there: not solved before the learner acts)."""
    names = tuple(WAYS)
    return names[(names.index(way) + 1) % len(names)]


def _task_said(data) -> str:
    q_side, k_side = data["sides"]
    parts = []
    for i, j, sees in data["task"]:
        verb = "**may see**" if sees else "may **not** see"
        parts.append(
            f"the {q_side}'s token {i} (`{data[q_side][i]}`) {verb} the {k_side}'s token {j} "
            f"(`{data[k_side][j]}`)"
        )
    return ", but ".join(parts)


def _conditions(data, way: str) -> list[tuple[bool, str]]:
    """Each condition of the task under `way`: whether it holds, and why not."""
    chosen, (q_side, k_side) = get_way(way), data["sides"]
    if chosen.queries_from != q_side or chosen.keys_from != k_side:
        said = (
            f"in {NAMES[way]} the {chosen.queries_from}'s tokens ask (queries) and the "
            f"{chosen.keys_from}'s answer (keys); here the {q_side} asks the {k_side}"
        )
        return [(False, said)] * len(data["task"])
    mask = _mask(data, way)  # computed: (T, S)
    return [
        (
            bool(mask[i, j]) == sees,
            f"{NAMES[way]} {'hides' if sees else 'lets'} token {i} "
            f"{'from ' if sees else 'see '}token {j}",
        )
        for i, j, sees in data["task"]
    ]


def _check_choose(variant: Variant, answer) -> Verdict:
    way = answer.get("way") if isinstance(answer, dict) else None
    if not isinstance(way, str) or way not in WAYS:
        return Verdict(False, f"Choose a way of attention: one of {', '.join(WAYS)}.")
    conditions = _conditions(variant.data, way)
    held = sum(ok for ok, _ in conditions)
    if held == len(conditions):
        return Verdict(True, f"Solved: in {NAMES[way]}, {_task_said(variant.data)}.", 1.0)
    reasons = list(dict.fromkeys(why for ok, why in conditions if not ok))
    return Verdict(False, "Not yet: " + "; ".join(reasons) + ".", held / len(conditions))


def _solve_choose(variant: Variant) -> dict[str, str]:
    for way in WAYS:
        if all(ok for ok, _ in _conditions(variant.data, way)):
            return {"way": way}
    raise AssertionError("no way solves the task")  # every task is drawn from a way


def _explain_choose(variant: Variant) -> str:
    way = _solve_choose(variant)["way"]
    chosen = get_way(way)
    return (
        f"Only {NAMES[way]} has the {chosen.queries_from} ask and the {chosen.keys_from} "
        f"answer{', with a look-ahead mask' if chosen.causal else ''}. {chosen.where} "
        "Bi-directional and cross attention hide no real token; causal hides every later one."
    )


def _reveal_choose(variant: Variant, answer) -> Reveal | None:
    way = answer.get("way") if isinstance(answer, dict) else None
    if not isinstance(way, str) or way not in WAYS:
        return None
    data, chosen = variant.data, get_way(way)
    rows, cols = _axes(data, way)
    same_sides = (chosen.queries_from, chosen.keys_from) == data["sides"]
    return Reveal(
        f"{chosen.title}: the cells the task names (outlined)",
        _weights(data, way),
        rows,
        cols,
        allowed=_mask(data, way),
        right=tuple((i, j) for i, j, _ in data["task"]) if same_sides else (),
    )


def _wrong_choose(variant: Variant) -> dict[str, str]:
    right = _solve_choose(variant)["way"]
    return {"way": "causal" if right != "causal" else "bidirectional"}


CHOOSE = Exercise(
    "8c",
    "make",
    "Choose the way",
    _make_choose,
    _check_choose,
    _solve_choose,
    _explain_choose,
    _reveal_choose,
    wrong=_wrong_choose,
)

EXERCISES = (GREY, ROLE, CHOOSE)
