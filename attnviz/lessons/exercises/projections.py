"""Lesson 6's exercises: Q, K and V are made from the tokens, x = embedding + positional
encoding, then Q = x W_Q.

Shape letters: T tokens, D model features (d_model), Dk query features. The sentences come
through `inputs.text.encode_sentences`, the sentences page's own maths; a projection by hand is
checked with `transformer.multihead.compute_multihead`'s queries (one head, W_Q given).
"""

from __future__ import annotations

import numpy as np

from attnviz.core.limits import MAX_SEED
from attnviz.inputs.text import encode_sentences
from attnviz.lessons.exercises.base import (
    EditMatrices,
    Exercise,
    PickOne,
    Reveal,
    TypeNumber,
    Variant,
    Verdict,
    labels,
    matrix_text,
    number_text,
    read_matrix,
    rng,
    typed_verdict,
)

D_MODEL, D_K = 8, 4  # 6a: small enough to read the chart
SENTENCES = (
    "the cat saw the dog",
    "a dog chased a cat",
    "I think I can",
    "she said she would come",
    "red fish blue fish",
    "we saw what we wanted",
    "one step then one more",
    "the end is the start",
)
SAME = ("Identical", "Different")


# ---- 6a: do two equal words get the same query? --------------------------------------------


def _make_twins(seed: int) -> Variant:
    gen = rng(seed, "6a")
    sentence = SENTENCES[int(gen.integers(0, len(SENTENCES)))]
    positional = bool(gen.integers(0, 2))
    tokens = sentence.split()
    word = next(t for t in tokens if tokens.count(t) == 2)
    first = tokens.index(word)
    pair = (first, tokens.index(word, first + 1))
    return Variant(
        seed,
        f"The sentence `{sentence}` becomes token embeddings (d_model = {D_MODEL}), the "
        f"positional encoding is **{'on' if positional else 'off'}**, and Q = x W_Q. Are the "
        f"two rows of Q for `{word}` (tokens {pair[0]} and {pair[1]}) identical?",
        PickOne(f"The two `{word}` rows of Q", SAME),
        {
            "sentence": sentence,
            "positional": positional,
            "pair": pair,
            "word": word,
            "encoding_seed": int(gen.integers(0, MAX_SEED + 1)),  # embeddings and W_Q
        },
    )


def _encoded(variant: Variant):
    data = variant.data
    return encode_sentences(
        data["sentence"],
        d_model=D_MODEL,
        d_k=D_K,
        seed=data["encoding_seed"],
        positional=data["positional"],
    )


def _twin_gap(variant: Variant) -> float:
    """The largest difference between the two rows of Q."""
    q = _encoded(variant).query[0]  # (T, Dk)
    a, b = variant.data["pair"]
    return float(np.max(np.abs(q[a] - q[b])))


def _twins_same(variant: Variant) -> bool:
    return _twin_gap(variant) < 1e-9


def _check_twins(variant: Variant, answer) -> Verdict:
    if answer not in SAME:
        return Verdict(False, f"Pick one of: {', '.join(SAME)}.")
    same, (a, b) = _twins_same(variant), variant.data["pair"]
    said = (
        f"rows {a} and {b} of Q are identical"
        if same
        else f"rows {a} and {b} of Q differ by up to {_twin_gap(variant):.2f}"
    )
    if (answer == SAME[0]) == same:
        return Verdict(True, f"Right: {said}. {_why_twins(variant)}")
    return Verdict(False, f"Not this time: {said}. {_why_twins(variant)}")


def _why_twins(variant: Variant) -> str:
    word = variant.data["word"]
    if variant.data["positional"]:
        return (
            f"Both `{word}` tokens have the same embedding, but each gets its own position's "
            "encoding added, so x differs, and so does x W_Q."
        )
    return (
        f"Both `{word}` tokens have the same embedding and nothing else is added, so x is the "
        "same row twice, and x W_Q multiplies the same row by the same matrix."
    )


