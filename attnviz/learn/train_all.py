"""Train and ship one model per task and kind: `python -m attnviz.learn.train_all`.

    python -m attnviz.learn.train_all [--seed 0] [--only dates/dot,induction/lm]

For each task in `TASKS` and score in `SCORE_KINDS`, trains a seq2seq model with the task's
`RECIPES` entry, and for each task in `TRANSFORMER_RECIPES` a Transformer (kind
"transformer"), stopping early once every validation pair decodes exactly; evaluates the kept
weights on 1,000 fresh pairs (`make_pairs(task, 1000, TEST_SEED)`, a seed training never uses),
and writes `attnviz/learn/checkpoints/<task>_<kind>.npz` and `.json` (`pretrained.CHECKPOINTS`).
For each language-model task in `LM_RECIPES` (kind "lm") it trains a `LanguageModel` for the
recipe's epochs and records, on 1,000 fresh sequences, its loss beside the unigram floor, its
accuracies, every head's scores and the ablation table (each head switched off alone).
The same seed writes the same weights.
Prints one line per model; exits with status 1 if a model misses the shipping bar (translators:
exact match >= 0.99 and alignment >= 0.9 on the fresh pairs; `LM_BAR` for language models, and
for the induction model in-context accuracy >= `COPY_BAR` on fresh texts of each `COPY_SHAPES`
entry, so that it copies wherever the repeat is).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from attnviz.core.score_kinds import SCORE_KINDS  # noqa: E402
from attnviz.learn.language.metrics import ablation_table, evaluate_lm, unigram_loss  # noqa: E402
from attnviz.learn.language.tasks import COPY_SHAPES, make_sequences, shape_sequences  # noqa: E402
from attnviz.learn.language.training import train_lm  # noqa: E402
from attnviz.learn.pretrained import TEST_SEED, save_checkpoint  # noqa: E402
from attnviz.learn.recipes import (  # noqa: E402
    LM,
    LM_RECIPES,
    TRANSFORMER,
    TRANSFORMER_RECIPES,
    network_config,
    training_config,
)
from attnviz.learn.translation.metrics import evaluate  # noqa: E402
from attnviz.learn.translation.tasks import TASKS, make_pairs  # noqa: E402
from attnviz.learn.translation.training import EpochReport, train, train_transformer  # noqa: E402

FRESH_PAIRS = 1000  # pairs (or sequences) each checkpoint is evaluated on
BAR = {"exact_match": 0.99, "alignment": 0.9}  # the least a shipped checkpoint must score
LM_BAR = {  # task -> (number, lowest, highest) a shipped language model must score
    "induction": (
        ("in_context_accuracy", 0.95, 1.0),  # on the repeated half of fresh sequences
        ("previous_token", 0.8, 1.0),  # its best layer-0 head
        ("induction", 0.8, 1.0),  # its best layer-1 head
        ("ablated_in_context_accuracy", 0.0, 0.5),  # with that induction head switched off
    ),
    "text": (("unigram_gain", 0.5, 10.0),),  # nats per character below the unigram floor
}
COPY_BAR = 0.95  # the least in-context accuracy of the induction model on each of COPY_SHAPES
SHAPE_TEXTS = 200  # fresh texts of each shape it is scored on


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


def train_one_lm(task: str, seed: int) -> dict:
    """Train a language model by its recipe, score it on fresh sequences, save it; its row."""
    started = time.perf_counter()
    recipe = LM_RECIPES[task]
    model = train_lm(task, recipe.network, replace(recipe.training, seed=seed))
    seconds = time.perf_counter() - started
    table = ablation_table(model, make_sequences(task, FRESH_PAIRS, TEST_SEED))
    base = table.baseline
    previous = (0, int(np.nanargmax(base.previous_token[0])))  # the best layer-0 head
    later = np.nan_to_num(base.induction[1:], nan=-1.0)  # (L − 1, H): heads after layer 0
    induction = tuple(int(i) for i in np.unravel_index(later.argmax(), later.shape))
    induction = (induction[0] + 1, induction[1])
    floor = unigram_loss(task)
    row = {
        "task": task,
        "score": LM,
        "loss": base.loss,
        "unigram_loss": floor,
        "unigram_gain": floor - base.loss,
        "accuracy": base.accuracy,
        "in_context_accuracy": base.in_context_accuracy,
        "previous_token": float(base.previous_token[previous]),
        "previous_token_head": list(previous),
        "induction": float(base.induction[induction]),
        "induction_head": list(induction),
        "ablated_in_context_accuracy": float(table.in_context_accuracy[induction]),
        "epochs": model.stats.epochs_run,
        "best_epoch": model.stats.best_epoch,
        "seconds": round(seconds, 1),
        "parameters": model.parameter_count,
    }
    if task == "induction":  # it must copy wherever the repeat is, not only on average
        row["copy_shapes"] = {
            shape: evaluate_lm(
                model, shape_sequences(shape, SHAPE_TEXTS, TEST_SEED)
            ).in_context_accuracy
            for shape in COPY_SHAPES
        }
    fresh = {**row, "sequences": FRESH_PAIRS, "seed": TEST_SEED}
    ablation = {"mode": table.mode, "heads": table.rows()}  # each head switched off alone
    save_checkpoint(model, {"fresh": fresh, "ablation": ablation})
    return row


def _missed(row: dict) -> bool:
    """Whether `row` misses its shipping bar."""
    if row["score"] == LM:
        shapes = row.get("copy_shapes", {}).values()
        return any(not low <= row[k] <= high for k, low, high in LM_BAR[row["task"]]) or any(
            accuracy < COPY_BAR for accuracy in shapes
        )
    return any(row[k] < v for k, v in BAR.items())


def _line(row: dict) -> str:
    """One model's line of the printout."""
    if row["score"] == LM:
        return (
            f"{row['task']:15s} lm       loss {row['loss']:.4f} (unigram "
            f"{row['unigram_loss']:.4f})  accuracy {row['accuracy']:.4f}  in-context "
            f"{row['in_context_accuracy']:.4f}  previous-token {row['previous_token']:.3f} "
            f"{tuple(row['previous_token_head'])}  induction {row['induction']:.3f} "
            f"{tuple(row['induction_head'])}, off: {row['ablated_in_context_accuracy']:.4f}  "
            f"epochs {row['epochs']} (best {row['best_epoch']})  {row['seconds']:.1f} s  "
            f"{row['parameters']:,} parameters{_worst_shape(row)}"
        )
    return (
        f"{row['task']:15s} {row['score']:8s} exact {row['exact_match']:.4f}  chars "
        f"{row['char_accuracy']:.4f}  alignment {row['alignment']:.4f}  epochs "
        f"{row['epochs']} (best {row['best_epoch']})  {row['seconds']:.1f} s  "
        f"{row['parameters']:,} parameters"
    )


def _worst_shape(row: dict) -> str:
    """The copy shape the induction model scored lowest on, for its line ("" for others)."""
    shapes = row.get("copy_shapes")
    if not shapes:
        return ""
    worst = min(shapes, key=shapes.get)
    return f"  worst copy shape: {worst} {shapes[worst]:.4f}"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="training seed (default 0)")
    parser.add_argument("--only", default="", help="comma-separated task/score, e.g. dates/dot")
    args = parser.parse_args(argv)
    every = [(t, s) for t in TASKS for s in SCORE_KINDS]
    every += [(t, TRANSFORMER) for t in TRANSFORMER_RECIPES]
    every += [(t, LM) for t in LM_RECIPES]
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
        row = train_one_lm(task, args.seed) if score == LM else train_one(task, score, args.seed)
        rows.append(row)
        print(_line(row), flush=True)
    missed = [r for r in rows if _missed(r)]
    for r in missed:
        print(f"MISSED THE BAR: {r['task']}/{r['score']}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
