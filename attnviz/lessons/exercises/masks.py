"""Lesson 4's exercises: masks decide which keys a query may see (causal, window, padding), and
what a masked logit becomes (−∞ or −1e9) decides what a query that sees nothing gets.

Shape letters: T queries, S keys. Masks come from attnviz's own rules (`core.masks.build_mask`),
weights from `compute_attention`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable

import numpy as np

from attnviz.core.masks import build_mask, check_padding_mask
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
    labels,
    matrix_text,
    rng,
)
from attnviz.lessons.exercises.maths import attend

TOKENS = 4  # queries and keys (4a, 4b, 4d)
FEATURES = 2


def mask_of(
    t: int, real: tuple[bool, ...], causal: bool = False, window: int | None = None
) -> np.ndarray:
    """The `(T, S)` mask, True = visible, by attnviz's rules: causal, window, then padding
    (`real`: one entry per key, True = a real token)."""
    padding = check_padding_mask(np.asarray(real, dtype=bool), None, len(real))  # (1, S)
    return build_mask(1, t, len(real), causal=causal, window=window, key_padding_mask=padding)[0]


def _end_padding(s: int, padded: int) -> tuple[bool, ...]:
    """The last `padded` of `s` keys are padding."""
    return tuple(j < s - padded for j in range(s))


def _start_padding(s: int, padded: int) -> tuple[bool, ...]:
    """The first `padded` of `s` keys are padding."""
    return tuple(j >= padded for j in range(s))


def _keys_text(keys: Iterable[int]) -> str:
    """ "no key", "key 2", "keys 1 and 2", "keys 0, 1 and 3"."""
    keys = sorted(keys)
    if not keys:
        return "no key"
    if len(keys) == 1:
        return f"key {keys[0]}"
    return f"keys {', '.join(str(j) for j in keys[:-1])} and {keys[-1]}"


def _padded_text(keys: Iterable[int]) -> str:
    """ "key 3 is", "keys 2 and 3 are"."""
    keys = list(keys)
    return f"{_keys_text(keys)} {'is' if len(keys) == 1 else 'are'}"


def _cells_text(cells: Iterable[tuple[int, int]]) -> str:
    return ", ".join(f"query {i} · key {j}" for i, j in sorted(cells))


def _even_weights(
    t: int, real: tuple[bool, ...], causal: bool = False, window: int | None = None
) -> np.ndarray:
    """The weights `(T, S)` of equal scores under these rules, by `compute_attention`: each
    query spreads its weight evenly over the keys it may see (a row that sees none: zeros)."""
    zeros = np.zeros((t, 1)), np.zeros((len(real), 1)), np.zeros((len(real), 1))
    result = attend(*zeros, causal=causal, window=window, key_padding_mask=np.asarray(real))
    return np.asarray(result.weights, dtype=np.float64)


# ---- 4a: which cells go grey ---------------------------------------------------------------


def _make_grey(seed: int) -> Variant:
    gen = rng(seed, "4a")
    while True:
        causal = bool(gen.integers(0, 2))
        window = [None, 1, 2][int(gen.integers(0, 3))]
        padded = int(gen.integers(1, 3))
        grey = ~mask_of(TOKENS, _end_padding(TOKENS, padded), causal, window)
        if (causal or window is not None) and grey.sum() <= 11:
            break
    rules = ["The mask is **causal**" if causal else "The mask is **not** causal"]
    if window is not None:
        rules.append(f"a **window of {window}**: a query sees keys at most {window} away")
    rules.append(f"{_padded_text(range(TOKENS - padded, TOKENS))} **padding**")
    return Variant(
        seed,
        f"{TOKENS} queries and {TOKENS} keys. {'; '.join(rules)}. Which cells go grey "
        "(masked)? Mark every one.",
        PickCells("Grey cells", labels("query", TOKENS), labels("key", TOKENS)),
        {"causal": causal, "window": window, "real": _end_padding(TOKENS, padded)},
    )


def _grey_mask(variant: Variant, **only) -> np.ndarray:
    """The variant's mask `(T, S)`; with `only`, that rule alone (causal, window or padding)."""
    data = variant.data
    if not only:
        return mask_of(TOKENS, data["real"], data["causal"], data["window"])
    real = data["real"] if only.get("padding") else (True,) * TOKENS
    return mask_of(
        TOKENS,
        real,
        bool(only.get("causal") and data["causal"]),
        data["window"] if only.get("window") else None,
    )


