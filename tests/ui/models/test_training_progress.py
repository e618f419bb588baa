"""Tests for ui/models/training_progress.py: its words about a shared run, and the figures
every session watching one run shares."""

from __future__ import annotations

import threading
import time

import app_support as ui
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attnviz.core.kept import Kept
from attnviz.learn.configs import TrainConfig
from attnviz.learn.runs import RunSnapshot, TrainingRun
from attnviz.learn.runs.store import MemoryRunStore
from attnviz.learn.runs.worker import stop_worker
from attnviz.learn.translation.model import Translation
from attnviz.learn.translation.training import EpochReport
from attnviz.ui.models import training_progress
from attnviz.ui.models.training_progress import sharing_words


@pytest.mark.parametrize(
    ("others", "source", "expected"),
    [
        (0, "new", ""),
        (0, "shared", ""),  # the others stopped watching
        (1, "shared", "1 other is watching this run"),
        (12, "new", "12 others are watching this run"),
        (0, "finished", "Trained before with the same settings: served from the store."),
    ],
)
def test_the_page_says_when_a_run_is_shared_or_came_from_a_finished_one(others, source, expected):
    words = sharing_words(RunSnapshot("training", (), 5, others=others, source=source))
    assert words.startswith(expected) and bool(words) == bool(expected)


class _Stepped:
    """A stand-in for `train` whose reports carry a probe (as `train`'s do): epochs 0 and 1 at
    once, then one more epoch each time `step` is set."""

    def __init__(self) -> None:
        self.step = threading.Event()
        self.held = threading.Event()  # set each time it waits for `step`

    def fit(self, task, network, training, callback):
        for epoch in range(training.epochs + 1):
            weights = np.full((3, 3), 1 / 3, dtype=np.float32)  # (T_out, T_in)
            weights[:, epoch % 3] += 1.0  # each epoch's probe differs
            weights /= weights.sum(axis=1, keepdims=True)
            probe = Translation("abc", "cba", weights, tuple("abc"), tuple("cba"))
            if callback(EpochReport(epoch, None, None, epoch / 10, 0.0, float(epoch), probe,
                                    True)):  # fmt: skip
                return None
            if epoch >= 1:
                self.step.clear()
                self.held.set()
                assert self.step.wait(60)
                self.held.clear()
        return None


def _watching() -> None:
    import streamlit as st

    from attnviz.ui.models.training_progress import progress

    progress(st.session_state["watched"])


def _session(run) -> AppTest:
    at = AppTest.from_function(_watching, default_timeout=30)
    at.session_state["watched"] = run
    return at.run()


def test_sessions_watching_one_run_share_its_figures_built_once_per_epoch(monkeypatch):
    built = []
    for name in ("training_curves", "translation_figure"):
        monkeypatch.setattr(training_progress, name, _counted(built, name))
    monkeypatch.setattr(training_progress, "_FIGURES", Kept(training_progress.SHARED_FIGURES))
    fake, store = _Stepped(), MemoryRunStore()
    runs = [
        TrainingRun.start("reverse", None, TrainConfig(5), store=store, fit=fake.fit) for _ in "ab"
    ]
    try:
        assert fake.held.wait(30)  # epochs 0 and 1 reported
        sessions = [_session(run) for run in runs]
        for at in sessions:
            at.run()  # a poll that finds nothing new
        assert sorted(built) == ["training_curves", "translation_figure"]  # once, for both
        first, second = (ui.specs(at) for at in sessions)
        assert first == second and ui.chart(sessions[0], "Loss and accuracy")["data"][0]["x"] == [
            0,
            1,
        ]
        fake.step.set()  # epoch 2
        assert _reported(runs[0], 3)
        for at in sessions:
            at.run()
        assert sorted(built) == ["training_curves"] * 2 + ["translation_figure"] * 2
        probe = ui.chart(sessions[1], "Epoch 2: ")  # the new epoch's probe, drawn afresh
        np.testing.assert_allclose(ui.decode(probe["data"][0]["z"]).sum(axis=1), 1.0, rtol=1e-6)
        curves = ui.chart(sessions[0], "Loss and accuracy")["data"][2]  # validation characters
        assert curves["y"] == pytest.approx([0.0, 10.0, 20.0])
    finally:
        for run in runs:
            run.stop()
        fake.step.set()
        stop_worker(store, timeout=None)


def _counted(built: list[str], name: str):
    """`training_progress`'s `name`, noting each call in `built`."""
    real = getattr(training_progress, name)

    def counted(*args, **kwargs):
        built.append(name)
        return real(*args, **kwargs)

    return counted


