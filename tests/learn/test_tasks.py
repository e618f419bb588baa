"""Tests for learn/tasks.py: the task table, seeded pairs, known alignments, input checks."""

import pytest

import attnviz.learn
from attnviz.learn.tasks import TASKS, draw_pairs, get_task, known_alignment, make_pairs


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
