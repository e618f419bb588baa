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

from attnviz.heads.calls import AttentionCall, LayerStack, frozen_labels
from attnviz.heads.inspection import Inspection, inspect
from attnviz.heads.model_text import ModelInputs, NextToken, next_tokens, text_inputs
from attnviz.heads.user_model import UserModel

KIND_ORDER = ("self", "cross", "unknown")


@dataclass(frozen=True)
class TextRun:
    """Your model's run on one text."""

    inputs: ModelInputs  # the tokens and what the model was given
    inspection: Inspection  # every attention call, labelled by the text's tokens where their
    # number fits (outputs dropped: None)
    stacks: dict[str, LayerStack]  # kind -> its calls stacked like layers `(L, H, T, S)`, in
    # `KIND_ORDER`
    positions: dict[str, str]  # kind -> the position schemes of its stacked calls, in words
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
    stacks, positions, skipped = {}, {}, []
    for kind in KIND_ORDER:
        calls = [call for call in inspection.calls if call.kind == kind]
        kept, left_out = _stackable(calls)
        if kept:
            stacks[kind] = inspection.layer_stack(keys=[call.key for call in kept])
            positions[kind] = " ".join(dict.fromkeys(call.position.text for call in kept))
        skipped += left_out
    return TextRun(inputs, inspection, stacks, positions, predicted, tuple(skipped))


def _labelled(call: AttentionCall, tokens: tuple[str, ...]) -> AttentionCall:
    """`call` with the text's tokens as its row / column labels where their number fits (each
    sequence of the batch: the text is the batch's one sequence)."""
    b, _, t, s = call.weights.shape
    rows, cols = (frozen_labels([tokens] * b) if n == len(tokens) else None for n in (t, s))
    return replace(call, row_labels=rows, col_labels=cols)


def _stackable(calls: list[AttentionCall]) -> tuple[list[AttentionCall], list[str]]:
    """The calls that fold nothing and share the first such call's shape (to be stacked), and
    the others with why they were left out."""
    unfolded = [call for call in calls if call.fold is None]
    shape = unfolded[0].weights.shape if unfolded else None
    kept = [call for call in unfolded if call.weights.shape == shape]
    left_out = [
        f"{call.key}: its {call.fold.what} are separate batch entries" if call.fold is not None
        else f"{call.key}: weights {call.weights.shape[1:]}, not {shape[1:]}"
        for call in calls if call not in kept
    ]  # fmt: skip
    return kept, left_out
