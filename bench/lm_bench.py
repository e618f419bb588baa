"""The language model: `attnviz.learn.train_lm` against a plain `keras.Model.fit` of the same
model, and the time until induction forms.

    python -m bench.lm_bench [--quick]      # from the repository root

Runs alone, or as the section `lm` of `python -m bench.benchmark`. Two sections, medians:

1. Throughput. `train_lm("induction")` with the shipped recipe's network and step (`LMConfig()`,
   4,096 fresh sequences an epoch, batch 64, Adam 5e-3, XLA) for 6 epochs, against `fit` of the
   same model (built from the same seed, compiled by the same `compile_lm`) on 4,096 sequences
   drawn once, 6 epochs, shuffled, no validation. Epoch time is the wall time between the ends
   of consecutive epochs from epoch 2 on (epoch 1 holds the XLA compilation); for `train_lm` it
   includes drawing the epoch's fresh sequences, a `fit` call per epoch, the validation (512
   sequences: loss, accuracies, every head's two scores), the probe's forward pass and the
   best-weights copy. The two run round-robin, 3 times each (`--quick`: once). Target: at most
   1.1× the plain fit.
2. Time to 95 % in-context accuracy (validation, the repeated half) with `train_lm` and the
   recipe, stopped by its callback, from building the model (XLA compilation included). Seeds
   0, 1, 2 (`--quick`: 0). Target: under 60 s.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from dataclasses import replace

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from attnviz.learn.language.model import LanguageModel  # noqa: E402
from attnviz.learn.language.tasks import get_lm_task, make_sequences  # noqa: E402
from attnviz.learn.language.training import compile_lm, train_lm  # noqa: E402
from attnviz.learn.recipes import LM_RECIPES  # noqa: E402

TASK = "induction"
EPOCHS = 6  # epochs of each throughput run
SEEDS = (0, 1, 2)  # seeds of the time-to-95 % runs
TARGET = 0.95  # in-context accuracy
RECIPE = LM_RECIPES[TASK]


class _EpochEnds(keras.callbacks.Callback):
    """The clock at every epoch end of a plain fit."""

    def __init__(self) -> None:
        super().__init__()
        self.ends: list[float] = []

    def on_epoch_end(self, epoch, logs=None):
        self.ends.append(time.perf_counter())


def _progress(text: str) -> None:
    print(f"  … {text}", file=sys.stderr, flush=True)


def _epoch_seconds(ends: list[float]) -> list[float]:
    """Seconds of epochs 2, 3, …: between consecutive epoch ends."""
    return [b - a for a, b in zip(ends, ends[1:], strict=False)]


def _plain_fit(seed: int) -> tuple[float, list[float]]:
    """The same model, compiled the same way, `fit` on one draw of sequences: (whole run, epoch
    end times)."""
    start = time.perf_counter()
    training = replace(RECIPE.training, seed=seed)
    model = LanguageModel(TASK, RECIPE.network, seed)
    ids = make_sequences(TASK, training.n_pairs, seed, "train")  # (N, T + 1)
    clock = _EpochEnds()
    keras.utils.set_random_seed(seed)
    compile_lm(model, training.learning_rate).fit(
        ids[:, :-1], ids[:, 1:], batch_size=training.batch_size, epochs=EPOCHS, verbose=0,
        callbacks=[clock],
    )  # fmt: skip
    return time.perf_counter() - start, clock.ends


def _ours(seed: int) -> tuple[float, list[float]]:
    """`train_lm` with the recipe for EPOCHS epochs: (whole run, epoch end times)."""
    start = time.perf_counter()
    reports = []
    training = replace(RECIPE.training, epochs=EPOCHS, seed=seed)
    train_lm(TASK, RECIPE.network, training, callback=reports.append)
    return time.perf_counter() - start, [start + r.seconds for r in reports[1:]]


def throughput(repeats: int) -> list[tuple]:
    """Section 1: (name, value, baseline, unit, target, met, note) rows."""
    epochs: dict[str, list[float]] = {"train_lm": [], "fit": []}
    whole: dict[str, list[float]] = {"train_lm": [], "fit": []}
    subjects = {"train_lm": _ours, "fit": _plain_fit}
    for round_ in range(repeats):
        order = list(subjects) if round_ % 2 == 0 else list(subjects)[::-1]
        for name in order:
            _progress(f"throughput: {name}, round {round_ + 1} of {repeats}")
            seconds, ends = subjects[name](0)
            whole[name].append(seconds)
            epochs[name] += _epoch_seconds(ends)
    per_epoch = {k: statistics.median(v) for k, v in epochs.items()}
    runs = {k: statistics.median(v) for k, v in whole.items()}
    ratio = per_epoch["train_lm"] / per_epoch["fit"]
    n = RECIPE.training.n_pairs
    note = (
        f"{n:,} sequences of {get_lm_task(TASK).context} tokens, batch "
        f"{RECIPE.training.batch_size}; {len(epochs['fit'])} epochs each; train_lm's epoch "
        f"includes fresh sequences, validation of {RECIPE.training.val_pairs} and the probe; "
        f"{n / per_epoch['train_lm']:,.0f} vs {n / per_epoch['fit']:,.0f} sequences/s"
    )
    return [
        ("epoch time (epochs 2+)", per_epoch["train_lm"], per_epoch["fit"], "s", "≤ 1.10× fit",
         ratio <= 1.10, note),
        (f"whole run, {EPOCHS} epochs", runs["train_lm"], runs["fit"], "s", "", None,
         "building, XLA compilation, epoch-0 report included"),
    ]  # fmt: skip


def time_to_target(seeds: tuple[int, ...]) -> list[tuple]:
    """Section 2: seconds (from building the model) until validation in-context accuracy
    reaches TARGET, per seed."""
    seconds, epochs = [], []
    for seed in seeds:
        _progress(f"time to {TARGET:.0%}: seed {seed}")
        hits = []

        def stop(report, hits=hits) -> bool:
            if report.epoch and report.validation.in_context_accuracy >= TARGET:
                hits.append(report)
                return True
            return False

        train_lm(TASK, RECIPE.network, replace(RECIPE.training, seed=seed), callback=stop)
        seconds.append(hits[0].seconds if hits else float("nan"))
        epochs.append(hits[0].epoch if hits else 0)
    value = statistics.median(seconds)
    note = (
        f"seeds {list(seeds)}: {', '.join(f'{s:.1f}' for s in seconds)} s, epochs {epochs} "
        f"(of {RECIPE.training.n_pairs:,} sequences)"
    )
    return [(f"to {TARGET:.0%} in-context accuracy", value, None, "s", "< 60 s", value < 60, note)]


def figures(quick: bool = False) -> list:
    """Both sections as rows of `python -m bench.benchmark --only lm`."""
    from bench.report import Figure

    rows = [*throughput(1 if quick else 3), *time_to_target(SEEDS[:1] if quick else SEEDS)]
    return [
        Figure(name, value, "plain fit" if base is not None else "", base, unit, target, met,
               note)
        for name, value, base, unit, target, met, note in rows
    ]  # fmt: skip


def _table(title: str, rows: list[tuple]) -> str:
    lines = [title, f"  {'figure':34s} {'attnviz':>9s} {'fit':>9s} {'ratio':>6s}  target"]
    for name, value, base, unit, target, met, note in rows:
        ratio = f"{value / base:.2f}×" if base else ""
        base_text = f"{base:.3f} {unit}" if base is not None else ""
        verdict = "" if met is None else ("met" if met else "MISSED")
        lines.append(
            f"  {name:34s} {value:7.3f} {unit} {base_text:>9s} {ratio:>6s}  {target} {verdict}"
        )
        lines.append(f"      {note}")
    return "\n".join(lines)


def _machine() -> list[str]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if "model name" in line)
    except (OSError, StopIteration):
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else ()
    versions = f"TensorFlow {tf.__version__}, Keras {keras.__version__}, numpy {np.__version__}"
    return [
        f"{cpu}, {os.cpu_count()} cores, load average {', '.join(f'{x:.1f}' for x in load)}",
        f"Python {platform.python_version()}, {versions}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 repeat and 1 seed: a smoke run")
    args = parser.parse_args(argv)
    print("attnviz language-model benchmark" + (" (--quick)" if args.quick else ""))
    for line in _machine():
        print(f"  {line}")
    print(f"  model: {RECIPE.network}")
    print()
    print(_table("1. Training throughput: train_lm vs plain fit (induction)",
                 throughput(1 if args.quick else 3)))  # fmt: skip
    print()
    print(_table("2. Time to 95 % in-context accuracy (induction, the recipe)",
                 time_to_target(SEEDS[:1] if args.quick else SEEDS)))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
