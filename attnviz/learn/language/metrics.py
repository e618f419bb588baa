"""How a language model does and what each of its heads does: loss, accuracy, in-context
accuracy, previous-token and induction scores, and what switching a head off costs.

Shape letters: N sequences, T tokens read, L layers, H heads.

For a sequence of ids x_0 … x_{T-1} (x_0 = `<s>`) and one head's causal weights w:

    previous-token score   mean over rows i ≥ 1 of  w[i, i − 1]
    induction target of i  j + 1, where j < i − 1 is the last earlier position with x_j = x_i
                           (none if x_i has not occurred before, or only just before)
    induction score        mean over rows i with a target of  w[i, target(i)]
                           (the weight from a token's repeat to the token after its first
                           occurrence; in the "induction" task: a copy → the run before it)
    in-context positions   rows i with an induction target whose token is the next one,
                           x_target(i) = x_{i+1}: copying from the context gives the next token
                           (in the "induction" task: every copy of a run but its first letter;
                           where a copy ends, copying would be wrong, so that row is left out)

Scores are means over every row of every sequence; NaN when there is no such row. Losses are in
nats per token; `unigram_loss` is the floor a model that ignores context reaches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import describe, read_only
from attnviz.learn.language.model import Ablation, LanguageModel
from attnviz.learn.language.tasks import LMTask, get_lm_task, make_sequences

ABLATION_METRICS = {  # field of an ablation table -> its label
    "loss": "loss (nats)",  # per token, as every loss here
    "accuracy": "next-token accuracy",
    "in_context_loss": "in-context loss (nats)",
    "in_context_accuracy": "in-context accuracy",
}


@dataclass(frozen=True)
class LMEvaluation:
    """A language model's numbers on a set of sequences (accuracies and scores from 0 to 1)."""

    loss: float  # mean next-token cross-entropy over every position (nats)
    accuracy: float  # share of positions whose most likely next token is the true one
    in_context_loss: float  # the mean cross-entropy over the in-context positions (NaN: none)
    in_context_accuracy: float  # the accuracy over the in-context positions (NaN: none)
    previous_token: np.ndarray  # (L, H) every head's previous-token score
    induction: np.ndarray  # (L, H) every head's induction score
    sequences: int  # N, how many sequences were scored
    in_context_positions: int  # how many positions were in-context (copying gives the next token)
    ablation: Ablation | None = None  # heads switched off while scoring, if any


@dataclass(frozen=True)
class AblationTable:
    """What switching each head off (alone) does to the model, beside the intact model."""

    baseline: LMEvaluation  # nothing switched off; its scores say what each head does
    mode: str  # "zero" or "mean": what the switched-off head output
    loss: np.ndarray  # (L, H) loss with that head off
    accuracy: np.ndarray  # (L, H) next-token accuracy with that head off
    in_context_loss: np.ndarray  # (L, H)
    in_context_accuracy: np.ndarray  # (L, H)

    def matrix(self) -> tuple[tuple[str, ...], np.ndarray]:
        """`(metric names, (L·H, M))`: one row per head (layer by layer), one column per metric
        of `ABLATION_METRICS`, for a head × metric heatmap."""
        names = tuple(ABLATION_METRICS)
        columns = [getattr(self, name).reshape(-1) for name in names]  # M × (L·H,)
        return names, np.stack(columns, axis=1)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per head: layer, head, its scores, and each metric with the head off and
        its change from the baseline."""
        n_layers, n_heads = self.loss.shape
        rows = []
        for layer in range(n_layers):
            for head in range(n_heads):
                row = {
                    "layer": layer,
                    "head": head,
                    "previous_token": float(self.baseline.previous_token[layer, head]),
                    "induction": float(self.baseline.induction[layer, head]),
                }
                for name in ABLATION_METRICS:
                    off = float(getattr(self, name)[layer, head])
                    row[name] = off
                    row[f"{name}_change"] = off - float(getattr(self.baseline, name))
                rows.append(row)
        return rows


def induction_targets(ids: Any) -> np.ndarray:
    """`(N, T)` int: for each position, the position after the last earlier occurrence of its
    token (see the module doc), or −1."""
    x = np.asarray(ids)
    t = x.shape[1]
    same = x[:, :, None] == x[:, None, :]  # (N, T, T): x_i == x_j
    earlier = np.tri(t, k=-2, dtype=bool)  # (T, T): j < i − 1
    found = same & earlier[None]
    last = t - 1 - np.argmax(found[:, :, ::-1], axis=-1)  # (N, T) the last such j
    return np.where(found.any(axis=-1), last + 1, -1)


def copyable(inputs: Any, following: Any) -> np.ndarray:
    """`(N, T)` bool: the in-context positions of ids read `inputs (N, T)` followed by
    `following (N, T)` (the next id after each position): where copying the token after the
    last earlier occurrence gives the next token."""
    x, y = np.asarray(inputs), np.asarray(following)
    target = induction_targets(x)  # (N, T)
    copied = np.take_along_axis(x, np.maximum(target, 0), axis=1)  # (N, T)
    return (target >= 0) & (copied == y)


def previous_token_scores(weights: Any) -> np.ndarray:
    """`(L, H)`: every head's mean weight on the previous token, from `(N, L, H, T, T)`."""
    w = np.asarray(weights)
    below = np.diagonal(w, offset=-1, axis1=-2, axis2=-1)  # (N, L, H, T − 1): w[i, i − 1]
    return below.mean(axis=(0, 3)) if below.shape[-1] else np.full(w.shape[1:3], np.nan)


