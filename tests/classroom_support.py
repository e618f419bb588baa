"""Small exercises of every answer kind for the class tests (`EXERCISES`, looked up by `find`):
their checks need no TensorFlow, and what holds is plain (`solution`)."""

from __future__ import annotations

import numpy as np

from attnviz.lessons.exercises.base import (
    Control,
    EditMatrices,
    Estimate,
    Exercise,
    PickCells,
    PickOne,
    Reveal,
    SetControls,
    TypeNumber,
    Variant,
    Verdict,
)

KEYS = ("key 0", "key 1", "key 2")
CONTROLS = (
    Control("causal", "Causal", (False, True), default=False),
    Control("window", "Window", (), 0, 4, default=0),
)


def _exercise(id_: str, kind: str, spec, right, holds) -> Exercise:
    """A made-up exercise whose answer `right` holds (`holds(answer)`), its numbers from the
    seed (the prompt names it)."""
    return Exercise(
        id_, kind, f"Test {id_}",
        lambda seed: Variant(seed, f"Question {id_} at seed {seed}", spec, {"seed": seed}),
        lambda variant, answer: Verdict(bool(holds(answer)), "right" if holds(answer) else "no"),
        lambda variant: right,
        lambda variant: f"Because of {right}.",
        lambda variant, answer: Reveal("The answer", np.eye(3), KEYS, KEYS),
    )  # fmt: skip


EXERCISES = {
    e.id: e
    for e in (
        _exercise("3a", "predict", PickOne("Query 0 weighs most", KEYS), "key 1",
                  lambda a: a == "key 1"),
        _exercise("3b", "predict", PickCells("Grey cells", KEYS, KEYS),
                  frozenset({(0, 1), (0, 2), (1, 2)}),
                  lambda a: a == frozenset({(0, 1), (0, 2), (1, 2)})),
        _exercise("3c", "predict", Estimate("Weight of key 2", 0.0, 1.0, 0.01), 0.3,
                  lambda a: abs(a - 0.3) <= 0.05),
        _exercise("3d", "compute", TypeNumber("Score", 0.01), "2.5",
                  lambda a: abs(float(a) - 2.5) <= 0.01),
        _exercise("4a", "make", EditMatrices((("Q", "1 0\n0 1"),)), {"Q": "5 0\n0 5"},
                  lambda a: a["Q"].strip().startswith("5 ")),
        _exercise("4b", "make", SetControls(CONTROLS), {"causal": True, "window": 2},
                  lambda a: a["causal"] and a["window"] == 2),
    )
}  # fmt: skip


def find(exercise_id: str) -> Exercise:
    """One of `EXERCISES`, with the registry's error for another."""
    if exercise_id not in EXERCISES:
        raise ValueError(f"There is no exercise {exercise_id!r}.")
    return EXERCISES[exercise_id]
