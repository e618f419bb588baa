"""Text for your own model: typed text (or token ids) made into the model's inputs and token
labels, and a causal LM's next-token prediction from its logits.

Shape letters: B batch (1 here), T tokens, V vocabulary.

With a tokenizer, the text is tokenized as keras-hub's preprocessors do it: the tokenizer's
start token first when it has one (`<|endoftext|>` for GPT-2, `<s>` for Llama, `[CLS]` for
BERT), and for a model that is not a causal LM its end token last when that is another token
(`[SEP]`). Without one, the text is token ids, separated by spaces or commas. The inputs are
what a keras-hub backbone takes (`token_ids`, a `padding_mask` of ones, zero `segment_ids`) or,
for a model with one input, the `(1, T)` ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core import limits
from attnviz.core.checks import describe
from attnviz.heads.user_model import UserModel

DEFAULT_SENTENCE = "The cat sat on the mat because it was tired."  # what a page opens on

TOP_K = 5  # next tokens shown
FILLED = {  # keras-hub input name -> the value of each token
    "token_ids": None,  # the ids themselves
    "padding_mask": 1,  # every token is real
    "segment_ids": 0,  # one segment
}


@dataclass(frozen=True)
class ModelInputs:
    """One text made ready for the model."""

    inputs: Any  # what the model is called with: a dict of (1, T) arrays, or the (1, T) ids
    token_ids: tuple[int, ...]  # (T,) the ids
    tokens: tuple[str, ...]  # (T,) each token as the tokenizer writes it (the id, without one)
    notes: tuple[str, ...] = ()  # what to tell the reader (tokens added, text lost)


@dataclass(frozen=True)
class NextToken:
    """One candidate for the token after the text."""

    token_id: int  # its id
    token: str  # as the tokenizer writes it (the id, without one)
    probability: float  # softmax of the last position's logits


def text_inputs(user: UserModel, text: str) -> ModelInputs:
    """The inputs of `user`'s model for `text` (token ids when it has no tokenizer).

    Raises:
        ValueError: for empty or overlong text, text the tokenizer makes no tokens of, ids that
            are not whole numbers below the vocabulary size, more than `MAX_VIEW_TOKENS` tokens,
            or a model whose inputs are not text.
    """
    if not isinstance(text, str) or not text.strip():
        what = "Some text" if user.tokenizer is not None else "Token ids"
        verb = "is" if user.tokenizer is not None else "are"  # "token ids … are missing"
        raise ValueError(f"{what} to run the model on {verb} missing. Received: {describe(text)}.")
    if len(text) > limits.MAX_SENTENCE_CHARS:
        raise ValueError(
            f"The text has {len(text):,} characters; at most {limits.MAX_SENTENCE_CHARS:,} are "
            "allowed. Shorten it."
        )
    if user.tokenizer is None:
        ids, tokens, notes = _typed_ids(text, user.vocabulary_size), None, ()
    else:
        ids, tokens, notes = _tokenized(user, text)
    most = min(limits.MAX_VIEW_TOKENS, user.max_tokens or limits.MAX_VIEW_TOKENS)
    if len(ids) > most:
        why = "the model has positions for" if most < limits.MAX_VIEW_TOKENS else "are shown of"
        raise ValueError(
            f"The text makes {len(ids)} tokens; at most {most} {why} one text. Shorten it."
        )
    tokens = tokens or tuple(str(i) for i in ids)
    return ModelInputs(_feed(user.model, np.asarray([ids])), tuple(ids), tokens, notes)


def default_text(user: UserModel) -> str:
    """The text a page opens on: a sentence (its last words dropped until the model has
    positions for its tokens: a small model opens on what it reads, not on an error), or token
    ids 1 … 7 without a tokenizer (fewer for a smaller vocabulary or fewer positions)."""
    most = min(limits.MAX_VIEW_TOKENS, user.max_tokens or limits.MAX_VIEW_TOKENS)
    if user.tokenizer is None:
        top = min(8, user.vocabulary_size or 8, most + 1)
        return " ".join(str(i) for i in range(1, top)) or "0"
    words = DEFAULT_SENTENCE.split()
    while len(words) > 1 and len(_tokenized(user, " ".join(words))[0]) > most:
        words.pop()
    return " ".join(words)


def _typed_ids(text: str, vocabulary: int | None) -> list[int]:
    """Token ids typed as whole numbers separated by spaces or commas."""
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    bad = [p for p in parts if not p.isdigit()]
    top = f"0 to {vocabulary - 1}" if vocabulary else "0 or more"
    if bad:
        raise ValueError(
            f"Token ids must be whole numbers from {top}, separated by spaces or commas. "
            f"Received: {bad[0][:20]!r}. This model has no tokenizer: type ids such as 5 17 3."
        )
    ids = [int(p) for p in parts]
    if vocabulary and max(ids) >= vocabulary:
        raise ValueError(
            f"Token ids must be below the vocabulary size {vocabulary}: from {top}. "
            f"Received: {max(ids)}."
        )
    return ids


def _tokenized(user: UserModel, text: str) -> tuple[list[int], tuple[str, ...], tuple[str, ...]]:
    """ids, their tokens and notes: the text tokenized, with the start (and end) token added."""
    tokenizer = user.tokenizer
    try:
        core = [int(i) for i in np.asarray(tokenizer(text)).ravel()]
    except Exception as err:  # noqa: BLE001 - TensorFlow's errors for text it cannot take
        raise ValueError(
            f"The tokenizer could not take this text: {type(err).__name__}: {err}"
        ) from None
    if not core:
        raise ValueError(
            f"The tokenizer made no tokens of this text: its vocabulary of "
            f"{tokenizer.vocabulary_size()} tokens has none for it. Received: {describe(text)}."
        )
    start = getattr(tokenizer, "start_token_id", None)
    end = getattr(tokenizer, "end_token_id", None)
    ids = ([start] if start is not None else []) + core
    if end is not None and end != start and not user.causal_lm:
        ids.append(end)
    tokens = tuple(str(tokenizer.id_to_token(i)) for i in ids)
    notes = []
    if len(ids) > len(core):
        added = [tokens[0]] if start is not None else []
        added += [tokens[-1]] if len(ids) - len(core) > len(added) else []
        notes.append(f"Added as keras-hub's preprocessor adds them: {', '.join(added)}.")
    notes += _marker_notes(tokens)
    back = np.asarray(tokenizer.detokenize(core)).item()
    back = back.decode("utf-8", "replace") if isinstance(back, bytes) else str(back)
    if _squeezed(back) != _squeezed(text):
        notes.append(
            f"These tokens give back “{back}”: the tokenizer has no token for some of the text, "
            "which is lost or replaced."
        )
    return ids, tokens, tuple(notes)


SPACE_MARKERS = (  # (mark, what it means): how subword tokenizers write their tokens
    ("Ġ", "Ġ marks a token that starts with a space (GPT-2's byte-level tokenizer)"),
    ("▁", "▁ marks a token that starts a word (SentencePiece)"),
    ("##", "## marks a token that continues a word (WordPiece)"),
)


def _marker_notes(tokens: tuple[str, ...]) -> list[str]:
    """What the tokenizer's marks in `tokens` mean, one note per mark used."""
    return [f"{meaning}." for mark, meaning in SPACE_MARKERS if any(mark in t for t in tokens)]


