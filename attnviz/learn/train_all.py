"""Train and ship one model per task and kind: `python -m attnviz.learn.train_all`.

    python -m attnviz.learn.train_all [--seed 0] [--only dates/dot,reverse/transformer]

For each task in `TASKS` and score in `SCORE_KINDS`, trains a seq2seq model with the task's
`RECIPES` entry, and for each task in `TRANSFORMER_RECIPES` a Transformer (kind
"transformer"), stopping early once every validation pair decodes exactly; evaluates the kept
weights on 1,000 fresh pairs (`make_pairs(task, 1000, TEST_SEED)`, a seed training never uses),
and writes `attnviz/learn/checkpoints/<task>_<kind>.npz` and `.json` (`pretrained.CHECKPOINTS`).
The same seed writes the same weights.
Prints one line per model and a final table; exits with status 1 if a model misses the
shipping bar (exact match >= 0.99 and alignment >= 0.9 on the fresh pairs).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from attnviz.core.score_kinds import SCORE_KINDS  # noqa: E402
from attnviz.learn.metrics import evaluate  # noqa: E402
from attnviz.learn.pretrained import TEST_SEED, save_checkpoint  # noqa: E402
from attnviz.learn.recipes import (  # noqa: E402
    TRANSFORMER,
    TRANSFORMER_RECIPES,
    network_config,
    training_config,
)
from attnviz.learn.tasks import TASKS, make_pairs  # noqa: E402
from attnviz.learn.training import EpochReport, train, train_transformer  # noqa: E402

FRESH_PAIRS = 1000  # pairs each checkpoint is evaluated on
BAR = {"exact_match": 0.99, "alignment": 0.9}  # the least a shipped checkpoint must score


def _stop_when_perfect(report: EpochReport) -> bool:
    """Stop once every validation pair decodes exactly."""
    return report.epoch > 0 and report.val_exact_match >= 1.0


def _train(task: str, kind: str, seed: int):
    """Train the model of `task` and `kind` by its recipe."""
    network, training = network_config(task, kind), training_config(task, kind)
    fit = train_transformer if kind == TRANSFORMER else train
    return fit(task, network, replace(training, seed=seed), callback=_stop_when_perfect)


def train_one(task: str, score: str, seed: int) -> dict:
    """Train, evaluate on fresh pairs and save one checkpoint; return its table row."""
    started = time.perf_counter()
    model = _train(task, score, seed)
    seconds = time.perf_counter() - started
    fresh = evaluate(model, make_pairs(task, FRESH_PAIRS, TEST_SEED))
    row = {
        "task": task,
        "score": score,
        "exact_match": fresh.exact_match,
        "char_accuracy": fresh.char_accuracy,
        "alignment": fresh.alignment,
        "epochs": model.stats.epochs_run,
        "best_epoch": model.stats.best_epoch,
        "seconds": round(seconds, 1),
        "parameters": model.parameter_count,
    }
    save_checkpoint(model, {"fresh": {**row, "pairs": FRESH_PAIRS, "seed": TEST_SEED}})
    return row


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="training seed (default 0)")
    parser.add_argument("--only", default="", help="comma-separated task/score, e.g. dates/dot")
    args = parser.parse_args(argv)
    every = [(t, s) for t in TASKS for s in SCORE_KINDS]
    every += [(t, TRANSFORMER) for t in TRANSFORMER_RECIPES]
    wanted = [tuple(x.strip().split("/")) for x in args.only.split(",") if x.strip()]
    unknown = [w for w in wanted if w not in every]
    if unknown:
        parser.error(f"unknown task/score {unknown}; choose from {[f'{t}/{s}' for t, s in every]}")
    args.models = wanted or every
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    rows = []
    for task, score in args.models:
        row = train_one(task, score, args.seed)
        rows.append(row)
        print(
            f"{task:15s} {score:8s} exact {row['exact_match']:.4f}  chars "
            f"{row['char_accuracy']:.4f}  alignment {row['alignment']:.4f}  epochs "
            f"{row['epochs']} (best {row['best_epoch']})  {row['seconds']:.1f} s  "
            f"{row['parameters']:,} parameters",
            flush=True,
        )
    missed = [r for r in rows if any(r[k] < v for k, v in BAR.items())]
    for r in missed:
        print(f"MISSED THE BAR: {r['task']}/{r['score']}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
