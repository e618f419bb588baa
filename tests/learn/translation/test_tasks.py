"""Tests for learn/translation/tasks.py: the task table, seeded pairs, known alignments, input
checks."""

import pytest

import attnviz.learn
from attnviz.learn.translation.tasks import (
    TASKS,
    draw_pairs,
    get_task,
    known_alignment,
    make_pairs,
    outside_training,
)


def test_tasks_and_their_sizes():
    assert TASKS == ("dates", "reverse", "german_numbers")
    assert attnviz.learn.TASKS == TASKS
    for name in TASKS:
        task = get_task(name)
        source, target = task.example
        assert known_alignment(name, source, target)  # the example is a correct pair
        pairs = make_pairs(name, 3000, 0)
        assert max(len(s) for s, _ in pairs) <= task.max_source_len
        assert max(len(t) for _, t in pairs) <= task.max_target_len
        assert set("".join(s for s, _ in pairs)) <= set(task.source_chars)
        assert set("".join(t for _, t in pairs)) <= set(task.target_chars)
        assert task.title and task.description


@pytest.mark.parametrize("task", TASKS)
def test_pairs_are_seeded(task):
    assert make_pairs(task, 50, 7) == make_pairs(task, 50, 7)
    assert make_pairs(task, 50, 7) != make_pairs(task, 50, 8)
    assert make_pairs(task, 20, 7) == make_pairs(task, 50, 7)[:20]  # one stream
    assert draw_pairs(task, 50, "7:validation") != make_pairs(task, 50, 7)


def test_reverse_pairs_and_their_anti_diagonal():
    for source, target in make_pairs("reverse", 200, 0):
        assert target == source[::-1] and 3 <= len(source) <= 12
        spans = known_alignment("reverse", source, target)
        assert [source[a:b] for a, b in spans] == list(target)
    assert known_alignment("reverse", "abc", "cba") == ((2, 3), (1, 2), (0, 1))


def test_make_pairs_pinned():
    # Python's random.Random(str) is stable across versions: these pairs never change.
    assert make_pairs("dates", 2, 0) == [
        ("2018.03.23", "2018-03-23"),
        ("11 October '13", "2013-10-11"),
    ]
    assert make_pairs("reverse", 1, 0) == [("41ciotcw", "wctoic14")]
    assert make_pairs("german_numbers", 1, 0) == [("einhundertfünfundvierzig", "145")]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(task="translate", n=5, seed=0), '`task` must be one of "dates", "reverse"'),
        (dict(task="dates", n=0, seed=0), "`n` must be from 1 to 1000000. Received: 0"),
        (dict(task="dates", n=2.5, seed=0), "`n` must be a whole number"),
        (dict(task="dates", n=True, seed=0), "`n` must be a whole number"),
        (dict(task="dates", n=5, seed=-1), "`seed` must be from 0 to"),
        (dict(task="dates", n=5, seed="1"), "`seed` must be a whole number"),
    ],
    ids=["task", "n-zero", "n-float", "n-bool", "seed-negative", "seed-text"],
)
def test_make_pairs_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_pairs(**kwargs)


def test_known_alignment_rejects_wrong_pairs():
    with pytest.raises(ValueError, match="not 'abc' reversed"):
        known_alignment("reverse", "abc", "abc")
    with pytest.raises(ValueError, match="`source` must be a string"):
        known_alignment("reverse", 123, "321")


@pytest.mark.parametrize(
    ("task", "text", "why"),
    [
        ("dates", "31 feb 2021", "not a real date between 1950 and 2049"),
        ("dates", "1 jan 2100", "not a real date between 1950 and 2049"),
        ("dates", "31 February 2021", "not written in one of the 12 formats"),
        ("dates", "tomorrow", "not written in one of the 12 formats"),
        ("dates", "22 Nov 2026", None),
        ("reverse", "ab", "it has 2 characters; the model only saw 3 to 12"),
        ("reverse", "attn42", None),
        ("german_numbers", "tausend", "not a German number word from 1 to 999"),
        ("german_numbers", "vierundzwanzig", None),
    ],
)
def test_inputs_unlike_the_training_are_named(task, text, why):
    found = outside_training(task, text)
    assert (found is None) if why is None else why in found


def test_every_task_lists_what_it_was_trained_on():
    dates = get_task("dates").trained_on
    assert len(dates) == 12 and dates[2] == "Sunday, 22 November 2026"
    assert all(get_task(t).trained_on for t in TASKS)


def test_a_date_outside_the_formats_still_aligns_when_it_shows_its_parts():
    with pytest.raises(ValueError):
        known_alignment("dates", "3 March 2021", "2021-03-03")  # not a trained format
    spans = known_alignment("dates", "3 March 2021", "2021-03-03", any_form=True)
    assert spans == ((8, 12),) * 4 + (None, (2, 7), (2, 7), None, (0, 1), (0, 1))
    with pytest.raises(ValueError, match="does not show the day"):
        known_alignment("dates", "March 2021", "2021-03-03", any_form=True)
