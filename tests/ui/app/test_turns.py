"""Tests for ui/app/turns.py: page runs take turns, one at a time, first come first served; a
run that holds its turn for `hold_s` lets the next start beside it; a run that raises gives its
turn up; the shell draws every page inside a turn."""

from __future__ import annotations

import threading
import time

import pytest

from attnviz.ui.app import shell, turns
from attnviz.ui.app.turns import PAGE_TURNS, Turns


def _run_all(turns: Turns, runs: int, work_s: float, spacing_s: float = 0.0) -> list[tuple]:
    """`runs` threads, started `spacing_s` apart, each taking a turn for `work_s`: each one's
    (number, start, end) inside its turn, in the order they got it."""
    got: list[tuple] = []
    lock = threading.Lock()

    def run(n: int) -> None:
        with turns.turn():
            start = time.monotonic()
            with lock:
                got.append((n, start))
            time.sleep(work_s)
            end = time.monotonic()
        with lock:
            got[[g[0] for g in got].index(n)] = (n, start, end)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(runs)]
    for thread in threads:
        thread.start()
        time.sleep(spacing_s)
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    return got


def test_runs_take_turns_one_at_a_time_in_the_order_they_came():
    got = _run_all(Turns(hold_s=5.0), runs=8, work_s=0.03, spacing_s=0.005)
    assert [n for n, _, _ in got] == list(range(8))  # first come, first served
    for (_, _, end), (_, start, _) in zip(got, got[1:], strict=False):
        assert start >= end  # never two at once


def test_many_runs_at_once_all_get_their_turn():
    got = _run_all(Turns(hold_s=5.0), runs=40, work_s=0.001)
    assert sorted(n for n, _, _ in got) == list(range(40))
    spans = sorted((start, end) for _, start, end in got)
    assert all(nxt[0] >= prev[1] for prev, nxt in zip(spans, spans[1:], strict=False))


def test_a_long_run_lets_the_next_start_beside_it_after_hold_s():
    turns = Turns(hold_s=0.1)
    got = _run_all(turns, runs=2, work_s=0.6, spacing_s=0.01)
    (_, first_start, first_end), (_, second_start, _) = got
    assert 0.09 <= second_start - first_start < 0.4  # after hold_s, not after the first's end
    assert second_start < first_end
    assert turns.waiting() == 0 and not turns.held()


def test_a_run_that_raises_gives_its_turn_up():
    turns = Turns(hold_s=5.0)
    with pytest.raises(RuntimeError), turns.turn():
        raise RuntimeError("a rerun or a stop raises through the turn")
    start = time.monotonic()
    with turns.turn():  # not held: taken at once
        pass
    assert time.monotonic() - start < 0.05


def test_a_waiter_that_gives_up_leaves_the_line(monkeypatch):
    class Interrupted(threading.Condition):  # the waiter named "gives up" is interrupted
        def wait(self, timeout=None):
            if threading.current_thread().name == "gives up":
                raise KeyboardInterrupt
            return super().wait(timeout)

    monkeypatch.setattr(turns.threading, "Condition", Interrupted)
    line = Turns(hold_s=30.0)
    raised, got = [], []

    def give_up() -> None:
        try:
            with line.turn():
                got.append("gives up")
        except KeyboardInterrupt:
            raised.append(True)

    def wait() -> None:
        with line.turn():
            got.append("waits")

    with line.turn():  # held: both must wait, the one that gives up first in line
        first = threading.Thread(target=give_up, name="gives up")
        first.start()
        first.join(timeout=5)
        second = threading.Thread(target=wait)
        second.start()
        time.sleep(0.05)
    second.join(timeout=5)  # long before hold_s: the line did not wait for the one who left
    assert raised == [True] and got == ["waits"]
    assert line.waiting() == 0 and not line.held()


def test_hold_s_must_be_positive():
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="hold_s must be a positive number"):
            Turns(hold_s=bad)


def test_the_shell_draws_every_page_inside_a_turn(monkeypatch):
    seen = []

    def draw() -> None:
        seen.append(PAGE_TURNS.held())

    monkeypatch.setattr(shell, "_draw", draw)
    shell.main()
    assert seen == [True]
    assert not PAGE_TURNS.held()  # given up once the page is drawn