def _cells(hidden: np.ndarray) -> frozenset[tuple[int, int]]:
    """The True cells of `hidden` `(T, S)` as (row, column) pairs."""
    return frozenset((int(i), int(j)) for i, j in zip(*np.nonzero(hidden), strict=True))


def _grey(variant: Variant) -> frozenset[tuple[int, int]]:
    return _cells(~_grey_mask(variant))


def read_cells(answer, rows: int, cols: int) -> frozenset[tuple[int, int]]:
    """The cells picked, as (row, column) pairs inside a `rows` × `cols` grid, or a
    `ValueError` that says what is expected."""
    expected = (
        f"Pick cells of the {rows} × {cols} grid: (query, key) pairs, queries 0 to {rows - 1} "
        f"and keys 0 to {cols - 1}."
    )
    if not isinstance(answer, set | frozenset | list | tuple):
        raise ValueError(expected)
    cells = set()
    for cell in answer:
        if not isinstance(cell, tuple | list) or len(cell) != 2:
            raise ValueError(expected)
        i, j = cell
        if not all(isinstance(x, int | np.integer) and not isinstance(x, bool) for x in cell):
            raise ValueError(expected)
        if not (0 <= i < rows and 0 <= j < cols):
            raise ValueError(expected)
        cells.add((int(i), int(j)))
    return frozenset(cells)


def _check_grey(variant: Variant, answer) -> Verdict:
    try:
        picked = read_cells(answer, TOKENS, TOKENS)
    except ValueError as error:
        return Verdict(False, str(error))
    grey = _grey(variant)
    if picked == grey:
        return Verdict(
            True, f"Right: these {count(len(grey), 'cell')} are masked. " + _rules_said(variant)
        )
    if picked == frozenset((j, i) for i, j in grey):
        return Verdict(
            False,
            "That is the mask flipped over the diagonal: the rows are the queries, the columns "
            "the keys. A causal mask hides the keys *after* a query (right of the diagonal), and "
            "padding hides whole key columns.",
        )
    return Verdict(False, _grey_mistake(variant, picked, grey))


def _grey_mistake(variant: Variant, picked: frozenset, grey: frozenset) -> str:
    """What the picked cells get wrong, naming the rule behind each missed cell."""
    said = []
    missed = grey - picked
    for rule, name in (
        ("padding", "padding (whole key columns)"),
        ("causal", "the causal mask"),
        ("window", "the window"),
    ):
        hidden = {c for c in missed if not _grey_mask(variant, **{rule: True})[c]}
        if hidden:
            said.append(f"{name} also hides {_cells_text(hidden)}")
    extra = picked - grey
    if extra:
        said.append(f"{_cells_text(extra)} {'stays' if len(extra) == 1 else 'stay'} visible")
    return f"Not quite: {'; '.join(said)}. " + _rules_said(variant)


def _rules_said(variant: Variant) -> str:
    data = variant.data
    padded = [j for j, real in enumerate(data["real"]) if not real]
    said = [
        f"{_keys_text(padded)} {'is' if len(padded) == 1 else 'are'} padding, hidden from "
        "every query"
    ]
    if data["causal"]:
        said.append("causal hides every key after the query (right of the diagonal)")
    if data["window"] is not None:
        said.append(f"the window hides keys more than {data['window']} away from the query")
    text = "; ".join(said)
    return text[0].upper() + text[1:] + "."


def _explain_grey(variant: Variant) -> str:
    return (
        f"A cell goes grey when any rule hides it: the rules are ANDed. {_rules_said(variant)} "
        "The chart shows each query's weight spread evenly over the keys it may still see."
    )