def _explain_twins(variant: Variant) -> str:
    return (
        f"{_why_twins(variant)} Without positions, attention cannot tell the two apart: they "
        "score every key alike. The chart shows Q; the two rows are outlined."
    )


def _reveal_twins(variant: Variant, answer) -> Reveal:
    encoded = _encoded(variant)
    tokens = encoded.sentence_tokens(0)
    return Reveal(
        f"Q with the positional encoding {'on' if variant.data['positional'] else 'off'}",
        np.asarray(encoded.query[0], dtype=np.float64),
        tuple(f"{n} {token}" for n, token in enumerate(tokens)),
        labels("feature", D_K),
        kind="scores",
        right=tuple((row, c) for row in variant.data["pair"] for c in range(D_K)),
    )


TWINS = Exercise(
    "6a",
    "predict",
    "Two equal words, two queries?",
    _make_twins,
    _check_twins,
    lambda variant: SAME[0] if _twins_same(variant) else SAME[1],
    _explain_twins,
    _reveal_twins,
    wrong=lambda variant: SAME[1] if _twins_same(variant) else SAME[0],
)


# ---- 6b: compute one cell of Q -------------------------------------------------------------

TOKENS, FEATURES, COLUMNS = 3, 3, 2
TOLERANCE = 0.01


def project(x: np.ndarray, w_q: np.ndarray) -> np.ndarray:
    """Q = x W_Q `(T, Dk)`, as multi-head attention projects it (one head, W_Q given)."""
    from attnviz.transformer.multihead import compute_multihead

    result = compute_multihead(x, x, x, num_heads=1, d_k=w_q.shape[1], params={"W_Q": w_q[None]})
    return np.asarray(result.query_heads[0], dtype=np.float64)  # (1, T, Dk) -> (T, Dk)


def _make_cell(seed: int) -> Variant:
    gen = rng(seed, "6b")
    while True:
        e = gen.integers(-2, 3, size=(TOKENS, FEATURES)).astype(np.float64)
        p = gen.integers(-1, 2, size=(TOKENS, FEATURES)).astype(np.float64)
        w = gen.integers(-1, 3, size=(FEATURES, COLUMNS)).astype(np.float64)
        i, c = int(gen.integers(0, TOKENS)), int(gen.integers(0, COLUMNS))
        right, embedding_only = (e[i] + p[i]) @ w[:, c], e[i] @ w[:, c]
        if abs(right - embedding_only) >= 1 and abs(right - p[i] @ w[:, c]) >= 1:
            break
    features = labels("feature", FEATURES)
    return Variant(
        seed,
        f"Each token's input is x = embedding + position (whole numbers here, so it can be "
        f"done by hand; real positional encodings are sines and cosines). Work out **Q[{i}, "
        f"{c}]**, the entry of Q = x W_Q in row {i} (token {i}) and column {c}.",
        TypeNumber(f"Q[{i}, {c}]", tolerance=TOLERANCE),
        {"e": e, "p": p, "w": w, "cell": (i, c)},
        (
            ("embeddings", e, labels("token", TOKENS), features),
            ("positions", p, labels("token", TOKENS), features),
            ("W_Q", w, features, labels("column", COLUMNS)),
        ),
    )


def _queries(variant: Variant, with_positions: bool = True) -> np.ndarray:
    data = variant.data
    x = data["e"] + data["p"] if with_positions else data["e"]  # (T, D)
    return project(x, data["w"])


def _check_cell(variant: Variant, answer) -> Verdict:
    i, c = variant.data["cell"]
    right = _queries(variant)[i, c]
    return typed_verdict(
        answer, right, TOLERANCE,
        lambda: f"Right: x{i} · column {c} of W_Q = {_products(variant)} = "
        f"**{number_text(right)}**.",
        lambda typed: _cell_mistake(variant, typed),
    )  # fmt: skip