def _reported(run, n: int) -> bool:
    """Wait until `run` has `n` reports (at most 30 s)."""
    deadline = time.monotonic() + 30
    while len(run.snapshot().reports) < n and time.monotonic() < deadline:
        time.sleep(0.02)
    return len(run.snapshot().reports) >= n


def test_a_watching_page_follows_its_run_and_is_run_again_when_an_epoch_is_published():
    # no polling: the page follows its run; the server's watch (one small read per run) runs
    # it again once the run publishes an epoch, and not before; an ended run is not followed

    from attnviz.ui.classroom import watch

    fake, store, session = _Stepped(), MemoryRunStore(), ""
    run = TrainingRun.start("reverse", None, TrainConfig(3), store=store, fit=fake.fit)
    asked: list[str] = []

    def rerun(session: str) -> bool:
        asked.append(session)
        return True

    try:
        assert fake.held.wait(30)  # epochs 0 and 1 reported
        at = _session(run)
        followed = {s: f for s, f in watch.following().items() if f[0].startswith("run:")}
        assert len(followed) == 1
        ((session, (name, version)),) = followed.items()
        assert training_progress.run_version(name) == version  # nothing new yet
        assert _in_a_loop_of_its_own(watch.step(training_progress.run_version, rerun)) == 0
        fake.step.set()  # epoch 2 published
        assert _reported(run, 3)
        assert _in_a_loop_of_its_own(watch.step(training_progress.run_version, rerun)) == 1
        assert asked == [session]
        at.run()  # the run the watch asked for: the new epoch shown, the new version followed
        assert watch.following()[session] == (name, training_progress.run_version(name))
        fake.step.set()  # epoch 3, the last
        assert _reported(run, 4)
        fake.step.set()  # the run ends
        assert run.join(30).state == "done"
        at.run()
        assert session not in watch.following()
    finally:
        run.stop()
        fake.step.set()
        stop_worker(store, timeout=None)
        watch.forget(session)


def test_a_run_no_longer_kept_is_gone_for_the_watch():
    from attnviz.ui.classroom import watch

    store = MemoryRunStore()
    training_progress._STORES[id(store)] = store  # noqa: SLF001 - as a page that followed it
    assert training_progress.run_version(f"run:{id(store)}:404") == watch.GONE
    assert training_progress.run_version("run:1:1") == watch.GONE  # no such store here


def _in_a_loop_of_its_own(coroutine):
    """`coroutine`'s result, in a thread's own event loop (a browser test's may be running)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=60)


def _epochs_page() -> None:
    import streamlit as st

    from attnviz.ui.models.training_progress import PROBE_EPOCHS

    epochs = list(range(st.session_state.get("published", 1)))  # the run's epochs so far
    st.write(f"shown: {PROBE_EPOCHS.draw(epochs)}")


def _shown(at: AppTest) -> int:
    (text,) = [m.value for m in at.markdown if m.value.startswith("shown: ")]
    return int(text.removeprefix("shown: "))


def test_the_probe_slider_follows_the_newest_epoch_until_the_learner_picks_another():
    at = AppTest.from_function(_epochs_page, default_timeout=30).run()
    assert _shown(at) == 0 and not at.select_slider  # one epoch: no slider
    for published in (2, 3):
        at.session_state["published"] = published
        at.run()
        assert _shown(at) == published - 1 and at.select_slider[0].value == published - 1
    # a server-run epoch the browser has not drawn yet; then the browser's own rerun, which
    # still carries the slider it drew (at epoch 2): not a pick, the page follows epoch 3
    drawn = at._tree  # noqa: SLF001 - the browser's elements as they were
    at.session_state["published"] = 4
    at.run()
    assert _shown(at) == 3
    at._tree = drawn  # noqa: SLF001
    drawn.select_slider[0].set_value(2)  # what the browser's slider shows, and sends
    at.run()
    ui.assert_ok(at)
    assert _shown(at) == 3 and at.select_slider[0].value == 3
    at.session_state["published"] = 5
    at.run()
    assert _shown(at) == 4  # still following
    at.select_slider[0].set_value(1).run()  # the learner's pick
    assert _shown(at) == 1
    at.session_state["published"] = 6
    at.run()
    assert _shown(at) == 1 and at.select_slider[0].value == 1  # kept as the epochs go on
    at.select_slider[0].set_value(5).run()  # the newest: follow again
    at.session_state["published"] = 7
    at.run()
    assert _shown(at) == 6
