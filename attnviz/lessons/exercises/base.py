"""What an exercise is: a task drawn from a seed, an answer of one of a few kinds, and a check
that computes (never looks up) whether the answer holds.

Three kinds (`KINDS`):

- **predict**: the learner commits to a guess (a key, yes or no, a number on a slider, a set of
  cells) before the chart that would give it away appears; then the chart (`Reveal`) shows with
  the guess marked, and a sentence or two say why.
- **make**: a target, and inputs or controls the learner edits until it holds; checked on every
  change, saying how far off it still is.
- **compute**: one number worked out by hand, checked within a stated tolerance; a wrong one is
  told the step that went wrong.

An exercise is plain data and plain functions (no Streamlit): `make(seed)` draws its `Variant`,
`check(variant, answer)` gives a `Verdict` by running attnviz's own maths on the answer, and
`solution(variant)` computes an answer that holds (for the teacher's view and the tests).
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnviz.inputs.parsing import parse_matrix_text

KINDS = {
    "predict": "Predict, then reveal",
    "make": "Make it happen",
    "compute": "Compute one cell",
}
MAX_ANSWER_CHARS = 2_000  # most characters of one typed answer read
VARIANTS_KEPT = 512  # variants kept per process (`Exercise.variant`): a lecture hall's learners
# each on an exercise (its own seed) and a class's question, a few kilobytes each


# ---- what the learner answers with ---------------------------------------------------------


@dataclass(frozen=True)
class PickOne:
    """One of `options` (a key, a head, yes or no). The answer is the option's text."""

    label: str  # the question, as the widget's label
    options: tuple[str, ...]


@dataclass(frozen=True)
class PickCells:
    """A set of cells of a `rows` × `cols` grid (which cells go grey). The answer is a frozenset
    of (row, column) index pairs."""

    label: str
    rows: tuple[str, ...]  # row labels (queries)
    cols: tuple[str, ...]  # column labels (keys)


@dataclass(frozen=True)
class Estimate:
    """A number on a slider from `low` to `high` (roughly what a weight is). The answer is a
    float."""

    label: str
    low: float
    high: float
    step: float


@dataclass(frozen=True)
class TypeNumber:
    """One number typed by hand. The answer is the text typed (read by `read_number`)."""

    label: str
    tolerance: float  # |typed - right| at most this is right; said to the learner


@dataclass(frozen=True)
class EditMatrices:
    """Matrices the learner edits. The answer maps each name to the text typed (read by
    `read_matrix`); `start` is what the boxes hold at first."""

    start: tuple[tuple[str, str], ...]  # (name, text) in the order drawn


@dataclass(frozen=True)
class Control:
    """One control of a `SetControls` answer."""

    name: str  # the answer's key
    label: str
    options: tuple[Any, ...] = ()  # a choice among these; () with `low`/`high`: a whole number
    low: int = 0
    high: int = 0
    default: Any = None  # what it starts at


@dataclass(frozen=True)
class SetControls:
    """A few controls (a mask, a window, a head switched off). The answer maps each control's
    name to its value."""

    controls: tuple[Control, ...]


Answer = Any  # str | frozenset[tuple[int, int]] | float | dict[str, Any], by the answer kind


# ---- what an exercise says back ------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """Whether an answer holds, and what to say about it."""

    solved: bool
    message: str  # markdown, no HTML: right and why, how far off, or the step that went wrong
    close: float | None = None  # make: how close, 0 (far) to 1 (holds); else None


@dataclass(frozen=True)
class Reveal:
    """The chart an exercise shows once answered: one matrix drawn as a heatmap, the learner's
    cells and the right cells marked."""

    title: str
    matrix: np.ndarray  # (rows, cols) what the chart shows
    rows: tuple[str, ...]  # row labels
    cols: tuple[str, ...]  # column labels
    kind: str = "weights"  # the heatmap's colour scale: "weights" or "scores" (any sign)
    allowed: np.ndarray | None = None  # (rows, cols) bool, False = masked (grey); None: all
    guessed: tuple[tuple[int, int], ...] = ()  # the learner's cells, outlined
    right: tuple[tuple[int, int], ...] = ()  # the cells that answer it, outlined differently


@dataclass(frozen=True)
class Variant:
    """One exercise's numbers, drawn from a seed: the same seed gives the same variant."""

    seed: int
    prompt: str  # the task with its numbers (markdown, no HTML)
    answer: PickOne | PickCells | Estimate | TypeNumber | EditMatrices | SetControls
    data: Mapping[str, Any] = field(default_factory=dict)  # the numbers the check uses
    shown: tuple[tuple[str, np.ndarray, tuple[str, ...], tuple[str, ...]], ...] = ()
    # matrices shown with the task: (name, (R, C) values, row labels, column labels)


