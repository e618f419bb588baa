"""Tests for learn/language/tasks.py: the induction sequences and the text windows, their ids and
streams, the checks on text and on task sizes. No TensorFlow here."""

import string
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.learn.language.tasks import (
    BOS,
    COPY_SHAPES,
    LM_TASKS,
    allowed_characters,
    corpus_text,
    draw_sequences,
    get_lm_task,
    induction_task,
    make_sequences,
    shape_sequences,
)

ROOT = Path(__file__).parents[3]


def _copies(row: np.ndarray) -> list[tuple[int, int]]:
    """`(start, length)` of each copy in `row`'s letters: maximal stretches whose every letter
    was seen before and continues the stretch it was copied from."""
    body, copies, last, source = row[1:].tolist(), [], {}, -2
    for i, x in enumerate(body):
        j = last.get(x, -1)
        if j >= 0 and copies and j == source + 1 and copies[-1][0] + copies[-1][1] == i:
            copies[-1] = (copies[-1][0], copies[-1][1] + 1)
        elif j >= 0:
            copies.append((i, 1))
        source, last[x] = j, i
    return copies


def test_induction_sequences_are_runs_written_again_among_letters_written_once():
    ids = make_sequences("induction", 400, seed=4)
    assert ids.shape == (400, 33) and ids.dtype == np.int32  # <s> and T = 32 letters
    assert (ids[:, 0] == BOS).all() and (ids[:, 1:] >= 1).all() and (ids[:, 1:] <= 26).all()
    firsts, lengths, apart = [], [], 0
    for row in ids:
        copies = _copies(row)
        body = row[1:]
        assert copies and (body[1:] != body[:-1]).all()  # a copy in each; never a letter twice
        for _, length in copies[:-1]:  # a copy that stops before the end is a whole run
            assert length >= 4
        firsts.append(list(body).index(body[copies[0][0]]))  # where the first run starts
        lengths += [n for _, n in copies[:-1]]
        apart += any(list(body).count(body[s - 1]) == 1 for s, _ in copies)  # a fresh letter
        # just before a copy: the copies are apart (adjacent, the run's last letter is there)
    assert min(firsts) == 0 and max(firsts) >= 20  # the first run starts anywhere
    assert min(lengths) == 4 and max(lengths) >= 12 and 0 < apart < len(ids)


def test_every_copy_shape_is_a_run_written_again():
    for name, shape in COPY_SHAPES.items():
        ids = shape_sequences(name, 100, seed=3)
        assert ids.shape == (100, shape.length + 1) and (ids[:, 0] == BOS).all()
        for row in ids:
            copies = _copies(row)
            assert copies and all(n >= shape.run[0] for _, n in copies[:-1])
            assert get_lm_task("induction").outside(get_lm_task("induction").decode(row)) is None
        np.testing.assert_array_equal(ids, shape_sequences(name, 100, seed=3))
    early = [_copies(row)[0][0] for row in shape_sequences("starts early in a short text", 50, 0)]
    assert max(early) <= 2 + 10  # the copy follows at most 2 letters and a run of 10
    with pytest.raises(ValueError, match="`shape` must be one of"):
        shape_sequences("backwards", 1, 0)


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
    assert {n for row in ids for _, n in _copies(row)[:-1]} <= {4, 5, 8, 10}  # runs, joined
    assert task.symbols == "abcdefghij" and task.labels[:3] == ("<s>", "a", "b")


def test_the_induction_example_ends_in_copies():
    task = get_lm_task("induction")
    example = task.example
    assert len(example) == 23 and task.outside(example) is None
    lead, run, gap = example[:3], example[3:12], example[12:14]
    assert example == lead + run + gap + run  # 3, 9, 2 and 9 letters
    assert len(set(lead + run + gap)) == 14  # every letter before the copy differs


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(symbols=10, min_run=4, max_run=12, context=24), "Too few symbols.*run of 12"),
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
    assert len(text) > 20_000 and set(text) <= set(task.symbols)
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
    allowed = (
        "letters a–z and A–Z, digits 0–9, space, new line and the marks ! \" ' ( ) , - . : ; ?"
    )
    with pytest.raises(ValueError) as refused:
        task.encode("fox # €")
    assert str(refused.value) == (
        "`text` holds characters the text task does not know: '#', '€'. Allowed: "
        f"{allowed}. Remove or replace those characters."
    )
    with pytest.raises(ValueError, match="does not know: 'é'. Allowed: letters a–z. Remove"):
        get_lm_task("induction").encode("café")
    with pytest.raises(ValueError, match="`text` is empty. Type at least one character."):
        task.encode("")
    with pytest.raises(ValueError, match="too long: 600 characters.*at most 511"):
        task.encode("a" * 600)
    with pytest.raises(ValueError, match="`prompt` must be a string. Received: 7"):
        task.encode(7, "prompt")


def test_the_stories_hold_ordinary_english_characters_and_train_on_each():
    task = get_lm_task("text")
    assert task.symbols == "".join(
        sorted(set(string.ascii_letters + string.digits + "\n !\"'(),-.:;?"))
    )
    task.encode('Dad is lazy. Zoe, 10, is not! (X and Y?) "Quiet": 3-4; yes.')
    train = corpus_text()[: int(len(corpus_text()) * 0.9)]
    assert set(train) == set(task.symbols)  # the model saw every character it accepts
    assert (
        allowed_characters("abdxyz01AB.")
        == "letters a, b, d, x–z and A, B, digits 0, 1 and the mark ."
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("qwertzuiopqwertzu", None),  # a run of 10 and its copy, cut by the end
        ("abcdxabcdyzabcdabcd", None),  # copies apart and adjacent
        ("a" * 31 + "b", "32 characters long, and the model trained on 31 after <s>"),
        ("hello", "'l' comes twice in a row at position 4"),
        ("thequickbrownfox", "'o' from position 15 repeats earlier letters but stops after 1"),
        ("abcdefgabcxyz", "'abc' from position 8 repeats earlier letters but stops after 3"),
    ],
)
def test_texts_unlike_the_induction_sequences_say_why(text, why):
    found = get_lm_task("induction").outside(text)
    assert found is None if why is None else why in found


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
        "from attnviz.learn.language.tasks import get_lm_task, make_sequences\n"
        "make_sequences('text', 2, 0)\n"
        "print('tensorflow' in sys.modules, 'keras' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
