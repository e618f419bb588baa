"""Lesson 7's exercises: many heads look in different places.

The heads are the lesson's own: weights made so that each head looks in one place
(`transformer.made_heads`), run by `compute_multihead`; which head looks where is found by
measuring the weights it gives, never read from a stored answer.
"""

from __future__ import annotations

import numpy as np

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
    read_number,
    rng,
)

WORDS = ("the", "cat", "dog", "sat", "on", "a", "mat", "red", "saw", "bird", "big", "ran")
D_MODEL = 16  # the lesson's d_model
HEADS = 4  # the lesson's heads
MAIN_PLACES = ("the previous token", "itself", "the first token", "the next token")


def _draw_heads(exercise_id: str, seed: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A seeded sentence of 5 to 7 words and the place of each of the 4 heads (shuffled)."""
    gen = rng(seed, exercise_id)
    words = tuple(str(w) for w in gen.choice(WORDS, size=int(gen.integers(5, 8))))
    order = tuple(MAIN_PLACES[int(k)] for k in gen.permutation(len(MAIN_PLACES)))
    return words, order


def _result(words: tuple[str, ...], order: tuple[str, ...]):
    """The lesson's made heads over `words`, by `compute_multihead`: a `MultiHeadResult` with
    weights `(H, T, T)`."""
    from attnviz.inputs.text import encode_sentences
    from attnviz.transformer.made_heads import made_params
    from attnviz.transformer.multihead import compute_multihead

    x = encode_sentences(" ".join(words), d_model=D_MODEL, d_k=D_MODEL, seed=0).inputs[0]
    made = made_params(x, x, num_heads=HEADS, order=order)
    return compute_multihead(x, x, x, num_heads=HEADS, params=made.params, seed=0)


def _weights(variant: Variant) -> np.ndarray:
    """`(H, T, T)` every head's weights, float64."""
    result = _result(variant.data["words"], variant.data["order"])
    return np.asarray(result.weights, dtype=np.float64)


def _keys(words: tuple[str, ...]) -> tuple[str, ...]:
    """("key 0 (the)", "key 1 (cat)", ...): a key and its token."""
    return tuple(f"key {j} ({w})" for j, w in enumerate(words))


def _place(name: str):
    from attnviz.transformer.made_heads import PLACE_NAMES, PLACES

    return PLACES[PLACE_NAMES.index(name)]


def _sentence(words: tuple[str, ...]) -> str:
    return " ".join(f"`{w}`" for w in words)


# ---- 7a: where does a head look? -----------------------------------------------------------


def _make_where(seed: int) -> Variant:
    words, order = _draw_heads("7a", seed)
    gen = rng(seed, "7a-row")
    head = int(gen.integers(0, HEADS))
    n = len(words)
    low, high = {"the previous token": (1, n), "the first token": (1, n),
                 "the next token": (0, n - 1)}.get(order[head], (0, n))  # fmt: skip
    i = int(gen.integers(low, high))
    said = "; ".join(f"head {h} at {place}" for h, place in enumerate(order))
    return Variant(
        seed,
        f"The sentence is {_sentence(words)}. These {HEADS} heads were made so that each looks "
        f"in one place: {said}. In **head {head}**, which key gets the most weight in the row "
        f"of **query {i}** (`{words[i]}`)?",
        PickOne(f"Head {head}, query {i}: the most weight goes to", _keys(words)),
        {"words": words, "order": order, "head": head, "query": i},
    )


def _where(variant: Variant) -> int:
    """The key head `head` weighs most in row `query`, measured."""
    return int(np.argmax(_weights(variant)[variant.data["head"], variant.data["query"]]))


def _check_where(variant: Variant, answer) -> Verdict:
    options = _keys(variant.data["words"])
    if not isinstance(answer, str) or answer not in options:
        return Verdict(False, f"Pick one of the keys: {', '.join(options)}.")
    h, i, order = variant.data["head"], variant.data["query"], variant.data["order"]
    row, best = _weights(variant)[h, i], _where(variant)
    picked = options.index(answer)
    if picked == best:
        return Verdict(
            True,
            f"Right: head {h} puts **{row[best]:.2f}** of query {i}'s weight on key {best} "
            f"(`{variant.data['words'][best]}`), {order[h]}.",
        )
    n = len(variant.data["words"])
    others = [p for p in MAIN_PLACES if p != order[h] and _place(p).target(i, n) == picked]
    why = f"key {picked} is where a head that looks at {others[0]} would look; " if others else ""
    return Verdict(
        False,
        f"Not this one: {why}head {h} looks at {order[h]}, so query {i}'s weight goes to key "
        f"{best} ({row[best]:.2f}; key {picked} gets {row[picked]:.2f}).",
    )


def _wrong_where(variant: Variant) -> str:
    """A key another place would name (the usual mix-up: previous for next, itself)."""
    i, words = variant.data["query"], variant.data["words"]
    best = _where(variant)
    for name in MAIN_PLACES:
        j = _place(name).target(i, len(words))
        if 0 <= j < len(words) and j != best:
            return _keys(words)[j]
    return _keys(words)[(best + 1) % len(words)]


def _explain_where(variant: Variant) -> str:
    h, i, order = variant.data["head"], variant.data["query"], variant.data["order"]
    best = _where(variant)
    return (
        f"Row {i} of a head's grid holds query {i}'s weights over every key. Head {h} looks at "
        f"{order[h]}, so in row {i} its bright cell is key {best}: the outlined cell of the "
        "chart. Each head's W_Q makes its queries seek a different position; that is all that "
        "differs between the heads."
    )


def _reveal_where(variant: Variant, answer) -> Reveal:
    h, i, words = variant.data["head"], variant.data["query"], variant.data["words"]
    options = _keys(words)
    guessed = ((i, options.index(answer)),) if isinstance(answer, str) and answer in options else ()
    return Reveal(
        f"Head {h}'s weights ({variant.data['order'][h]}): your key and the brightest",
        _weights(variant)[h],
        labels("query", len(words)),
        options,
        guessed=guessed,
        right=((i, _where(variant)),),
    )


WHERE = Exercise(
    "7a",
    "predict",
    "Where does this head look?",
    _make_where,
    _check_where,
    lambda variant: _keys(variant.data["words"])[_where(variant)],
    _explain_where,
    _reveal_where,
    wrong=_wrong_where,
)


# ---- 7b: which head looks at the previous token? -------------------------------------------


def _make_which(seed: int) -> Variant:
    words, order = _draw_heads("7b", seed)
    gen = rng(seed, "7b-row")
    place = MAIN_PLACES[int(gen.choice([0, 2, 3]))]  # previous, first or next: not "itself"
    i = int(gen.integers(2, len(words) - 1))  # the four places are four different keys
    variant = Variant(
        seed,
        f"The sentence is {_sentence(words)}. The chart shows **row {i}** (query {i}, "
        f"`{words[i]}`) of each of {HEADS} heads. Which head looks at **{place}**, in every "
        "row?",
        PickOne(f"The head that looks at {place}", labels("head", HEADS)),
        {"words": words, "order": order, "query": i, "place": place},
    )
    row = _weights(variant)[:, i, :]  # (H, T): row i of each head
    shown = (("Row " + str(i) + " of each head", row, labels("head", HEADS), _keys(words)),)
    return Variant(seed, variant.prompt, variant.answer, variant.data, shown)


def _shares(variant: Variant) -> np.ndarray:
    """`(H,)` each head's average weight on the asked place, over the whole sentence."""
    from attnviz.transformer.made_heads import place_shares

    weights = _weights(variant)
    place = _place(variant.data["place"])
    mask = np.ones(weights.shape[1:], dtype=bool)
    return place_shares(weights, mask, [place] * HEADS)


def _which(variant: Variant) -> int:
    return int(np.argmax(_shares(variant)))


def _check_which(variant: Variant, answer) -> Verdict:
    options = labels("head", HEADS)
    if not isinstance(answer, str) or answer not in options:
        return Verdict(False, f"Pick one of {', '.join(options)}.")
    shares, best, place = _shares(variant), _which(variant), variant.data["place"]
    picked = options.index(answer)
    if picked == best:
        return Verdict(
            True,
            f"Right: head {best} puts **{shares[best]:.2f}** of each row's weight on {place}, "
            "on average over the sentence.",
        )
    return Verdict(
        False,
        f"Head {picked} puts only {shares[picked]:.2f} on {place}; it looks at "
        f"{variant.data['order'][picked]}. Head {best} puts {shares[best]:.2f} there. "
        f"{_where_is(variant)}",
    )


def _where_is(variant: Variant) -> str:
    i, n = variant.data["query"], len(variant.data["words"])
    j = _place(variant.data["place"]).target(i, n)
    return f"In row {i}, {variant.data['place']} is key {j}."


def _explain_which(variant: Variant) -> str:
    best, place = _which(variant), variant.data["place"]
    return (
        f"{_where_is(variant)} Only head {best}'s row {variant.data['query']} is bright there, "
        f"and in its full grid every row is bright at {place}: the outlined cells. A row alone "
        "could mislead; the whole grid shows what a head does."
    )


def _reveal_which(variant: Variant, answer) -> Reveal:
    options = labels("head", HEADS)
    h = options.index(answer) if isinstance(answer, str) and answer in options else _which(variant)
    weights = _weights(variant)[h]  # (T, T)
    n, place = len(variant.data["words"]), _place(variant.data["place"])
    right = tuple((i, place.target(i, n)) for i in range(n) if 0 <= place.target(i, n) < n)
    return Reveal(
        f"Head {h}'s weights: its brightest cell in each row, and {variant.data['place']} "
        "(outlined)",
        weights,
        labels("query", n),
        _keys(variant.data["words"]),
        guessed=tuple((i, int(np.argmax(weights[i]))) for i in range(n)),
        right=right,
    )


WHICH = Exercise(
    "7b",
    "predict",
    "Which head looks there?",
    _make_which,
    _check_which,
    lambda variant: f"head {_which(variant)}",
    _explain_which,
    _reveal_which,
    wrong=lambda variant: f"head {(_which(variant) + 1) % HEADS}",
)


# ---- 7c: how wide is a head? ---------------------------------------------------------------

WIDTHS = (12, 16, 24, 32, 48, 64)  # d_model to choose from


def _make_width(seed: int) -> Variant:
    gen = rng(seed, "7c")
    while True:
        d_model = int(gen.choice(WIDTHS))
        heads = int(gen.choice([h for h in range(2, 9) if d_model % h == 0]))
        if d_model // heads != heads:  # typing h by mistake must not be right
            break
    what = "concat" if gen.integers(0, 3) == 0 else "head"
    asked = {
        "head": "How many features does **each head's output** have?",
        "concat": "How many features does the **concatenation of all the heads' outputs** have "
        "(what W_O multiplies)?",
    }[what]
    return Variant(
        seed,
        f"A multi-head block has d_model = **{d_model}** and **{count(heads, 'head')}**; each "
        f"head has the usual size (the Transformer's: the model's width shared out among the "
        f"heads). {asked}",
        TypeNumber("Features", tolerance=0),
        {"d_model": d_model, "heads": heads, "what": what},
    )


def _result_of(variant: Variant):
    """The block run by `compute_multihead` on 3 seeded tokens of width d_model."""
    from attnviz.transformer.multihead import compute_multihead

    x = rng(variant.seed, "7c-x").standard_normal((3, variant.data["d_model"]))
    return compute_multihead(x, x, x, num_heads=variant.data["heads"], seed=variant.seed)


def _width(variant: Variant) -> int:
    result = _result_of(variant)
    part = result.head_outputs if variant.data["what"] == "head" else result.concat
    return int(part.shape[-1])


def _check_width(variant: Variant, answer) -> Verdict:
    try:
        typed = read_number(answer)
    except ValueError as error:
        return Verdict(False, str(error))
    d, h, right = variant.data["d_model"], variant.data["heads"], _width(variant)
    if typed == right:
        how = f"{d} / {h} = {right}" if variant.data["what"] == "head" else f"{h} × {d // h} = {d}"
        return Verdict(True, f"Right: **{right}** features ({how}).")
    mistakes = {
        d: f"That is d_model: each head gets only d_model / h = {d // h} features.",
        h * d: f"That is h × d_model: each head has d_model / h = {d // h} features, not "
        f"{d}, so side by side they make {d} again.",
        h: "That is the number of heads, not their width.",
        d // h: f"That is one head's width; the {count(h, 'head')} side by side make {h} × "
        f"{d // h}.",
    }
    return Verdict(False, mistakes.get(typed, f"Not {number_text(typed)}.") + _hint(variant))


def _hint(variant: Variant) -> str:
    if variant.data["what"] == "head":
        return " Share d_model out among the heads."
    return " Count one head's features, then put the heads side by side."


def _explain_width(variant: Variant) -> str:
    d, h = variant.data["d_model"], variant.data["heads"]
    return (
        f"Each head projects the {d} features down to d_model / h = {d // h} (its W_Q, W_K, "
        f"W_V are {d} × {d // h}), so its output has {d // h} features. Concatenated, the "
        f"{count(h, 'head')} give {h} × {d // h} = {d} columns: the chart, one block per head "
        "(head 0's block outlined). W_O then mixes them back into d_model."
    )


def _reveal_width(variant: Variant, answer) -> Reveal:
    result = _result_of(variant)
    d, h = variant.data["d_model"], variant.data["heads"]
    concat = np.asarray(result.concat, dtype=np.float64)  # (3, H·Dv)
    return Reveal(
        f"Concatenated head outputs (3 tokens × {h}·{d // h})",
        concat,
        labels("token", 3),
        tuple(f"head {c // (d // h)} · {c % (d // h)}" for c in range(concat.shape[1])),
        kind="scores",
        right=tuple((r, c) for r in range(3) for c in range(d // h)),
    )


WIDTH = Exercise(
    "7c",
    "compute",
    "How wide is a head?",
    _make_width,
    _check_width,
    lambda variant: str(_width(variant)),
    _explain_width,
    _reveal_width,
    wrong=lambda variant: str(variant.data["d_model"] * variant.data["heads"]),
)

EXERCISES = (WHERE, WHICH, WIDTH)