def _reveal_grey(variant: Variant, answer) -> Reveal:
    mask = _grey_mask(variant)
    try:
        guessed = tuple(sorted(read_cells(answer, TOKENS, TOKENS)))
    except ValueError:
        guessed = ()
    return Reveal(
        "The mask (grey = hidden), with equal scores",
        _even_weights(TOKENS, variant.data["real"], variant.data["causal"], variant.data["window"]),
        labels("query", TOKENS),
        labels("key", TOKENS),
        allowed=mask,
        guessed=guessed,
        right=tuple(sorted(_grey(variant))),
    )


def _forgot_padding(variant: Variant) -> frozenset[tuple[int, int]]:
    """The grey cells without the padding: the usual mistake."""
    return _cells(~_grey_mask(variant, causal=True, window=True))


GREY = Exercise(
    "4a",
    "predict",
    "Which cells go grey?",
    _make_grey,
    _check_grey,
    _grey,
    _explain_grey,
    _reveal_grey,
    wrong=_forgot_padding,
)


# ---- 4b: does a fully masked row still sum to 1? -------------------------------------------

SUMS = ("It adds up to 1", "It adds up to 0", "It is NaN (not a number)")


def _make_sum(seed: int) -> Variant:
    gen = rng(seed, "4b")
    padded = int(gen.integers(1, 3))
    row = int(gen.integers(0, padded))
    mask_value = ("-inf", "-1e9")[int(gen.integers(0, 2))]
    q = gen.integers(-2, 3, size=(TOKENS, FEATURES)).astype(np.float64)
    k = gen.integers(-2, 3, size=(TOKENS, FEATURES)).astype(np.float64)
    shown_value = "−∞" if mask_value == "-inf" else "−1e9"
    return Variant(
        seed,
        f"The mask is causal and {_padded_text(range(padded))} padding, so **query {row}** may "
        "see no key at all. "
        f"Masked logits are set to **{shown_value}**. After softmax, what does query {row}'s "
        "row of weights add up to?",
        PickOne(f"Query {row}'s weights", SUMS),
        {
            "q": q,
            "k": k,
            "real": _start_padding(TOKENS, padded),
            "row": row,
            "mask_value": mask_value,
        },
        (
            ("Q", q, labels("query", TOKENS), labels("feature", FEATURES)),
            ("K", k, labels("key", TOKENS), labels("feature", FEATURES)),
        ),
    )


def _sum_result(variant: Variant):
    data = variant.data
    return attend(
        data["q"],
        data["k"],
        data["k"],
        causal=True,
        mask_value=data["mask_value"],
        key_padding_mask=np.asarray(data["real"]),
    )


def _row_weights(variant: Variant) -> np.ndarray:
    """The asked query's weights `(S,)`, by `compute_attention`."""
    return np.asarray(_sum_result(variant).weights, dtype=np.float64)[variant.data["row"]]


def _row_sum(variant: Variant, weights: np.ndarray | None = None) -> int:
    """The option that holds: an index into `SUMS`, from the row's sum."""
    total = float(np.sum(_row_weights(variant) if weights is None else weights))
    if not np.isfinite(total):
        return 2
    return 0 if abs(total - 1) < 1e-4 else 1


def _check_sum(variant: Variant, answer) -> Verdict:
    if answer not in SUMS:
        return Verdict(False, f"Pick one of: {'; '.join(SUMS)}.")
    weights = _row_weights(variant)
    right = _row_sum(variant, weights)
    said = f"Query {variant.data['row']}'s weights are {matrix_text(weights[None, :])}."
    if SUMS.index(answer) == right:
        return Verdict(True, f"Right. {said} {_why_sum(variant)}")
    return Verdict(False, f"Not this time. {said} {_why_sum(variant)}")


def _why_sum(variant: Variant) -> str:
    if variant.data["mask_value"] == "-inf":
        return (
            "Every logit is −∞, so every e^logit is 0 and softmax would divide 0 by 0 (NaN). "
            "attnviz gives such a row zeros instead, so the query's output is 0."
        )
    return (
        "Every logit is its score − 1e9, which float32 rounds to the same −1e9, so softmax "
        "spreads the weight evenly: the row adds up to 1, all of it on keys the query must "
        "never see."
    )


