"""The checks `test_every_exercise` runs on every exercise without models, for the exercises
whose checks load a trained model (`needs_models`): each lesson's test file runs them on a few
seeds, with its model loaded once."""

from __future__ import annotations

import numpy as np

from attnviz.lessons.exercises.base import (
    EditMatrices,
    Estimate,
    PickCells,
    PickOne,
    Reveal,
    SetControls,
    TypeNumber,
)


def shown_numbers(variant) -> tuple:
    """What a learner sees of a variant: its task and its matrices."""
    return (variant.prompt, tuple(tuple(np.ravel(m[1])) for m in variant.shown))


def assert_solution_holds(exercise, seeds) -> None:
    for seed in seeds:
        variant = exercise.make(seed)
        verdict = exercise.check(variant, exercise.solution(variant))
        assert verdict.solved, (exercise.id, seed, verdict.message)
        assert verdict.message
        assert len(exercise.explain(variant)) > 60, exercise.id


def assert_wrong_is_told_why(exercise, seeds) -> None:
    assert exercise.wrong is not None, f"{exercise.id} names no typical mistake"
    for seed in seeds:
        variant = exercise.make(seed)
        verdict = exercise.check(variant, exercise.wrong(variant))
        assert not verdict.solved, (exercise.id, seed)
        assert len(verdict.message) > 20


def assert_seeds_differ(exercise, seeds) -> None:
    variants = [exercise.make(seed) for seed in seeds]
    assert len({shown_numbers(v) for v in variants}) >= 2, exercise.id
    assert shown_numbers(exercise.make(seeds[0])) == shown_numbers(variants[0])  # one variant
    for variant in variants:
        assert exercise.check(variant, exercise.solution(variant)).solved


def assert_bad_input_gets_a_message(exercise, seed: int) -> None:
    variant = exercise.make(seed)
    for bad in bad_answers(variant.answer):
        verdict = exercise.check(variant, bad)
        assert not verdict.solved, (exercise.id, bad)
        assert verdict.message and "Traceback" not in verdict.message


def assert_reveal_marks_the_guess(exercise, seed: int) -> None:
    """The reveal after a wrong answer is a chart of the right shape with the guess marked
    (where the answer is a cell or a head) and the answer marked."""
    variant = exercise.make(seed)
    reveal = exercise.reveal(variant, exercise.wrong(variant))
    assert isinstance(reveal, Reveal), exercise.id
    assert reveal.matrix.shape == (len(reveal.rows), len(reveal.cols)), exercise.id
    assert len(set(reveal.rows)) == len(reveal.rows) and len(set(reveal.cols)) == len(reveal.cols)
    assert np.all(np.isfinite(reveal.matrix)), exercise.id
    assert reveal.right, exercise.id
    if isinstance(variant.answer, PickOne | SetControls):
        assert reveal.guessed, exercise.id
    for row, col in (*reveal.guessed, *reveal.right):
        assert 0 <= row < len(reveal.rows) and 0 <= col < len(reveal.cols), exercise.id


def bad_answers(answer) -> list:
    """Bad input of each answer kind (as `test_every_exercise` sends)."""
    if isinstance(answer, TypeNumber):
        return ["", "abc", "nan", "inf", "1" * 10_000, None, "<b>1</b>"]
    if isinstance(answer, EditMatrices):
        return [{name: "x y z" for name, _ in answer.start}, {}, None]
    if isinstance(answer, PickOne):
        return ["no such option", None, 3]
    if isinstance(answer, Estimate):
        return [answer.high + 1, float("nan"), "0.5", None]
    if isinstance(answer, PickCells):
        return [frozenset({(99, 99)}), "cells", None]
    if isinstance(answer, SetControls):
        names = [c.name for c in answer.controls]
        return [
            {},
            None,
            {name: object() for name in names},
            {name: True for name in names},
            {name: 99 for name in names},
            {name: -1 for name in names},
            {name: "1" for name in names},
            {name: 0.5 for name in names},
        ]
    raise AssertionError(f"unknown answer kind {answer!r}")
