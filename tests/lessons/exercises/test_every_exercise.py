"""Every exercise, whatever its lesson: its computed solution holds for many seeds, its typical
wrong answer is told why, two seeds give different numbers with the same check, bad input gets a
message, and every lesson has at least two. (Each lesson's own file pins its numbers by hand.)"""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.lessons import LESSONS
from attnviz.lessons.exercises import EXERCISES, exercises_of, get_exercise
from attnviz.lessons.exercises.base import (
    EditMatrices,
    Estimate,
    PickCells,
    PickOne,
    SetControls,
    TypeNumber,
)

SEEDS = (0, 1, 7, 2026)
QUICK = [e for e in EXERCISES if not e.needs_models]
IDS = [e.id for e in QUICK]


def _numbers(variant) -> tuple:
    """What a learner sees of a variant: its task and its matrices."""
    return (variant.prompt, tuple(tuple(np.ravel(m[1])) for m in variant.shown))


@pytest.mark.parametrize("exercise", QUICK, ids=IDS)
def test_the_solution_holds_for_every_seed(exercise):
    for seed in SEEDS:
        variant = exercise.make(seed)
        verdict = exercise.check(variant, exercise.solution(variant))
        assert verdict.solved, (exercise.id, seed, verdict.message)
        assert verdict.message


@pytest.mark.parametrize("exercise", QUICK, ids=IDS)
def test_a_wrong_answer_is_told_why(exercise):
    assert exercise.wrong is not None, f"{exercise.id} names no typical mistake"
    for seed in SEEDS:
        variant = exercise.make(seed)
        verdict = exercise.check(variant, exercise.wrong(variant))
        assert not verdict.solved, (exercise.id, seed)
        assert len(verdict.message) > 20


@pytest.mark.parametrize("exercise", QUICK, ids=IDS)
def test_two_seeds_give_different_numbers_and_the_same_check(exercise):
    variants = [exercise.make(seed) for seed in SEEDS]
    assert len({_numbers(v) for v in variants}) >= 2, exercise.id
    assert _numbers(exercise.make(7)) == _numbers(exercise.make(7))  # a seed is one variant
    for variant in variants:
        assert exercise.check(variant, exercise.solution(variant)).solved


@pytest.mark.parametrize("exercise", [e for e in QUICK if e.kind == "make"],
                         ids=[e.id for e in QUICK if e.kind == "make"])  # fmt: skip
def test_a_task_to_make_does_not_hold_as_it_starts(exercise):
    for seed in SEEDS:
        variant = exercise.make(seed)
        spec = variant.answer
        if isinstance(spec, EditMatrices):
            start = dict(spec.start)
        else:
            start = {control.name: control.default for control in spec.controls}
        assert not exercise.check(variant, start).solved, (exercise.id, seed)


@pytest.mark.parametrize("exercise", QUICK, ids=IDS)
def test_bad_input_gets_a_message(exercise):
    variant = exercise.make(3)
    for bad in _bad_answers(variant.answer):
        verdict = exercise.check(variant, bad)
        assert not verdict.solved
        assert verdict.message and "Traceback" not in verdict.message


def _bad_answers(answer) -> list:
    if isinstance(answer, TypeNumber):
        return ["", "abc", "nan", "inf", "1" * 10_000, None, "<b>1</b>"]
    if isinstance(answer, EditMatrices):
        names = [name for name, _ in answer.start]
        return [
            {name: "x y z" for name in names},
            {name: "1 2\n3 4 5" for name in names},
            {name: "nan " * 3 for name in names},
            {name: "9" * 10_000 for name in names},
            {},
            None,
        ]
    if isinstance(answer, PickOne):
        return ["no such option", None, 3]
    if isinstance(answer, Estimate):
        return [answer.high + 1, float("nan"), "0.5", None]
    if isinstance(answer, PickCells):
        return [frozenset({(99, 99)}), "cells", None]
    if isinstance(answer, SetControls):
        return [{}, None, {c.name: object() for c in answer.controls}]
    raise AssertionError(f"unknown answer kind {answer!r}")


def test_every_exercise_explains_itself_with_its_numbers():
    for exercise in QUICK:
        variant = exercise.make(5)
        assert len(exercise.explain(variant)) > 60, exercise.id
        assert exercise.title and exercise.kind


def test_every_lesson_has_at_least_two_exercises():
    short = [n for n in range(1, len(LESSONS) + 1) if len(exercises_of(n)) < 2]
    assert not short, f"lessons with fewer than two exercises: {short}"


def test_an_unknown_exercise_is_named():
    with pytest.raises(ValueError, match="no exercise '99z'"):
        get_exercise("99z")


@pytest.mark.parametrize("exercise", QUICK, ids=IDS)
def test_a_variant_is_drawn_once_per_seed_and_kept(exercise):
    made = []
    counting = type(exercise)(**{**vars(exercise), "make": lambda s: made.append(s) or
                                 exercise.make(s)})  # fmt: skip
    first = counting.variant(2026)
    assert _numbers(first) == _numbers(exercise.make(2026))  # the seed's own numbers
    assert counting.variant(2026) is first and made == [2026]  # asked again: kept, not redrawn
    assert _numbers(counting.variant(7)) != _numbers(first) and made == [2026, 7]