def _explain_sum(variant: Variant) -> str:
    return (
        f"{_why_sum(variant)} Rows that still see a key add up to 1. The chart shows the "
        f"weights; query {variant.data['row']}'s row is outlined."
    )


def _reveal_sum(variant: Variant, answer) -> Reveal:
    result, row = _sum_result(variant), variant.data["row"]
    return Reveal(
        f"Weights, masked logits {variant.data['mask_value']}",
        np.asarray(result.weights, dtype=np.float64),
        labels("query", TOKENS),
        labels("key", TOKENS),
        allowed=np.asarray(result.mask),
        right=tuple((row, j) for j in range(TOKENS)),
    )


ROW_SUM = Exercise(
    "4b",
    "predict",
    "Does a fully masked row sum to 1?",
    _make_sum,
    _check_sum,
    lambda variant: SUMS[_row_sum(variant)],
    _explain_sum,
    _reveal_sum,
    wrong=lambda variant: SUMS[1 - _row_sum(variant)],  # "rows always sum to 1" or the reverse
)


# ---- 4c: make only some keys visible -------------------------------------------------------

SPAN = 5  # 4c: queries and keys
ON_OFF = ("off", "on")
WINDOWS = ("off", "0", "1", "2", "3")
SPAN_CONTROLS = SetControls(
    (
        Control("causal", "Causal mask", ON_OFF, default="off"),
        Control("window", "Window (how far a query sees)", WINDOWS, default="off"),
        Control("padding", "Padding keys at the end", low=0, high=SPAN - 1, default=0),
    )
)


def _span_settings(causal: str, window: str, padding: int) -> dict:
    return {"causal": causal, "window": window, "padding": padding}


def _span_rules(settings: dict) -> tuple[tuple[bool, ...], bool, int | None]:
    """The 4c controls as mask rules: (real keys, causal, window)."""
    window = None if settings["window"] == "off" else int(settings["window"])
    return _end_padding(SPAN, settings["padding"]), settings["causal"] == "on", window


def _span_mask(settings: dict) -> np.ndarray:
    return mask_of(SPAN, *_span_rules(settings))


@functools.cache
def _span_table() -> tuple[tuple[dict, np.ndarray], ...]:
    """Every setting of the 4c controls with its mask `(S, S)`, fewest changes first."""
    every = [_span_settings(c, w, p) for c, w, p in itertools.product(ON_OFF, WINDOWS, range(SPAN))]
    return tuple((s, _span_mask(s)) for s in sorted(every, key=_changes))


def _visible(mask: np.ndarray, row: int) -> frozenset[int]:
    return frozenset(np.flatnonzero(mask[row]).tolist())


def _changes(settings: dict) -> int:
    return sum(settings[c.name] != c.default for c in SPAN_CONTROLS.controls)


def _span_targets() -> list[tuple[int, frozenset[int]]]:
    """(query, the keys it sees) that the controls can make, but only with two or more
    changes: the first setting of the table that makes each one has the fewest."""
    fewest: dict[tuple[int, frozenset[int]], int] = {}
    for settings, mask in _span_table():
        for row in range(SPAN):
            fewest.setdefault((row, _visible(mask, row)), _changes(settings))
    hard = [target for target, n in fewest.items() if n >= 2 and 0 < len(target[1]) < SPAN]
    return sorted(hard, key=lambda target: (target[0], sorted(target[1])))


def _make_span(seed: int) -> Variant:
    targets = _span_targets()
    row, keys = targets[int(rng(seed, "4c").integers(0, len(targets)))]
    return Variant(
        seed,
        f"{SPAN} queries and {SPAN} keys. Set the controls so that **query {row}** sees "
        f"**only {_keys_text(keys)}**: every other key of its row grey.",
        SPAN_CONTROLS,
        {"row": row, "keys": keys},
    )


def read_controls(answer, controls: SetControls) -> dict:
    """The controls' values, checked against their options or range, or a `ValueError` that
    says what each control takes."""
    if not isinstance(answer, dict):
        raise ValueError("Set every control: " + _controls_expected(controls))
    values = {}
    for control in controls.controls:
        value = answer.get(control.name)
        if not _allowed(value, control):
            raise ValueError(f"{control.label}: {_control_expected(control)}.")
        values[control.name] = value if control.options else int(value)
    return values


