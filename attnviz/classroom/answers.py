"""A student's answer to a class's question: checked against the question's answer kind before
it is stored (anything a browser sends may be anything), kept as text, read back as the answer
the exercise's check takes; and the room's answers tallied in the chart's own terms.

Tallies by answer kind: how many picked each option (`PickOne`); how many picked each cell, a
`(rows, cols)` grid of counts (`PickCells`); a histogram of the estimates (`Estimate`); and for
every kind, how many answers hold (the exercise's own check, run when the answer came in).
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.lessons.exercises.base import (
    MAX_ANSWER_CHARS,
    EditMatrices,
    Estimate,
    PickCells,
    PickOne,
    SetControls,
    TypeNumber,
    read_fraction,
    read_number,
)

BINS = 10  # bars of an estimates' histogram
Spec = PickOne | PickCells | Estimate | TypeNumber | EditMatrices | SetControls


@dataclass(frozen=True)
class Tally:
    """The room's answers to one question."""

    answered: int  # members who answered
    members: int  # members in the class
    solved: int  # answers that hold
    options: tuple[tuple[str, int], ...] = ()  # PickOne: (option, how many picked it)
    cells: np.ndarray | None = None  # PickCells `(rows, cols)`: how many picked each cell
    edges: tuple[float, ...] = ()  # Estimate: the histogram's BINS + 1 edges
    counts: tuple[int, ...] = ()  # ... and how many estimates fell in each bin


def encode(spec: Spec, answer: Any) -> str:
    """`answer` as stored text (JSON), once it has `spec`'s shape; else a `ValueError` that
    says what the question takes."""
    return json.dumps(_checked(spec, answer), sort_keys=True)


def decode(spec: Spec, text: str) -> Any:
    """The stored `text` as the answer `spec`'s exercise checks: a frozenset of cells for
    `PickCells`, a float for `Estimate`, else as sent."""
    value = json.loads(text)
    if isinstance(spec, PickCells):
        return frozenset((int(i), int(j)) for i, j in value)
    if isinstance(spec, Estimate):
        return float(value)
    return value


def record(answer_text: str, solved: bool) -> str:
    """What the store keeps of one member's answer: the answer and whether it holds."""
    return json.dumps({"answer": answer_text, "solved": bool(solved)})


def read_record(text: str) -> tuple[str, bool]:
    """`(answer text, solved)` of a stored `record`."""
    value = json.loads(text)
    return str(value["answer"]), bool(value["solved"])


def _checked(spec: Spec, answer: Any) -> Any:
    if isinstance(spec, PickOne):
        if not isinstance(answer, str) or answer not in spec.options:
            raise ValueError(f"Pick one of: {', '.join(spec.options)}.")
        return answer
    if isinstance(spec, PickCells):
        return _cells(spec, answer)
    if isinstance(spec, Estimate):
        return read_fraction(answer, spec.low, spec.high)
    if isinstance(spec, TypeNumber):
        read_number(answer)  # a ValueError says what is expected
        return str(answer).strip() if isinstance(answer, str) else repr(float(answer))
    if isinstance(spec, EditMatrices):
        return _texts(answer, tuple(name for name, _ in spec.start))
    if isinstance(spec, SetControls):
        return _controls(spec, answer)
    raise ValueError(f"This question takes no answer of kind {type(spec).__name__}.")


def _cells(spec: PickCells, answer: Any) -> list[list[int]]:
    """Cells as sorted `[row, column]` pairs, each inside the grid."""
    rows, cols = len(spec.rows), len(spec.cols)
    hint = f"Pick cells of the {rows} × {cols} grid (row 0-{rows - 1}, column 0-{cols - 1})."
    if isinstance(answer, str | bytes) or not isinstance(answer, Iterable):
        raise ValueError(hint)
    cells = set()
    for k, cell in enumerate(answer):
        if k >= rows * cols or not isinstance(cell, tuple | list) or len(cell) != 2:
            raise ValueError(hint)
        i, j = cell
        if not all(_whole(x) for x in (i, j)) or not (0 <= i < rows and 0 <= j < cols):
            raise ValueError(hint + f" Received {cell!r:.40}.")
        cells.add((int(i), int(j)))
    return [list(cell) for cell in sorted(cells)]


def _whole(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _texts(answer: Any, names: tuple[str, ...]) -> dict[str, str]:
    """One text box per matrix `names`, each at most `MAX_ANSWER_CHARS` characters."""
    if not isinstance(answer, Mapping) or set(answer) != set(names):
        raise ValueError(f"Fill in the boxes {', '.join(names)}, and nothing else.")
    for name in names:
        text = answer[name]
        if not isinstance(text, str) or len(text) > MAX_ANSWER_CHARS:
            raise ValueError(
                f"{name} is text of at most {MAX_ANSWER_CHARS:,} characters: one row per line."
            )
    return {name: answer[name] for name in names}


def _controls(spec: SetControls, answer: Any) -> dict[str, Any]:
    """One value per control: one of its options, or a whole number from `low` to `high`."""
    names = tuple(control.name for control in spec.controls)
    if not isinstance(answer, Mapping) or set(answer) != set(names):
        raise ValueError(f"Set the controls {', '.join(names)}, and nothing else.")
    for control in spec.controls:
        value = answer[control.name]
        if control.options:
            if not any(value == o and type(value) is type(o) for o in control.options):
                shown = ", ".join(str(o) for o in control.options)
                raise ValueError(f"{control.label} is one of: {shown}.")
        elif not _whole(value) or not control.low <= value <= control.high:
            raise ValueError(
                f"{control.label} is a whole number from {control.low} to {control.high}."
            )
    return {name: answer[name] for name in names}


def tally(spec: Spec, records: Iterable[str], members: int) -> Tally:
    """The room's stored `records` (see `record`) counted for the chart of `spec`'s kind."""
    read = [read_record(text) for text in records]
    answers = [decode(spec, text) for text, _ in read]
    common = dict(answered=len(read), members=members, solved=sum(ok for _, ok in read))
    if isinstance(spec, PickOne):
        counts = tuple((option, sum(a == option for a in answers)) for option in spec.options)
        return Tally(**common, options=counts)
    if isinstance(spec, PickCells):
        grid = np.zeros((len(spec.rows), len(spec.cols)), dtype=np.int64)  # (rows, cols)
        for cells in answers:
            for i, j in cells:
                grid[i, j] += 1
        return Tally(**common, cells=grid)
    if isinstance(spec, Estimate):
        edges, counts = _histogram(answers, spec.low, spec.high)
        return Tally(**common, edges=edges, counts=counts)
    return Tally(**common)


def _histogram(
    values: list[float], low: float, high: float
) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """`BINS` equal bins from `low` to `high`: their edges and how many `values` fall in each
    (a value on an edge in the bin above it, `high` in the last). Bins are found with a little
    slack, so that 0.3 on a slider of step 0.01 falls in [0.3, 0.4), not below it as the float
    0.30000000000000004 of the edge would have it."""
    width = (high - low) / BINS
    counts = [0] * BINS
    for value in values:
        counts[min(BINS - 1, max(0, math.floor((value - low) / width + 1e-9)))] += 1
    edges = tuple(round(low + k * width, 12) for k in range(BINS + 1))
    return edges, tuple(counts)
