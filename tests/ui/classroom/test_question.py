"""Tests for attnviz/ui/classroom/question.py: what the reveal shows a phone is checked and
drawn once per server for each answer (every phone that sent it shows the same), never shared
between answers, seeds or exercises. (What the phones show: `test_class`.)"""

from __future__ import annotations

import dataclasses

from classroom_support import EXERCISES

from attnviz.ui.classroom import question


def _counting(exercise_id: str, calls: list):
    """The test exercise `exercise_id`, its check noting each answer it is asked about."""
    base = EXERCISES[exercise_id]

    def check(variant, answer):
        calls.append(answer)
        return base.check(variant, answer)

    return dataclasses.replace(base, check=check)


def test_each_answer_is_checked_once_however_many_phones_show_it():
    calls: list = []
    exercise = _counting("3a", calls)
    variant = exercise.make(7)
    for answer in ("key 1", "key 0", "key 1", None, "key 1", "key 0"):  # outside a page: drawn
        question.revealed(exercise, variant, answer, key="mine")  # nowhere, checked all the same
    assert calls == ["key 1", "key 0"]  # no answer is not checked
    question.revealed(exercise, exercise.make(8), "key 1", key="mine")  # another variant
    question.revealed(_counting("3a", calls), variant, "key 1", key="mine")  # another exercise
    assert calls == ["key 1", "key 0", "key 1", "key 1"]


def test_answers_that_are_dicts_are_shared_by_their_items_and_others_are_checked_each_time():
    calls: list = []
    exercise = _counting("4b", calls)
    variant = exercise.make(7)
    for answer in ({"causal": True, "window": 2}, {"window": 2, "causal": True}):
        question.revealed(exercise, variant, answer, key="mine")
    assert len(calls) == 1  # the same controls, however ordered
    unhashable = {"causal": True, "window": [2]}  # not an answer a widget gives, yet drawn
    for _ in range(2):
        question.revealed(exercise, variant, unhashable, key="mine")
    assert len(calls) == 3