def _allowed(value, control: Control) -> bool:
    """`value` is one of the control's options, or a whole number in its range."""
    if control.options:
        return isinstance(value, str | int | float) and value in control.options
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        return False
    return control.low <= value <= control.high


def _control_expected(control: Control) -> str:
    if control.options:
        return "choose one of " + ", ".join(str(o) for o in control.options)
    return f"choose a whole number from {control.low} to {control.high}"


def _controls_expected(controls: SetControls) -> str:
    return "; ".join(f"{c.label}: {_control_expected(c)}" for c in controls.controls) + "."


def _check_span(variant: Variant, answer) -> Verdict:
    try:
        settings = read_controls(answer, SPAN_CONTROLS)
    except ValueError as error:
        return Verdict(False, str(error), 0.0)
    row, target = variant.data["row"], variant.data["keys"]
    seen = _visible(_span_mask(settings), row)
    wrong = seen ^ target
    close = 1.0 - len(wrong) / SPAN
    if not wrong:
        return Verdict(True, f"Solved: query {row} sees only {_keys_text(seen)}.", 1.0)
    todo = [f"hide {_keys_text(seen - target)}"] if seen - target else []
    todo += [f"show {_keys_text(target - seen)} again"] if target - seen else []
    message = (
        f"Query {row} sees {_keys_text(seen)}; it should see only {_keys_text(target)}: "
        f"{' and '.join(todo)}. {_span_hint()}"
    )
    return Verdict(False, message, close)


def _span_hint() -> str:
    return (
        "The window hides keys far from the query on both sides, causal hides every key after "
        "it, and padding at the end hides the last keys from every query."
    )


def _solve_span(variant: Variant) -> dict:
    row, target = variant.data["row"], variant.data["keys"]
    for settings, mask in _span_table():
        if _visible(mask, row) == target:
            return dict(settings)
    raise ValueError(f"No setting of the controls makes query {row} see {sorted(target)}.")


def _explain_span(variant: Variant) -> str:
    row, target = variant.data["row"], variant.data["keys"]
    return (
        f"Each rule hides some keys and a key stays visible only if no rule hides it, so "
        f"query {row} seeing only {_keys_text(target)} takes two rules at once: one cuts the "
        f"keys before, another the keys after. {_span_hint()} The chart shows your mask."
    )


def _reveal_span(variant: Variant, answer) -> Reveal | None:
    try:
        rules = _span_rules(read_controls(answer, SPAN_CONTROLS))
    except ValueError:
        return None
    row = variant.data["row"]
    return Reveal(
        "Your mask (grey = hidden), with equal scores",
        _even_weights(SPAN, *rules),
        labels("query", SPAN),
        labels("key", SPAN),
        allowed=mask_of(SPAN, *rules),
        right=tuple((row, j) for j in sorted(variant.data["keys"])),
    )


ONLY_SOME_KEYS = Exercise(
    "4c",
    "make",
    "Only these keys visible",
    _make_span,
    _check_span,
    _solve_span,
    _explain_span,
    _reveal_span,
    wrong=lambda variant: {c.name: c.default for c in SPAN_CONTROLS.controls},
)


# ---- 4d: a fully masked row that gives no NaN and leaks nothing ----------------------------

MASK_VALUES = ("-1e9", "-inf")
BLIND_CONTROLS = SetControls(
    (
        Control("causal", "Causal mask", ON_OFF, default="off"),
        Control("padding", "Padding keys at the start", low=0, high=TOKENS, default=0),
        Control("mask_value", "Masked logits become", MASK_VALUES, default="-1e9"),
    )
)