def _x_row(variant: Variant) -> np.ndarray:
    i, _ = variant.data["cell"]
    return variant.data["e"][i] + variant.data["p"][i]  # (D,)


def _products(variant: Variant) -> str:
    _, c = variant.data["cell"]
    pairs = zip(_x_row(variant), variant.data["w"][:, c], strict=True)
    return " + ".join(f"{_factor(a)}·{_factor(b)}" for a, b in pairs)


def _factor(x: float) -> str:
    """A factor of a product as written by hand: "2", "(−1)"."""
    return f"({number_text(x)})" if x < 0 else number_text(x)


def _cell_mistake(variant: Variant, typed: float) -> str:
    """The step that went wrong, found by computing what each usual mistake gives."""
    i, c = variant.data["cell"]
    x = ", ".join(number_text(v) for v in _x_row(variant))
    if abs(typed - _queries(variant, with_positions=False)[i, c]) <= TOLERANCE:
        return (
            f"You used the embedding alone: add token {i}'s position first, x{i} = ({x}), "
            f"then multiply by column {c} of W_Q."
        )
    p_only = project(variant.data["p"], variant.data["w"])[i, c]
    if abs(typed - p_only) <= TOLERANCE:
        return f"You used the position alone: x{i} is embedding + position = ({x})."
    queries = _queries(variant)
    for a, b in np.ndindex(queries.shape):
        if (a, b) != (i, c) and abs(typed - queries[a, b]) <= TOLERANCE:
            return f"That is Q[{a}, {b}]. Take row {i} of x and column {c} of W_Q."
    return (
        f"Not quite. x{i} = embedding + position = ({x}); multiply it by column {c} of W_Q "
        f"entry by entry and add: {_products(variant)}."
    )


def _explain_cell(variant: Variant) -> str:
    i, c = variant.data["cell"]
    return (
        f"Row {i} of Q is token {i}'s input x{i} (its embedding plus its position) times W_Q; "
        f"entry {c} is x{i}'s dot product with column {c} of W_Q: {_products(variant)} = "
        f"{number_text(_queries(variant)[i, c])}. The chart shows all of Q."
    )


def _reveal_cell(variant: Variant, answer) -> Reveal:
    return Reveal(
        "Q = (embedding + position) W_Q",
        _queries(variant),
        labels("token", TOKENS),
        labels("column", COLUMNS),
        kind="scores",
        right=(variant.data["cell"],),
    )


Q_CELL = Exercise(
    "6b",
    "compute",
    "One entry of Q by hand",
    _make_cell,
    _check_cell,
    lambda variant: number_text(_queries(variant)[variant.data["cell"]]),
    _explain_cell,
    _reveal_cell,
    wrong=lambda variant: number_text(
        _queries(variant, with_positions=False)[variant.data["cell"]]
    ),
)


# ---- 6c: make two different tokens look alike ---------------------------------------------

ALIKE = 0.01  # 6c: the two queries may differ by at most this
APART = 0.5  # 6c: the third query must differ from theirs by at least this somewhere


def _make_alike(seed: int) -> Variant:
    gen = rng(seed, "6c")
    while True:
        x = gen.integers(-2, 3, size=(TOKENS, FEATURES)).astype(np.float64)
        w = gen.integers(-1, 3, size=(FEATURES, COLUMNS)).astype(np.float64)
        if np.linalg.matrix_rank(x[1:] - x[0]) == 2 and _gaps(x @ w)[0] >= 1:
            break
    features = labels("feature", FEATURES)
    return Variant(
        seed,
        f"Tokens 0 and 1 have different inputs x (embedding + position). Edit W_Q "
        f"({FEATURES} rows of {COLUMNS} numbers) so that their queries become **identical** "
        f"(within {ALIKE}), while token 2's query stays different from theirs (by at least "
        f"{APART} somewhere).",
        EditMatrices((("W_Q", matrix_text(w)),)),
        {"x": x},
        (("x", x, labels("token", TOKENS), features),),
    )


