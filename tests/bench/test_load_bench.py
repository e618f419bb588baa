"""`bench.load_bench`'s lecture hall and students per core: the figures and targets it reports
from what the sessions saw (no server started here)."""

from __future__ import annotations

import os

import pytest

from bench import load_bench
from bench.load_bench import Tally

from .test_pages import _run


def _tally(latencies_ms: list[float], seconds: float = 10.0, errors: int = 0) -> Tally:
    return Tally(latencies_ms={"causal": latencies_ms}, seconds=seconds,
                 errors=[f"error {i}" for i in range(errors)])  # fmt: skip


def test_the_hall_meets_its_targets_only_within_its_ratios_of_the_floor():
    floor = _tally([100.0] * 95 + [400.0] * 5)  # 100 interactions in 10 s, p95 from the tail
    same = load_bench._hall_figures(_tally([100.0] * 95 + [400.0] * 5), floor)  # noqa: SLF001
    served, _, p95, errors, leaks = same
    assert served.value == served.baseline == pytest.approx(10.0) and served.met
    assert p95.value == p95.baseline and p95.met
    assert errors.met and leaks.met
    slower = load_bench._hall_figures(_tally([100.0] * 90, errors=1), floor)  # noqa: SLF001
    served, _, p95, errors, _ = slower
    assert served.value == pytest.approx(9.0) and not served.met  # 0.9x the floor's rate
    assert p95.value == pytest.approx(100.0) and p95.met  # its p95 is lower
    assert not errors.met and errors.note == "error 0"
    tail = load_bench._hall_figures(_tally([100.0] * 90 + [500.0] * 10), floor)  # noqa: SLF001
    assert tail[0].met and not tail[2].met  # p95 500 ms > 1.1 x the floor's


def test_students_per_core_is_the_last_level_served_under_a_second(monkeypatch):
    p95s = {20: 300.0, 40: 900.0, 60: 1200.0, 80: 500.0}  # 80 is never tried
    tried, pinned, clients = [], [], []

    class Server:
        class process:  # noqa: N801 - stands in for a Popen
            pid = os.getpid()

    async def warm_up(base, name, processes) -> None:
        pass

    async def measure(base, name, processes, users, seconds) -> Tally:
        tried.append(users)
        clients.append(os.sched_getaffinity(0))  # where the clients run meanwhile
        return _tally([p95s[users]] * 20)

    monkeypatch.setattr(
        load_bench, "_start", lambda name, k: ("http://app", [Server], lambda: None)
    )
    monkeypatch.setattr(load_bench, "_warm_up", warm_up)
    monkeypatch.setattr(load_bench, "_measure", measure)
    monkeypatch.setattr(load_bench, "_pin", lambda pid, cpu: pinned.append((pid, cpu)))
    first, *rest = sorted(os.sched_getaffinity(0))
    served, note = _run(load_bench._per_core("floor", (20, 40, 60, 80), 5.0))  # noqa: SLF001
    assert (served, tried) == (40, [20, 40, 60])
    assert note == "20: p95 300 ms, 0 errors; 40: p95 900 ms, 0 errors; 60: p95 1200 ms, 0 errors"
    assert pinned == [(os.getpid(), first)]  # the server on one CPU, the clients on the others
    assert clients == [set(rest) or {first}] * 3
