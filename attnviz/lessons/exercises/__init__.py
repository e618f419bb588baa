"""Exercises: at least two a lesson, checked by computing what the learner entered with
attnviz's own maths (see `base` for the three kinds). Listing them is cheap: a check imports
TensorFlow only when it first runs."""

from __future__ import annotations

from attnviz.lessons.exercises import (
    heads,
    induction,
    learned,
    masks,
    projections,
    rope,
    scaling,
    score_functions,
    scores,
    softmax,
    trained_heads,
    ways,
)
from attnviz.lessons.exercises.base import KINDS, Exercise, Reveal, Variant, Verdict

EXERCISES: tuple[Exercise, ...] = (
    *scores.EXERCISES,
    *softmax.EXERCISES,
    *scaling.EXERCISES,
    *masks.EXERCISES,
    *score_functions.EXERCISES,
    *projections.EXERCISES,
    *heads.EXERCISES,
    *ways.EXERCISES,
    *learned.EXERCISES,
    *trained_heads.EXERCISES,
    *rope.EXERCISES,
    *induction.EXERCISES,
)
_BY_ID = {exercise.id: exercise for exercise in EXERCISES}
if len(_BY_ID) != len(EXERCISES):
    raise ValueError("Two exercises share an id: give each its own '<lesson><letter>'.")


def exercises_of(lesson: int) -> tuple[Exercise, ...]:
    """Lesson `lesson`'s exercises, in order."""
    return tuple(exercise for exercise in EXERCISES if exercise.lesson == lesson)


def get_exercise(exercise_id: str) -> Exercise:
    """The exercise `exercise_id` ("4b"), with a clear error for an unknown one."""
    if exercise_id not in _BY_ID:
        raise ValueError(f"There is no exercise {exercise_id!r}; there are {', '.join(_BY_ID)}.")
    return _BY_ID[exercise_id]


def warm_up(seed: int = 1) -> None:
    """Draw one variant of each exercise that loads a trained model: the models load and their
    functions are traced now (a server's warm-up), not when a learner first opens the lesson
    (lesson 10's first exercise took 2 s on its first draw: loading the dates Transformer and
    tracing its batch translation; any variant after the first takes ~0.06 s)."""
    for exercise in EXERCISES:
        if exercise.needs_models:
            exercise.make(seed)


__all__ = [
    "EXERCISES",
    "KINDS",
    "Exercise",
    "Reveal",
    "Variant",
    "Verdict",
    "exercises_of",
    "get_exercise",
    "warm_up",
]