def induction_scores(weights: Any, ids: Any) -> np.ndarray:
    """`(L, H)`: every head's mean weight on each row's induction target, from weights
    `(N, L, H, T, T)` and the ids read `(N, T)`."""
    w = np.asarray(weights)
    target = induction_targets(ids)  # (N, T)
    rows, cols = np.nonzero(target >= 0)
    if not rows.size:
        return np.full(w.shape[1:3], np.nan)
    return w[rows, :, :, cols, target[rows, cols]].mean(axis=0)  # (K, L, H) -> (L, H)


def evaluate_lm(model: LanguageModel, ids: Any, ablation: Ablation | None = None) -> LMEvaluation:
    """Score `model` on sequences `ids (N, T + 1)` (`<s>` first, e.g. from `make_sequences`):
    it reads the first T and predicts the last T.

    Raises:
        ValueError: for ids the model cannot read, or a bad ablation.
    """
    ids = np.asarray(ids)
    if ids.ndim != 2 or ids.shape[1] < 2:
        raise ValueError(
            f"`ids` must be (N, T + 1) sequences of at least 2 tokens, as make_sequences "
            f"returns. Received: {describe(ids)}."
        )
    inputs, targets = ids[:, :-1], ids[:, 1:]  # (N, T) each
    totals = np.zeros(4)  # loss sum, right, in-context loss sum, in-context right
    counts = np.zeros(3)  # positions, in-context positions, rows with an induction target
    prev, induction, weight = 0.0, 0.0, 0  # score sums weighted by rows
    start = 0
    for run in model.runs(inputs, ablation):
        n = len(run.logits)
        x, y = inputs[start : start + n], targets[start : start + n]
        start += n
        nll, right = _token_losses(run.logits, y)  # (n, T) each
        in_context = copyable(x, y)  # (n, T)
        totals += [nll.sum(), right.sum(), nll[in_context].sum(), right[in_context].sum()]
        targeted = int((induction_targets(x) >= 0).sum())
        counts += [nll.size, in_context.sum(), targeted]
        prev = prev + previous_token_scores(run.weights) * n
        induction = induction + np.nan_to_num(induction_scores(run.weights, x)) * targeted
        weight += n
    shares = [totals[0] / counts[0], totals[1] / counts[0]]
    if counts[1]:
        shares += [totals[2] / counts[1], totals[3] / counts[1]]
    else:
        shares += [np.nan, np.nan]
    return LMEvaluation(
        *(float(v) for v in shares),
        previous_token=read_only(prev / weight),
        induction=read_only(induction / counts[2] if counts[2] else np.full_like(prev, np.nan)),
        sequences=len(ids),
        in_context_positions=int(counts[1]),
        ablation=ablation,
    )


def _token_losses(logits: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cross-entropy (nats) and whether the argmax is right, per position: `(N, T)` each."""
    z = logits.astype(np.float64)
    log_norm = np.log(np.exp(z - z.max(axis=-1, keepdims=True)).sum(axis=-1)) + z.max(axis=-1)
    picked = np.take_along_axis(z, targets[..., None], axis=-1)[..., 0]  # (N, T)
    return log_norm - picked, logits.argmax(axis=-1) == targets


def ablation_table(model: LanguageModel, ids: Any, mode: str = "zero") -> AblationTable:
    """Switch each head off in turn and score the model on `ids (N, T + 1)` each time.

    Args:
        model: a `LanguageModel`.
        ids: sequences, e.g. `make_sequences(task, 512, seed)` (fresh ones: a seed training
            never uses).
        mode: "zero" (the head outputs zeros) or "mean" (its mean output).

    Returns:
        An `AblationTable`; for a 2 × 4 model, 9 evaluations.

    Raises:
        ValueError: for a bad mode or ids.
    """
    baseline = evaluate_lm(model, ids)
    c = model.config
    results = {name: np.zeros((c.layers, c.heads)) for name in ABLATION_METRICS}
    for layer in range(c.layers):
        for head in range(c.heads):
            off = evaluate_lm(model, ids, Ablation(((layer, head),), mode))
            for name in ABLATION_METRICS:
                results[name][layer, head] = getattr(off, name)
    return AblationTable(baseline, mode, **{k: read_only(v) for k, v in results.items()})


def unigram_loss(task: str | LMTask, seed: int = 0, n: int = 512) -> float:
    """The loss (nats per token) of predicting every next token by its frequency alone: token
    counts (plus one) of `n` training sequences, scored on `n` validation sequences."""
    spec = get_lm_task(task)
    train = make_sequences(spec, n, seed, "train")[:, 1:]
    counts = np.bincount(train.reshape(-1), minlength=spec.vocab_size)[1:] + 1.0  # no <s>
    log_p = np.log(counts / counts.sum())  # (V − 1,)
    validation = make_sequences(spec, n, seed, "validation")[:, 1:]
    return float(-log_p[validation - 1].mean())