def _squeezed(text: str) -> str:
    """`text` without case or spacing, to compare a tokenizer's round trip."""
    return "".join(text.lower().split())


def _feed(model: Any, ids: np.ndarray) -> Any:
    """The model's inputs for the `(1, T)` ids: keras-hub's named inputs, or the ids alone.

    Raises:
        ValueError: for inputs that are not token ids, or a fixed length other than T.
    """
    specs = list(getattr(model, "inputs", None) or [])
    if not specs:
        return ids.astype("int32")  # a subclassed model: its call says what it takes
    names = [spec.name for spec in specs]
    keyed = isinstance(getattr(model, "_inputs_struct", None), dict)
    unknown = [name for name in names if name not in FILLED]
    if unknown and (keyed or len(specs) > 1):
        raise ValueError(
            f"This model takes inputs other than text: {', '.join(unknown)}. attnviz view gives "
            f"text models their {', '.join(FILLED)}. Received a model with inputs {names}."
        )
    for spec in specs:
        length = spec.shape[1] if len(spec.shape) > 1 else None
        if length is not None and length != ids.shape[1]:
            raise ValueError(
                f"This model takes exactly {length} tokens; the text makes {ids.shape[1]}. "
                "Give it that many."
            )
    made = {
        spec.name: ids.astype(spec.dtype) if FILLED.get(spec.name) is None
        else np.full(ids.shape, FILLED[spec.name], dtype=spec.dtype)
        for spec in specs
    }  # fmt: skip
    return made if keyed or len(specs) > 1 else next(iter(made.values()))


def next_tokens(user: UserModel, logits: Any, k: int = TOP_K) -> tuple[NextToken, ...]:
    """The `k` likeliest tokens after the text, from a causal LM's logits `(1, T, V)`: the
    softmax of the last position's row, in float64.

    Raises:
        ValueError: for a model that is not a causal LM, or logits of another shape.
    """
    array = np.asarray(logits, dtype=np.float64)
    if not user.causal_lm or array.ndim != 3 or array.shape[0] != 1:
        raise ValueError(
            "Next-token prediction needs a causal LM's logits (1, T, V). Received: "
            f"{describe(logits)} from a model that is {'' if user.causal_lm else 'not '}a "
            "causal LM."
        )
    last = array[0, -1]  # (V,)
    probabilities = np.exp(last - last.max())
    probabilities /= probabilities.sum()
    order = np.argsort(-probabilities, kind="stable")[:k]
    tokenizer = user.tokenizer
    return tuple(
        NextToken(int(i), str(tokenizer.id_to_token(int(i))) if tokenizer else str(int(i)),
                  float(probabilities[i]))
        for i in order
    )  # fmt: skip
