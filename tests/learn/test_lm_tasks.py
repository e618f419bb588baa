"""Tests for learn/lm_tasks.py: the induction sequences and the text windows, their ids and
streams, the checks on text and on task sizes. No TensorFlow here."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.learn.lm_tasks import (
    BOS,
    LM_TASKS,
    corpus_text,
    draw_sequences,
    get_lm_task,
    induction_task,
    make_sequences,
)

ROOT = Path(__file__).parents[2]


def _run_length(row: np.ndarray) -> int:
    """The r with the last r letters equal to the r before them (the run written twice)."""
    body = row[1:]
    return next(r for r in range(len(body) // 2, 0, -1) if (body[-r:] == body[-2 * r : -r]).all())


def test_induction_sequences_are_a_run_of_distinct_letters_written_twice():
    ids = make_sequences("induction", 300, seed=4)
    assert ids.shape == (300, 33) and ids.dtype == np.int32  # <s> and T = 32 letters
    assert (ids[:, 0] == BOS).all() and (ids[:, 1:] >= 1).all() and (ids[:, 1:] <= 26).all()
    runs = [_run_length(row) for row in ids]
    assert min(runs) == 12 and max(runs) == 16  # every length from the range turns up
    for row, r in zip(ids, runs, strict=True):
        before = row[1 : 33 - r]  # the letters before the second run, the first run last
        assert len(set(before.tolist())) == len(before)  # all different: one earlier occurrence
        np.testing.assert_array_equal(row[33 - r :], row[33 - 2 * r : 33 - r])


def test_the_same_arguments_give_the_same_sequences_and_streams_differ():
    a = make_sequences("induction", 50, seed=1)
    np.testing.assert_array_equal(a, make_sequences("induction", 50, seed=1))
    assert not np.array_equal(a, make_sequences("induction", 50, seed=2))
    assert not np.array_equal(a, make_sequences("induction", 50, seed=1, split="train"))
    epoch1 = draw_sequences(get_lm_task("induction"), 50, "1:epoch1")
    assert not np.array_equal(epoch1, draw_sequences(get_lm_task("induction"), 50, "1:epoch2"))


def test_a_custom_induction_task_has_its_own_sizes_and_stream():
    task = induction_task(symbols=10, min_run=4, max_run=5, context=12)
    ids = make_sequences(task, 40, seed=0)
    assert ids.shape == (40, 13) and ids.max() <= 10 and task.vocab_size == 11
    assert {_run_length(row) for row in ids} == {4, 5}
    assert task.symbols == "abcdefghij" and task.labels[:3] == ("<s>", "a", "b")


def test_the_induction_example_leaves_the_last_letter_of_its_second_run_to_predict():
    task = get_lm_task("induction")
    example = task.example
    assert len(example) == 31  # <s> and 31 letters: the 32 positions of a training sequence
    run = 14
    assert example[-(run - 1) :] == example[-(2 * run - 1) : -run]  # 13 letters repeated
    assert len(set(example[: 32 - run])) == 32 - run


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(symbols=10, min_run=4, max_run=5, context=20), "Too few symbols.*16 letters"),
        (dict(min_run=8, max_run=6), "`max_run` must be from 8"),
        (dict(max_run=16, context=30), "`context` must be from 32"),
        (dict(symbols=63), "`symbols` must be from 2 to 62"),
    ],
    ids=["few-symbols", "runs-reversed", "context-short", "alphabet"],
)
def test_induction_sizes_that_do_not_fit_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        induction_task(**kwargs)


def test_text_windows_are_slices_of_the_corpus_from_their_split():
    task = get_lm_task("text")
    text = corpus_text()
    assert len(text) > 12_000 and task.symbols == "".join(sorted(set(text)))
    cut = int(len(text) * 0.9)
    for split, part in (("train", text[:cut]), ("validation", text[cut:])):
        ids = make_sequences("text", 20, seed=3, split=split)
        assert ids.shape == (20, 65) and (ids[:, 0] == BOS).all()
        for row in ids:
            assert task.decode(row) in part


def test_encode_and_decode_are_inverse_and_check_the_characters():
    task = get_lm_task("text")
    ids = task.encode("A fox.")
    assert ids[0] == BOS and len(ids) == 7 and task.decode(ids) == "A fox."
    with pytest.raises(ValueError, match="does not know: '#', '€'. Allowed: "):
        task.encode("fox # €")
    with pytest.raises(ValueError, match="`text` is empty. Type at least one character."):
        task.encode("")
    with pytest.raises(ValueError, match="too long: 600 characters.*at most 511"):
        task.encode("a" * 600)
    with pytest.raises(ValueError, match="`prompt` must be a string. Received: 7"):
        task.encode(7, "prompt")


def test_unknown_tasks_splits_and_sizes_are_refused():
    assert LM_TASKS == ("induction", "text")
    with pytest.raises(ValueError, match='`task` must be one of "induction", "text"'):
        make_sequences("dates", 1, 0)
    with pytest.raises(ValueError, match="`split`"):
        make_sequences("text", 1, 0, split="test")
    with pytest.raises(ValueError, match="`n` must be from 1"):
        make_sequences("induction", 0, 0)


def test_the_tasks_load_without_tensorflow():
    probe = (
        "import sys\n"
        "from attnviz.learn.lm_tasks import get_lm_task, make_sequences\n"
        "make_sequences('text', 2, 0)\n"
        "print('tensorflow' in sys.modules, 'keras' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
