"""Counted nouns: singular at 1, plural otherwise."""

import numpy as np
import pytest

from attnviz.core.words import plural, plural_of


@pytest.mark.parametrize(
    ("n", "noun", "expected"),
    [
        (1, "key", "1 key"),
        (0, "key", "0 keys"),
        (2, "query", "2 queries"),
        (1, "query", "1 query"),
        (3, "day", "3 days"),
        (2, "box", "2 boxes"),
        (2, "matrix", "2 matrices"),
        (3, "epoch", "3 epochs"),  # a hard "ch": not "epoches"
        (2, "batch", "2 batches"),
        (1, "padding key", "1 padding key"),
        (4, "padding key", "4 padding keys"),
        (1024, "token", "1,024 tokens"),
        (np.int64(1), "row", "1 row"),
        (2.0, "row", "2 rows"),
    ],
    ids=str,
)
def test_plural(n, noun, expected):
    assert plural(n, noun) == expected


def test_an_irregular_plural_can_be_given():
    assert plural(2, "person", "people") == "2 people"
    assert plural(1, "person", "people") == "1 person"


def test_plural_of_a_phrase_changes_its_last_word():
    assert plural_of("cached key") == "cached keys"


@pytest.mark.parametrize("n", [1.5, True, "two"], ids=str)
def test_plural_rejects_what_is_not_a_count(n):
    with pytest.raises(ValueError, match="whole number"):
        plural(n, "key")
