"""Tests for core/kept.py: built once per key, the least recently used dropped first, None and
unhashable keys not kept, sizes checked."""

import threading

import pytest

from attnviz.core.kept import Kept


def test_a_thing_is_built_once_and_the_least_recently_used_goes_first():
    built = []

    def build(key):
        return lambda: built.append(key) or f"thing {key}"

    kept = Kept(2)
    assert kept.get("a", build("a")) == kept.get("a", build("a")) == "thing a"
    kept.get("b", build("b"))
    kept.get("a", build("a"))  # a used: b is now the oldest
    kept.get("c", build("c"))  # b goes
    assert len(kept) == 2 and built == ["a", "b", "c"]
    kept.get("a", build("a"))
    kept.get("b", build("b"))
    assert built == ["a", "b", "c", "b"]


def test_none_and_unhashable_keys_are_built_each_time():
    calls = []
    kept = Kept(4)
    for _ in range(2):
        assert kept.get("none", lambda: calls.append(1)) is None
        assert kept.get(("list", [1]), lambda: calls.append(2) or 2) == 2
    assert calls == [1, 2, 1, 2] and len(kept) == 0
    kept.put("x", 1)
    assert kept.get("x", lambda: 2) == 1


def test_threads_share_what_is_kept():
    kept, results = Kept(8), []
    threads = [threading.Thread(target=lambda: results.append(kept.get("k", object)))
               for _ in range(8)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8 and kept.get("k", object) in results


def test_a_size_below_one_is_refused():
    with pytest.raises(ValueError, match="`size` must be"):
        Kept(0)