@dataclass(frozen=True)
class Exercise:
    """One exercise of a lesson."""

    id: str  # "<lesson><letter>", e.g. "4b": its place in URLs and progress
    kind: str  # a key of `KINDS`
    title: str  # a few words
    make: Callable[[int], Variant]  # seed -> the variant
    check: Callable[[Variant, Answer], Verdict]  # runs the maths on the answer
    solution: Callable[[Variant], Answer]  # an answer that holds, computed
    explain: Callable[[Variant], str]  # why: two or three sentences that point at the chart
    reveal: Callable[[Variant, Answer], Reveal | None] = lambda variant, answer: None
    wrong: Callable[[Variant], Answer] | None = None  # a typical wrong answer (for the tests
    # and the teacher: the mistake the check names)
    needs_models: bool = False  # its check loads a trained model (TensorFlow, a shipped model)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(
                f"Exercise {self.id}: kind must be one of {sorted(KINDS)}; received {self.kind!r}."
            )

    @property
    def lesson(self) -> int:
        """The lesson's number (the id's digits)."""
        return int(self.id.rstrip("abcdefghij"))

    def variant(self, seed: int) -> Variant:
        """`make(seed)`, drawn once per process and then kept (`VARIANTS_KEPT` in all): a
        lesson's page asks for its open exercise's on every run and a class's projector on
        every poll, and the same seed gives the same variant (a trained model's exercise takes
        ~50 ms to draw one: it translates its candidate dates). Read it, never change it."""
        return _variant(self, seed)


@functools.lru_cache(maxsize=VARIANTS_KEPT)
def _variant(exercise: Exercise, seed: int) -> Variant:
    return exercise.make(seed)


# ---- reading what was typed ----------------------------------------------------------------


def read_number(text: Any, what: str = "Your answer") -> float:
    """The number in `text` (typed text, or a number), or a `ValueError` that says what is
    expected."""
    if isinstance(text, numbers.Real) and not isinstance(text, bool):
        text = repr(float(text))
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{what} is empty: type one number, e.g. 0.25 or -1.5.")
    if len(text) > MAX_ANSWER_CHARS:
        raise ValueError(
            f"{what} is {len(text):,} characters long: type one number, e.g. 0.25 or -1.5."
        )
    cleaned = text.strip().replace("\u2212", "-").replace(",", ".")
    try:
        value = float(cleaned)
    except ValueError:
        shown = cleaned if len(cleaned) <= 20 else cleaned[:20] + "…"
        raise ValueError(
            f"{what} is not a number (read {shown!r}): type one number, e.g. 0.25 or -1.5."
        ) from None
    if not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number; received {cleaned!r}.")
    return value


def read_matrix(text: Any, name: str, shape: tuple[int, int]) -> np.ndarray:
    """The `shape` matrix typed as `text` (`inputs.parsing`'s rules), or a `ValueError` that
    names the box and the shape it needs."""
    if not isinstance(text, str):
        raise ValueError(
            f"{name} is empty: type {count(shape[0], 'row')} of {count(shape[1], 'number')}."
        )
    matrix = parse_matrix_text(text, name=name)  # any size the text holds: the shape is ours
    if matrix.shape != shape:
        got = " × ".join(str(n) for n in matrix.shape)
        raise ValueError(
            f"{name} must have {count(shape[0], 'row')} of {count(shape[1], 'number')}; it "
            f"has {got}. Keep one row per line."
        )
    return matrix


def matrix_text(matrix: np.ndarray) -> str:
    """`matrix` as the boxes show it: one row per line, numbers without trailing zeros."""
    return "\n".join(" ".join(number_text(x) for x in row) for row in np.asarray(matrix))


def number_text(x: float, digits: int = 3) -> str:
    """`x` rounded to `digits` decimals, without trailing zeros ("2", "0.25", "-1.5")."""
    text = f"{float(x):.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def rng(seed: int, exercise_id: str) -> np.random.Generator:
    """The random numbers of exercise `exercise_id` at `seed`: two exercises of one seed draw
    different numbers."""
    salt = sum((k + 1) * ord(c) for k, c in enumerate(exercise_id))
    return np.random.default_rng([int(seed) % 2**32, salt])


def count(n: int, noun: str) -> str:
    """ "1 row", "3 rows"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def labels(prefix: str, n: int) -> tuple[str, ...]:
    """("key 0", "key 1", ...)."""
    return tuple(f"{prefix} {i}" for i in range(n))


def read_fraction(answer: Any, low: float = 0.0, high: float = 1.0) -> float:
    """A slider's number (any real number type) between `low` and `high`, or a `ValueError`
    that says what is expected."""
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
        raise ValueError(f"Choose a number between {low:g} and {high:g} on the slider.")
    value = float(answer)
    if not low <= value <= high:  # NaN fails too
        raise ValueError(f"Choose a number between {low:g} and {high:g} on the slider.")
    return value


def typed_verdict(
    answer: Any,
    right: float,
    tolerance: float,
    said_right: Callable[[], str],
    mistake: Callable[[float], str],
) -> Verdict:
    """A compute exercise's verdict on the number typed: what is wrong with the text, if it is
    not a number; right within `tolerance` (`said_right()` says so); else `mistake(typed)`, the
    step that went wrong."""
    try:
        typed = read_number(answer)
    except ValueError as error:
        return Verdict(False, str(error))
    if within(typed, right, tolerance):
        return Verdict(True, said_right())
    return Verdict(False, mistake(typed))


def within(value: float, right: float, tolerance: float) -> bool:
    """`value` is within `tolerance` of `right`."""
    return abs(value - right) <= tolerance
