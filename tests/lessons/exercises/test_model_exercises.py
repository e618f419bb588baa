"""The exercises that load a trained model (lessons 9, 10 and 12), checked as
`test_every_exercise` checks the others: the computed solution holds, the typical mistake is
told why, two seeds differ with the same check, bad input gets a message, the reveal marks the
guess. Each lesson's own file pins its numbers against the model's weights."""

from __future__ import annotations

import pytest

from attnviz.lessons.exercises import EXERCISES
from tests.lessons.exercises import model_checks

pytestmark = pytest.mark.slow  # loads the shipped models
SEEDS = (0, 1, 7)
WITH_MODELS = [e for e in EXERCISES if e.needs_models]
IDS = [e.id for e in WITH_MODELS]


@pytest.mark.parametrize("exercise", WITH_MODELS, ids=IDS)
def test_the_solution_holds(exercise):
    model_checks.assert_solution_holds(exercise, SEEDS)


@pytest.mark.parametrize("exercise", WITH_MODELS, ids=IDS)
def test_a_wrong_answer_is_told_why(exercise):
    model_checks.assert_wrong_is_told_why(exercise, SEEDS)


@pytest.mark.parametrize("exercise", WITH_MODELS, ids=IDS)
def test_two_seeds_give_different_numbers_and_the_same_check(exercise):
    model_checks.assert_seeds_differ(exercise, SEEDS)


@pytest.mark.parametrize("exercise", WITH_MODELS, ids=IDS)
def test_bad_input_gets_a_message(exercise):
    model_checks.assert_bad_input_gets_a_message(exercise, 3)


@pytest.mark.parametrize("exercise", WITH_MODELS, ids=IDS)
def test_the_reveal_marks_the_guess(exercise):
    model_checks.assert_reveal_marks_the_guess(exercise, 3)


def test_every_lesson_with_a_trained_model_is_covered_here():
    assert {e.lesson for e in WITH_MODELS} == {9, 10, 12}
