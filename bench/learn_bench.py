"""Learned attention: `attnviz.learn.train` against a plain `keras.Model.fit` of the same model.

    python -m bench.learn_bench [--quick]      # from the repository root

Two sections, every figure a median beside a baseline measured in the same run:

1. Throughput. `train("dates", NetworkConfig("dot"), TrainConfig(...))` on 10,000 pairs
   (batch 128, 5 epochs, no early stop) against `fit` of the same network (`Seq2SeqAttention`
   built from the same seed, compiled by the same `compile_for_training`) on the same arrays,
   without validation. Epoch time is the
   wall time between the ends of consecutive epochs, from epoch 2 on (epoch 1 holds the
   graph tracing); for `train` it includes the per-epoch greedy validation (256 pairs, the
   default), the probe's translation and the best-weights copy. Whole-run time (building,
   tracing, epoch 0 report, final alignment score) is shown too. The two run round-robin,
   3 times each.
2. Time to >= 99 % validation character accuracy on dates, per score kind: `train` with a
   callback that stops once greedy validation reaches 99 %, against `fit` of the same model
   stopped by a Keras callback once Keras's own (teacher-forced) `val_accuracy` reaches 99 %.
   Seeds 0, 1, 2; medians. Target: under 30 s.

Prints the machine, then one table per section (bench/report.py's format).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

from attnviz.core.score_kinds import SCORE_KINDS  # noqa: E402
from attnviz.learn.configs import NetworkConfig, TrainConfig  # noqa: E402
from attnviz.learn.translation.model import Seq2SeqAttention  # noqa: E402
from attnviz.learn.translation.tasks import draw_pairs, make_pairs  # noqa: E402
from attnviz.learn.translation.training import compile_for_training, train, training_arrays  # noqa: E402
from bench.report import Figure, interleaved, machine_lines, progress, table  # noqa: E402

TASK, PAIRS, VAL_PAIRS, BATCH, EPOCHS, RATE = "dates", 10_000, 256, 128, 5, 5e-3
SEEDS = (0, 1, 2)  # seeds of the time-to-99 % runs
TARGET_ACCURACY = 0.99


class _EpochEnds(keras.callbacks.Callback):
    """Records the clock at the start of fit and at every epoch end; stops at a val_accuracy."""

    def __init__(self, stop_at: float | None = None) -> None:
        super().__init__()
        self.stop_at = stop_at
        self.ends: list[float] = []
        self.reached: float | None = None

    def on_train_begin(self, logs=None):
        self.begin = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.ends.append(time.perf_counter())
        if self.stop_at is not None and logs.get("val_accuracy", 0.0) >= self.stop_at:
            self.reached = self.ends[-1]
            self.model.stop_training = True


def _plain_fit(seed: int, epochs: int, stop_at: float | None = None) -> tuple[float, _EpochEnds]:
    """Build the same model, compile it the same way and `fit` it; (whole seconds, clock)."""
    start = time.perf_counter()
    model = Seq2SeqAttention(TASK, NetworkConfig(score="dot"), seed)
    x, y, w = training_arrays(model, make_pairs(TASK, PAIRS, seed))
    validation = None
    if stop_at is not None:  # Keras's own validation: teacher-forced accuracy
        val = draw_pairs(TASK, VAL_PAIRS, f"{seed}:validation")
        validation = training_arrays(model, val)
    clock = _EpochEnds(stop_at)
    keras.utils.set_random_seed(seed)
    compile_for_training(model, RATE).fit(
        x, y, sample_weight=w, batch_size=BATCH, epochs=epochs, verbose=0,
        validation_data=validation, callbacks=[clock],
    )  # fmt: skip
    return time.perf_counter() - start, clock


def _epoch_seconds(ends: list[float]) -> list[float]:
    """Seconds of epochs 2, 3, ...: between consecutive epoch ends."""
    return [b - a for a, b in zip(ends, ends[1:], strict=False)]


def throughput(repeats: int) -> list[Figure]:
    """Section 1: steady-state epoch time and whole-run time, train vs plain fit."""
    epochs: dict[str, list[float]] = {"train": [], "fit": []}

    def run_train():
        reports = []
        settings = TrainConfig(EPOCHS, n_pairs=PAIRS, val_pairs=VAL_PAIRS, batch_size=BATCH,
                               learning_rate=RATE)  # fmt: skip
        train(TASK, NetworkConfig("dot"), settings, callback=reports.append)
        epochs["train"] += _epoch_seconds([r.seconds for r in reports[1:]])

    def run_fit():
        _, clock = _plain_fit(0, EPOCHS)
        epochs["fit"] += _epoch_seconds(clock.ends)

    progress(f"throughput: train vs fit, {repeats} runs each of {EPOCHS} epochs")
    whole = interleaved({"train": run_train, "fit": run_fit}, repeats, warmup=0)
    per_epoch = {k: statistics.median(v) for k, v in epochs.items()}
    runs = {k: statistics.median(v) for k, v in whole.items()}
    ratio = per_epoch["train"] / per_epoch["fit"]
    note = (
        f"{PAIRS:,} pairs, batch {BATCH}; train's epoch includes greedy validation of "
        f"{VAL_PAIRS} pairs; {len(epochs['train'])} epochs per subject; throughput "
        f"{PAIRS / per_epoch['train']:,.0f} vs {PAIRS / per_epoch['fit']:,.0f} pairs/s"
    )
    return [
        Figure("epoch time (epochs 2+)", per_epoch["train"], "fit", per_epoch["fit"], "s",
               "≤ 1.10× fit", ratio <= 1.10, note),
        Figure(f"whole run, {EPOCHS} epochs", runs["train"], "fit", runs["fit"], "s", "", None,
               "building, tracing, epoch-0 report and final alignment score included"),
    ]  # fmt: skip


def time_to_accuracy(seeds: tuple[int, ...]) -> list[Figure]:
    """Section 2: seconds until validation character accuracy >= 99 %, per score kind."""
    figures = []
    for score in SCORE_KINDS:
        ours, plain, epochs = [], [], []
        for seed in seeds:
            progress(f"time to 99 %: {score}, seed {seed}")
            hits: list = []

            def stop(report, hits=hits):
                if report.epoch and report.val_char_accuracy >= TARGET_ACCURACY:
                    hits.append(report)
                    return True
                return False

            train(TASK, NetworkConfig(score), TrainConfig(epochs=10, seed=seed), callback=stop)
            ours.append(hits[0].seconds if hits else float("nan"))
            epochs.append(hits[0].epoch if hits else 0)
            if score == "dot":  # the baseline: the same dot model in a plain fit
                start = time.perf_counter()
                _, clock = _plain_fit(seed, 10, stop_at=TARGET_ACCURACY)
                plain.append((clock.reached or float("nan")) - start)
        value = statistics.median(ours)
        base = statistics.median(plain) if plain else None
        figures.append(
            Figure(f"dates {score}: to 99 % val chars", value, "fit (dot)" if plain else "",
                   base, "s", "< 30 s", value < 30,
                   f"seeds {list(seeds)}: {', '.join(f'{s:.1f}' for s in ours)} s, epochs "
                   f"{epochs}" + (f"; fit (teacher-forced val_accuracy): "
                                  f"{', '.join(f'{s:.1f}' for s in plain)} s" if plain else ""))
        )  # fmt: skip
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.learn_bench", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="1 repeat and 1 seed: a smoke run")
    args = parser.parse_args(argv)
    print("attnviz learn benchmark" + (" (--quick)" if args.quick else ""))
    for line in machine_lines("/usr/bin/chromium"):
        print(f"  {line}")
    print()
    print(table("1. Training throughput: train vs plain fit (dates, dot)",
                throughput(1 if args.quick else 3)))  # fmt: skip
    print()
    print(table("2. Time to >= 99 % validation character accuracy (dates)",
                time_to_accuracy(SEEDS[:1] if args.quick else SEEDS)))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
