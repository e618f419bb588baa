"""How good a trained translator is: character and exact-match accuracy, and alignment.

Shape letters: N pairs, T decoder steps, S source positions.

The alignment score asks whether the model looks where the task says each output character
comes from: for every target character with a known span (`tasks.known_alignment`), does its
largest attention weight fall inside that span? The weights are read with teacher forcing (the
true target is fed to the decoder), so every target character has a row even where the
model's own greedy output would go wrong; with a well-trained model the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import describe
from attnviz.learn.translation.model import Seq2SeqAttention
from attnviz.learn.translation.tasks import known_alignment


@dataclass(frozen=True)
class Evaluation:
    """A model's scores on a set of pairs (all shares from 0 to 1)."""

    char_accuracy: float  # greedy output characters right at their position (see `char_accuracy`)
    exact_match: float  # share of pairs whose greedy output equals the target
    alignment: float  # share of aligned target characters whose top weight is in their span
    pairs: int  # how many pairs were scored


def _check_pairs(pairs: object) -> list[tuple[str, str]]:
    """`pairs` as a list of `(source, target)` strings, or a ValueError saying what is wrong."""
    try:
        checked = [] if isinstance(pairs, (str, bytes)) else list(pairs)
    except TypeError:
        checked = []
    well_formed = all(
        isinstance(p, (tuple, list)) and len(p) == 2 and all(isinstance(x, str) for x in p)
        for p in checked
    )
    if not checked or not well_formed:
        raise ValueError(
            "`pairs` must be a non-empty list of (source, target) string pairs, as "
            f"`make_pairs` returns. Received: {describe(pairs)}."
        )
    return [(s, t) for s, t in checked]


def char_accuracy(outputs: Sequence[str], targets: Sequence[str]) -> float:
    """Characters right at their position, over max(len(output), len(target)) per pair.

    A missing or extra character counts as wrong, so only exact outputs score 1.
    """
    right = total = 0
    for output, target in zip(outputs, targets, strict=True):
        right += sum(a == b for a, b in zip(output, target, strict=False))
        total += max(len(output), len(target))
    return right / max(total, 1)


def alignment_score(model: Seq2SeqAttention, pairs: Sequence[tuple[str, str]]) -> float:
    """Share of target characters (with a known span) whose largest attention weight lies in it.

    For a `TransformerTranslator`, the score of its best cross-attention head (each head is
    scored on its own: `head_alignment_scores`).

    Weights are read with teacher forcing (the true target fed to the decoder). Characters
    with no span (the "-" of ISO dates, unnamed 0 digits) are left out.

    Args:
        model: a trained `Seq2SeqAttention`.
        pairs: `(source, target)` pairs of the model's task, e.g. from `make_pairs`.

    Returns:
        A float from 0 to 1 (0 if no target character has a span).

    Raises:
        ValueError: for pairs that are not correct pairs of the model's task.
    """
    pairs = _check_pairs(pairs)
    if hasattr(model, "teacher_forced_cross"):  # a Transformer: its best cross-attention head
        return float(head_alignment_scores(model, pairs).max())
    return _aligned_share(model.teacher_forced_weights(pairs), _spans(model, pairs))


def head_alignment_scores(model: Any, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    """`(L, H)`: the alignment score of every cross-attention head of a `TransformerTranslator`.

    Raises:
        ValueError: for pairs that are not correct pairs of the model's task, or a model
            without cross-attention heads.
    """
    pairs = _check_pairs(pairs)
    if not hasattr(model, "teacher_forced_cross"):
        raise ValueError(
            f"`model` must be a TransformerTranslator (it has heads). Received: {describe(model)}."
        )
    spans = _spans(model, pairs)
    cross = model.teacher_forced_cross(pairs)  # (N, L, H, T, S)
    n_layers, n_heads = cross.shape[1:3]
    return np.array(
        [[_aligned_share(cross[:, layer, head], spans) for head in range(n_heads)]
         for layer in range(n_layers)]
    )  # fmt: skip


def _spans(model: Any, pairs: list[tuple[str, str]]) -> list:
    return [known_alignment(model.task.name, s, t) for s, t in pairs]


def _aligned_share(weights: np.ndarray, spans: list) -> float:
    """Share of target rows with a span whose largest weight in `weights (N, T, S)` is in it."""
    top = weights.argmax(axis=-1)  # (N, T): the source position each target row looks at most
    hits = []
    for row, alignment in enumerate(spans):
        for step, span in enumerate(alignment):
            if span is not None:
                hits.append(span[0] <= top[row, step] < span[1])
    return float(np.mean(hits)) if hits else 0.0


def evaluate(model: Any, pairs: Sequence[tuple[str, str]]) -> Evaluation:
    """Greedy-decode every source and score the outputs and the alignment.

    Raises:
        ValueError: for pairs that are not correct pairs of the model's task.
    """
    pairs = _check_pairs(pairs)
    outputs = [t.output for t in model.translate_batch([s for s, _ in pairs])]
    targets = [t for _, t in pairs]
    return Evaluation(
        char_accuracy=char_accuracy(outputs, targets),
        exact_match=float(np.mean([o == t for o, t in zip(outputs, targets, strict=True)])),
        alignment=alignment_score(model, pairs),
        pairs=len(pairs),
    )
