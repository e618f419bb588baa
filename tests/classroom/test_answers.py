"""A student's answer is checked against its question's kind before it is stored, read back as
the exercise checks it, and the room's answers are tallied in the chart's own terms."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from classroom_support import EXERCISES

from attnviz.classroom import answers


def _spec(exercise_id: str):
    return EXERCISES[exercise_id].make(1).answer


@pytest.mark.parametrize(
    ("exercise_id", "sent", "read"),
    [
        ("3a", "key 2", "key 2"),
        ("3b", [(1, 2), [0, 1], (1, 2)], frozenset({(0, 1), (1, 2)})),
        ("3b", frozenset(), frozenset()),
        ("3c", 0.25, 0.25),
        ("3c", 1, 1.0),
        ("3d", " 2.5 ", "2.5"),
        ("3d", -1.5, "-1.5"),
        ("4a", {"Q": "1 2\n3 4"}, {"Q": "1 2\n3 4"}),
        ("4b", {"causal": True, "window": 3}, {"causal": True, "window": 3}),
    ],
)
def test_round_trip(exercise_id, sent, read):
    spec = _spec(exercise_id)
    text = answers.encode(spec, sent)
    assert answers.decode(spec, text) == read
    assert answers.encode(spec, answers.decode(spec, text)) == text  # one text per answer


@pytest.mark.parametrize(
    ("exercise_id", "sent", "message"),
    [
        ("3a", "key 9", "Pick one of: key 0, key 1, key 2."),
        ("3a", None, "Pick one of"),
        ("3a", ["key 1"], "Pick one of"),
        ("3b", "0,1", "Pick cells of the 3 × 3 grid (row 0-2, column 0-2)."),
        ("3b", [(0, 3)], "Received (0, 3)"),
        ("3b", [(-1, 0)], "Received (-1, 0)"),
        ("3b", [(0.5, 1)], "Pick cells"),
        ("3b", [(True, 1)], "Pick cells"),
        ("3b", [(0, 1, 2)], "Pick cells"),
        ("3b", [(0, 0)] * 10, "Pick cells"),
        ("3b", 7, "Pick cells"),
        ("3c", 1.5, "between 0 and 1"),
        ("3c", math.nan, "between 0 and 1"),
        ("3c", "0.5", "between 0 and 1"),
        ("3c", True, "between 0 and 1"),
        ("3d", "abc", "is not a number"),
        ("3d", "", "is empty"),
        ("3d", "9" * 5000, "5,000 characters long"),
        ("3d", "inf", "finite"),
        ("4a", {"Q": 3}, "Q is text of at most 2,000 characters"),
        ("4a", {"Q": "1" * 2001}, "at most 2,000"),
        ("4a", {"Q": "1", "K": "2"}, "Fill in the boxes Q, and nothing else."),
        ("4a", "1 0", "Fill in the boxes Q"),
        ("4b", {"causal": "yes", "window": 1}, "Causal is one of: False, True."),
        ("4b", {"causal": 1, "window": 1}, "Causal is one of"),
        ("4b", {"causal": True, "window": 5}, "Window is a whole number from 0 to 4."),
        ("4b", {"causal": True, "window": 1.5}, "Window is a whole number"),
        ("4b", {"causal": True}, "Set the controls causal, window, and nothing else."),
    ],
)
def test_bad_answers_refused(exercise_id, sent, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        answers.encode(_spec(exercise_id), sent)


def _records(spec, sent_and_solved):
    return [answers.record(answers.encode(spec, a), ok) for a, ok in sent_and_solved]


def test_tally_of_options():
    spec = _spec("3a")
    got = answers.tally(
        spec, _records(spec, [("key 1", True), ("key 0", False), ("key 1", True)]), 5
    )
    assert got.options == (("key 0", 1), ("key 1", 2), ("key 2", 0))
    assert (got.answered, got.members, got.solved) == (3, 5, 2)


def test_tally_of_cells():
    spec = _spec("3b")
    sent = [({(0, 1), (0, 2)}, False), ({(0, 1)}, False), (set(), False)]
    got = answers.tally(spec, _records(spec, sent), 3)
    np.testing.assert_array_equal(got.cells, [[0, 2, 1], [0, 0, 0], [0, 0, 0]])
    assert got.answered == 3 and got.solved == 0


def test_tally_of_estimates_is_a_histogram():
    spec = _spec("3c")
    sent = [(0.0, False), (0.05, False), (0.31, True), (0.3, True), (0.99, False), (1.0, False)]
    got = answers.tally(spec, _records(spec, sent), 6)
    assert got.edges == pytest.approx([k / 10 for k in range(11)])
    assert got.counts == (2, 0, 0, 2, 0, 0, 0, 0, 0, 2)  # 1.0 falls in the last bin
    assert got.solved == 2


def test_tally_of_make_and_compute_counts_solved():
    spec = _spec("3d")
    got = answers.tally(spec, _records(spec, [("2.5", True), ("3", False)]), 2)
    assert (got.answered, got.solved, got.options, got.cells, got.counts) == (2, 1, (), None, ())


def test_record_is_json():
    assert json.loads(answers.record('"key 1"', True)) == {"answer": '"key 1"', "solved": True}
