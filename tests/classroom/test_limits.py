"""At most a few answers a second per session."""

from __future__ import annotations

import threading

import pytest

from attnviz.classroom.limits import RateLimit


def test_a_few_a_second_then_refused_then_allowed_again():
    now = [0.0]
    limit = RateLimit(3, 1.0, clock=lambda: now[0])
    assert [limit.allow("a") for _ in range(4)] == [True, True, True, False]
    assert limit.allow("b")  # another session is not held up
    now[0] = 0.99
    assert not limit.allow("a")
    now[0] = 1.0
    assert limit.allow("a")  # the first answer is a second old


def test_threads_share_the_limit():
    limit = RateLimit(3, 60.0)
    allowed = []
    threads = [threading.Thread(target=lambda: allowed.append(limit.allow("a"))) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(allowed) == 3


def test_bad_limits():
    with pytest.raises(ValueError, match="at least 1 event"):
        RateLimit(0, 1.0)