def _make_blind(seed: int) -> Variant:
    gen = rng(seed, "4d")
    row = int(gen.integers(0, 2))
    q, k, v = (gen.integers(-2, 3, size=(TOKENS, FEATURES)).astype(np.float64) for _ in range(3))
    return Variant(
        seed,
        f"A query that may see no key has nothing to average: plain softmax over a row of −∞ "
        f"divides 0 by 0 and gives NaN (not a number), and with −1e9 the row comes out even, "
        f"its weight on keys it must never see. Make **query {row}** see no key at all, with "
        "weights that are **all 0**: no NaN, and nothing leaks.",
        BLIND_CONTROLS,
        {"row": row, "q": q, "k": k, "v": v},
        tuple(
            (
                name,
                m,
                labels("key" if name != "Q" else "query", TOKENS),
                labels("feature", FEATURES),
            )
            for name, m in (("Q", q), ("K", k), ("V", v))
        ),
    )


def _blind_result(variant: Variant, settings: dict):
    data = variant.data
    real = np.asarray(_start_padding(TOKENS, settings["padding"]))
    return attend(
        data["q"],
        data["k"],
        data["v"],
        causal=settings["causal"] == "on",
        mask_value=settings["mask_value"],
        key_padding_mask=real,
    )


def _check_blind(variant: Variant, answer) -> Verdict:
    try:
        settings = read_controls(answer, BLIND_CONTROLS)
    except ValueError as error:
        return Verdict(False, str(error), 0.0)
    row = variant.data["row"]
    result = _blind_result(variant, settings)
    weights = np.asarray(result.weights, dtype=np.float64)[row]
    seen = np.flatnonzero(np.asarray(result.mask)[row])
    if len(seen):
        return Verdict(
            False,
            f"Query {row} still sees {_keys_text(seen)}. Padding at the start hides the first "
            "keys from every query; the causal mask hides every key after the query.",
            float(1 - len(seen) / TOKENS) * 0.8,
        )
    if not np.all(np.isfinite(weights)):
        return Verdict(False, f"Query {row} sees no key, but its weights are NaN.", 0.8)
    if np.any(weights != 0):
        output = np.asarray(result.output, dtype=np.float64)[row]
        return Verdict(
            False,
            f"Query {row} sees no key, but with −1e9 its weights are "
            f"{matrix_text(weights[None, :])}: its output {matrix_text(output[None, :])} is an "
            "average of values it must never see. Choose another masked logit.",
            0.9,
        )
    return Verdict(
        True,
        f"Solved: query {row} sees no key, its weights are all 0 (no NaN) and its output is 0.",
        1.0,
    )


def _solve_blind(variant: Variant) -> dict:
    row = variant.data["row"]
    for padding, causal in itertools.product(range(TOKENS + 1), ("on", "off")):
        mask = mask_of(TOKENS, _start_padding(TOKENS, padding), causal == "on")
        if not mask[row].any():
            return {"causal": causal, "padding": padding, "mask_value": "-inf"}
    raise ValueError(f"No setting of the controls hides every key from query {row}.")


def _explain_blind(variant: Variant) -> str:
    row = variant.data["row"]
    return (
        f"Causal hides the keys after query {row} and padding at the start hides the first "
        f"ones: together they hide all of them. With −∞ every e^logit is 0; attnviz then gives "
        f"the row zeros rather than 0/0 = NaN. With −1e9 the logits are all equal, so softmax "
        "spreads the weight evenly over the hidden keys: no NaN, but a leak."
    )


def _reveal_blind(variant: Variant, answer) -> Reveal | None:
    try:
        result = _blind_result(variant, read_controls(answer, BLIND_CONTROLS))
    except ValueError:
        return None
    row = variant.data["row"]
    return Reveal(
        "Your weights (grey = hidden)",
        np.asarray(result.weights, dtype=np.float64),
        labels("query", TOKENS),
        labels("key", TOKENS),
        allowed=np.asarray(result.mask),
        right=tuple((row, j) for j in range(TOKENS)),
    )


def _leaky(variant: Variant) -> dict:
    """Hidden, but with −1e9: the usual mistake (the Keras tutorials' masking)."""
    return {**_solve_blind(variant), "mask_value": "-1e9"}


NO_NAN = Exercise(
    "4d",
    "make",
    "A fully masked row without NaN",
    _make_blind,
    _check_blind,
    _solve_blind,
    _explain_blind,
    _reveal_blind,
    wrong=_leaky,
)

EXERCISES = (GREY, ROW_SUM, ONLY_SOME_KEYS, NO_NAN)
