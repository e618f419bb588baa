"""A stand-in for `train` for the training-run tests (`TrainingRun.start(..., fit=fake.fit)`):
no TensorFlow, every epoch reported at once, held where a test wants it."""

from __future__ import annotations

import threading

from attnviz.learn.translation.training import EpochReport


class ScriptedTraining:
    """Reports epoch 0 to the epoch cap (validation accuracy epoch / 10, each the best so far,
    `seconds` = the epoch), holding after epoch `hold_after` until `release` is set; stops when
    the callback says so; raises `error` instead of epoch `fail_at`. Counts its calls and the
    threads they ran on."""

    def __init__(self, hold_after: int | None = None, error: Exception | None = None,
                 fail_at: int = 1) -> None:  # fmt: skip
        self.hold_after = hold_after
        self.error, self.fail_at = error, fail_at
        self.threads: list[int] = []  # `threading.get_ident()` of each call
        self.started = threading.Event()  # set when a call starts
        self.held = threading.Event()  # set when a call holds
        self.release = threading.Event()  # set by the test: the calls go on
        self.stopped_after: int | None = None  # the epoch whose callback said stop

    @property
    def calls(self) -> int:
        """Trainings started."""
        return len(self.threads)

    def fit(self, task, network, training, callback):
        self.threads.append(threading.get_ident())
        self.started.set()
        for epoch in range(training.epochs + 1):
            if self.error is not None and epoch == self.fail_at:
                raise self.error
            if callback(EpochReport(epoch, None, None, epoch / 10, 0.0, float(epoch), None, True)):
                self.stopped_after = epoch
                return None
            if epoch == self.hold_after:
                self.held.set()
                assert self.release.wait(60)
        return None
