"""Tests for learn/translation/vocab.py: ids, teacher-forcing arrays and the checks on typed
text."""

import numpy as np
import pytest

from attnviz.learn.translation.tasks import get_task
from attnviz.learn.translation.vocab import END, PAD, START, Vocabulary

REVERSE = Vocabulary.of(get_task("reverse"))


def test_sizes():
    assert REVERSE.source_size == 37  # 26 letters + 10 digits + padding
    assert REVERSE.target_size == 39  # + padding, start, end
    assert REVERSE.target_steps == 13


def test_encode_sources_pads_with_zeros():
    ids = REVERSE.encode_sources(["ab", "0"])
    a, b, zero = (REVERSE.source_chars.index(c) + 1 for c in "ab0")
    assert ids.shape == (2, 12) and ids.dtype == np.int32
    assert ids[0, :3].tolist() == [a, b, PAD] and ids[1, :2].tolist() == [zero, PAD]


def test_teacher_forcing_arrays():
    inputs, targets, weights = REVERSE.encode_targets(["ba"])
    b, a = (REVERSE.target_chars.index(c) + 3 for c in "ba")
    assert inputs[0, :4].tolist() == [START, b, a, PAD]
    assert targets[0, :4].tolist() == [b, a, END, PAD]
    assert weights[0, :4].tolist() == [1, 1, 1, 0] and weights.sum() == 3


def test_decode_stops_at_end():
    ids = [REVERSE.target_chars.index(c) + 3 for c in "xy"]
    assert REVERSE.decode_target([*ids, END, ids[0]]) == "xy"
    assert REVERSE.decode_target(ids) == "xy"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "`text` is empty. Type 1 to 12 characters for the reverse task"),
        ("a" * 13, "too long for the reverse task: 13 characters, the most is 12"),
        ("abC d!", r"does not know: ' ', '!', 'C'\. Allowed: 'abcdefghijklmnopqrstuvwxyz0123"),
        (42, "`text` must be a string. Received: 42"),
    ],
    ids=["empty", "long", "characters", "type"],
)  # fmt: skip
def test_check_source_messages(text, match):
    with pytest.raises(ValueError, match=match):
        REVERSE.check_source(text)