def _gaps(q: np.ndarray) -> tuple[float, float]:
    """How far apart queries 0 and 1 are, and how far query 2 is from query 0 (largest
    difference of an entry)."""
    return float(np.max(np.abs(q[0] - q[1]))), float(np.max(np.abs(q[2] - q[0])))


def _read_w(answer) -> np.ndarray:
    text = answer.get("W_Q") if isinstance(answer, dict) else None
    return read_matrix(text, "W_Q", (FEATURES, COLUMNS))


def _check_alike(variant: Variant, answer) -> Verdict:
    try:
        q = project(variant.data["x"], _read_w(answer))
    except ValueError as error:
        return Verdict(False, str(error), 0.0)
    same, apart = _gaps(q)
    if same <= ALIKE and apart >= APART:
        return Verdict(
            True,
            f"Solved: tokens 0 and 1 both get the query ({_row(q[0])}); "
            f"token 2 gets ({_row(q[2])}).",
            1.0,
        )
    if same > ALIKE:
        diff = _row(variant.data["x"][0] - variant.data["x"][1])
        return Verdict(
            False,
            f"Tokens 0 and 1 get the queries ({_row(q[0])}) and ({_row(q[1])}). The "
            f"difference of their inputs, x0 − x1 = ({diff}), must map to 0: every column of "
            "W_Q must be at right angles to it (their dot product 0).",
            float(max(0.0, 0.9 - same / (same + 1))),
        )
    return Verdict(
        False,
        f"Tokens 0 and 1 now share the query ({_row(q[0])}), but token 2's is "
        f"({_row(q[2])}), too close to tell apart. Keep W_Q from mapping everything to the same "
        "point: some column must not be at right angles to x2 − x0.",
        0.9,
    )


def _row(values: np.ndarray) -> str:
    return ", ".join(number_text(v) for v in values)


def _solve_alike(variant: Variant) -> dict[str, str]:
    """Columns at right angles to x0 − x1: cross products with the unit vectors, whole
    numbers, choosing a pair that keeps token 2 apart."""
    x = variant.data["x"]
    diff = x[0] - x[1]
    columns = [np.cross(diff, unit) for unit in np.eye(FEATURES)]
    pairs = [(a, b) for a in range(FEATURES) for b in range(FEATURES)]
    for a, b in sorted(pairs, key=lambda pair: pair[0] == pair[1]):  # two different first
        w = np.stack([columns[a], columns[b]], axis=1)  # (D, 2)
        if _gaps(x @ w)[1] >= APART:
            return {"W_Q": matrix_text(w)}
    raise ValueError("No whole-number W_Q found (the inputs of tokens 0, 1 and 2 are in line).")


def _explain_alike(variant: Variant) -> str:
    diff = _row(variant.data["x"][0] - variant.data["x"][1])
    return (
        f"Q = x W_Q is linear, so tokens 0 and 1 get the same query exactly when (x0 − x1) W_Q "
        f"= 0: each column of W_Q at right angles to x0 − x1 = ({diff}). Whatever W_Q maps to "
        "0, attention can no longer see, which is why W_Q is learned. The chart shows Q."
    )


def _reveal_alike(variant: Variant, answer) -> Reveal | None:
    try:
        q = project(variant.data["x"], _read_w(answer))
    except ValueError:
        return None
    return Reveal(
        "Your Q = x W_Q",
        q,
        labels("token", TOKENS),
        labels("column", COLUMNS),
        kind="scores",
        right=tuple((row, c) for row in (0, 1) for c in range(COLUMNS)),
    )


ALIKE_QUERIES = Exercise(
    "6c",
    "make",
    "Two tokens, one query",
    _make_alike,
    _check_alike,
    _solve_alike,
    _explain_alike,
    _reveal_alike,
    wrong=lambda variant: {"W_Q": matrix_text(np.zeros((FEATURES, COLUMNS)))},
)

EXERCISES = (TWINS, Q_CELL, ALIKE_QUERIES)
