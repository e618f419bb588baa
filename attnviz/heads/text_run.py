"""One run of your own model on a text: its inputs, every attention it computed stacked by kind
for the model view, and (for a causal LM) the next-token prediction.

Shape letters: L attention calls stacked as layers, H heads, T queries, S keys.

`run_text(user, text)` tokenizes (`model_text`), inspects the model once (`inspection`), and
stacks the calls of each kind ("self", "cross", "unknown") whose weights share one shape, in
call order. Calls that fold windows into the batch, or whose shape differs from their kind's
first unfolded call, are not stacked: `skipped` names them. The model's outputs are not kept (a
causal LM's logits are `(1, T, V)`: 26 MB for GPT-2 at 128 tokens), only the next-token
prediction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attnviz.heads.calls import AttentionCall, frozen_labels
from attnviz.heads.inspection import Inspection, inspect
from attnviz.heads.model_text import ModelInputs, NextToken, next_tokens, text_inputs
from attnviz.heads.user_model import UserModel

KIND_ORDER = ("self", "cross", "unknown")


@dataclass(frozen=True)
class KindStack:
    """The calls of one kind, stacked like layers, for one sequence."""

    kind: str  # "self", "cross" or "unknown"
    keys: tuple[str, ...]  # (L,) the calls stacked, in call order
    weights: np.ndarray  # (L, H, T, S) float32
    blocked: np.ndarray  # (L, H, T, S) bool: masked by the layer and weight exactly 0
    positions: str  # the position schemes of these calls, in words


@dataclass(frozen=True)
class TextRun:
    """Your model's run on one text."""

    inputs: ModelInputs  # the tokens and what the model was given
    inspection: Inspection  # every attention call, labelled by the text's tokens where their
    # number fits (outputs dropped: None)
    stacks: dict[str, KindStack]  # kind -> its stack, in `KIND_ORDER`
    next: tuple[NextToken, ...]  # the likeliest next tokens (empty unless a causal LM)
    skipped: tuple[str, ...]  # calls not stacked, and why


def run_text(user: UserModel, text: str) -> TextRun:
    """Tokenize `text`, inspect `user`'s model on it and stack its attention by kind.

    Raises:
        ValueError: for text the model cannot take (see `model_text.text_inputs`), or a run
            that Keras rejects or that computes no attention (see `inspection.inspect`).
    """
    inputs = text_inputs(user, text)
    inspection = inspect(user.model, inputs.inputs)
    predicted = next_tokens(user, inspection.outputs) if user.causal_lm else ()
    labelled = tuple(_labelled(call, inputs.tokens) for call in inspection.calls)
    inspection = replace(inspection, calls=labelled, outputs=None)
    stacks, skipped = {}, []
    for kind in KIND_ORDER:
        calls = [call for call in inspection.calls if call.kind == kind]
        if not calls:
            continue
        stack, left_out = _stack(inspection, calls)
        if stack is not None:
            stacks[kind] = stack
        skipped += left_out
    return TextRun(inputs, inspection, stacks, predicted, tuple(skipped))


def _labelled(call: AttentionCall, tokens: tuple[str, ...]) -> AttentionCall:
    """`call` with the text's tokens as its row / column labels where their number fits (each
    sequence of the batch: the text is the batch's one sequence)."""
    b, _, t, s = call.weights.shape
    rows, cols = (frozen_labels([tokens] * b) if n == len(tokens) else None for n in (t, s))
    return replace(call, row_labels=rows, col_labels=cols)


def _stack(inspection: Inspection, calls: list) -> tuple[KindStack | None, list[str]]:
    """The calls that fold nothing and share the first such call's shape, stacked (None when
    every call folds), and the others with why they were left out."""
    unfolded = [call for call in calls if call.fold is None]
    shape = unfolded[0].weights.shape if unfolded else None
    kept = [call for call in unfolded if call.weights.shape == shape]
    left_out = [
        f"{call.key}: its {call.fold.what} are separate batch entries" if call.fold is not None
        else f"{call.key}: weights {call.weights.shape[1:]}, not {shape[1:]}"
        for call in calls if call not in kept
    ]  # fmt: skip
    if not kept:
        return None, left_out
    stacked = inspection.layer_stack(keys=[call.key for call in kept])
    weights = stacked.weights  # (L, H, T, S)
    heads_masked = np.stack([call.head_masks[0] for call in kept])  # (L, H, T, S)
    schemes = dict.fromkeys(call.position.text for call in kept)
    return (
        KindStack(kept[0].kind, stacked.keys, weights, ~heads_masked & (weights == 0),
                  " ".join(schemes)),
        left_out,
    )  # fmt: skip
