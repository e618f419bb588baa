"""Which key each query may see, by position: the causal, window, sink, document, prefix and
chunk rules of today's models, and how they combine.

Shape letters: T queries, S keys. Query i sits at position i and key j at position j (tiles and
decoding steps pass the positions they cover). A mask is bool, True = allowed. Pure numpy.

    order     causal: j <= i;  prefix-LM with prefix P: j <= i or j < P (takes causal's place)
    window    |i − j| <= w                        (local attention, e.g. Mistral's sliding window)
    chunk     i // C == j // C                    (chunked attention: each chunk on its own)
    sinks     j < k                               (StreamingLLM's attention sinks)
    documents i and j in the same packed document (block-diagonal)

    allowed = order AND ((window AND chunk) OR sinks) AND documents

Sinks stay visible however far the window or chunk has moved on, but a sink still obeys the
order (no looking ahead) and the documents; with neither a window nor a chunk they change
nothing. Chunks are bidirectional on their own; with `causal=True` they are causal within each
chunk, as in Llama 4's chunked attention. The key padding mask, per sequence, is ANDed on top
by `masks.build_mask`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnviz.core.checks import check_size, describe
from attnviz.core.limits import MAX_ARRAY_CELLS


@dataclass(frozen=True)
class MaskParts:
    """Each active rule as its own `(T, S)` bool mask (None when off), and their combination."""

    order: np.ndarray | None  # causal (j <= i) or prefix-LM (j <= i or j < P)
    window: np.ndarray | None  # |i - j| <= w
    chunk: np.ndarray | None  # same chunk
    sinks: np.ndarray | None  # the sink columns j < k (OR'd into window AND chunk)
    documents: np.ndarray | None  # same packed document
    combined: np.ndarray  # what attention uses: order & ((window & chunk) | sinks) & documents


@dataclass(frozen=True)
class MaskSpec:
    """The position rules of one attention mask (see the module doc); all off by default."""

    causal: bool = False  # query i attends key j only if j <= i
    window: int | None = None  # local attention half-width w >= 0; None = off
    sinks: int | None = None  # the first k keys stay visible to window and chunk; None = off
    documents: tuple[int, ...] | None = None  # packed document lengths, adding up to S; None = off
    prefix: int | None = None  # prefix-LM: first P keys visible to all, causal after; None = off
    chunk: int | None = None  # chunk size C >= 1; None = off

    def __post_init__(self) -> None:
        if not isinstance(self.causal, (bool, np.bool_)):
            raise ValueError(f"`causal` must be True or False. Received: {describe(self.causal)}.")
        check_window(self.window)
        check_sinks(self.sinks)
        check_prefix(self.prefix)
        check_chunk(self.chunk)
        object.__setattr__(self, "documents", check_documents(self.documents))

    def check_fits(self, t: int, s: int) -> None:
        """Raise a ValueError if a rule does not fit T queries and S keys."""
        for name, count, what in (("sinks", self.sinks, "sink"), ("prefix", self.prefix, "prefix")):
            if count is not None and count > s:
                raise ValueError(
                    f"`{name}` asks for {count} {what} tokens, but the sequence has only {s} "
                    f"keys. Use at most {s}."
                )
        if self.documents is not None and (sum(self.documents) != s or t > s):
            raise ValueError(
                f"`documents` lengths {list(self.documents)} add up to {sum(self.documents)}, "
                f"but they must cover the {s} keys exactly (and there may be at most {s} "
                f"queries; received {t}). Give lengths that add up to {s}."
            )

    def parts(self, rows: Any, cols: Any) -> MaskParts:
        """Every rule for query positions `rows (T,)` and key positions `cols (S,)`."""
        rows, cols = np.asarray(rows), np.asarray(cols)
        i, j = rows[:, None], cols[None, :]  # (T, 1), (1, S)
        band = _Band(rows, cols)
        order = None
        if self.prefix is not None:
            order = band.upto(0) | (j < self.prefix)  # (T, S)
        elif self.causal:
            order = band.upto(0)  # j <= i
        window = None
        if self.window is not None:  # -w <= j - i <= w
            window = band.upto(self.window) & ~band.upto(-self.window - 1)
        chunk = None if self.chunk is None else (i // self.chunk) == (j // self.chunk)
        sinks = None if not self.sinks else np.broadcast_to(j < self.sinks, (i.size, j.size))
        documents = None
        if self.documents is not None:
            ends = np.cumsum(self.documents)  # (N,) the first position after each document
            documents = np.searchsorted(ends, i, side="right") == np.searchsorted(
                ends, j, side="right"
            )  # (T, 1) == (1, S) -> (T, S)
        combined = _combine(i.size, j.size, order, window, chunk, sinks, documents)
        return MaskParts(order, window, chunk, sinks, documents, combined)

    def allowed(self, rows: Any, cols: Any) -> np.ndarray:
        """`(T, S)` bool: which of the keys at `cols (S,)` each query at `rows (T,)` may see."""
        return self.parts(rows, cols).combined


class _Band:
    """`j − i <= k` for query positions `rows` and key positions `cols`: `np.tri` (one fast
    pass) when both are runs of consecutive positions, as whole sequences and tiles are."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray) -> None:
        self.rows, self.cols = rows, cols
        runs = all(a.size and (np.diff(a) == 1).all() for a in (rows, cols))
        self.offset = int(rows[0] - cols[0]) if runs else None  # i − j of cell (0, 0)

    def upto(self, k: int) -> np.ndarray:
        """`(T, S)` bool: j − i <= k."""
        if self.offset is not None:
            return np.tri(self.rows.size, self.cols.size, self.offset + k, dtype=bool)
        return self.cols[None, :] - self.rows[:, None] <= k


def _combine(t, s, order, window, chunk, sinks, documents) -> np.ndarray:
    """order AND ((window AND chunk) OR sinks) AND documents; absent rules allow everything."""
    local = None
    for rule in (window, chunk):
        if rule is not None:
            local = rule if local is None else local & rule
    if local is not None and sinks is not None:
        local = local | sinks
    rules = [rule for rule in (order, local, documents) if rule is not None]
    if not rules:
        return np.ones((t, s), dtype=bool)
    if len(rules) == 1:
        return rules[0] if rules[0].flags.writeable else rules[0].copy()
    combined = rules[0] & rules[1]  # a new array: the parts stay as they are
    for rule in rules[2:]:
        combined &= rule
    return combined


def check_window(window: Any) -> int | None:
    """Validate the local-attention window: None (off) or a whole number from 0 (any size a
    sequence can have)."""
    if window is None:
        return None
    return check_size(window, "window", low=0)


def check_sinks(sinks: Any) -> int | None:
    """Validate the number of sink tokens: None (off) or a whole number from 0."""
    if sinks is None:
        return None
    return check_size(sinks, "sinks", low=0)


def check_prefix(prefix: Any) -> int | None:
    """Validate the prefix-LM prefix length: None (off) or a whole number from 0."""
    if prefix is None:
        return None
    return check_size(prefix, "prefix", low=0)


def check_chunk(chunk: Any) -> int | None:
    """Validate the chunk size: None (off) or a whole number from 1."""
    if chunk is None:
        return None
    if isinstance(chunk, (int, np.integer)) and not isinstance(chunk, bool) and chunk < 1:
        raise ValueError(
            f"`chunk` must be 1 or more: a chunk holds at least one token. "
            f"Received: {chunk}. Use None to switch chunked attention off."
        )
    return check_size(chunk, "chunk", low=1)


def check_documents(documents: Any) -> tuple[int, ...] | None:
    """Validate packed document lengths: None (off) or whole numbers from 1, as a tuple."""
    if documents is None:
        return None
    if isinstance(documents, (str, bytes)) or not hasattr(documents, "__iter__"):
        raise ValueError(
            "`documents` must be a list of document lengths, e.g. [3, 5, 2]. "
            f"Received: {describe(documents)}."
        )
    lengths = tuple(documents)
    if not lengths:
        raise ValueError(
            "`documents` must list at least one document length, e.g. [3, 5, 2]. Received an "
            "empty list. Use None to switch packed documents off."
        )
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in lengths) or (
        min(lengths) < 1
    ):
        raise ValueError(
            "Every document length in `documents` must be a whole number from 1. "
            f"Received: {describe(list(lengths))}."
        )
    lengths = tuple(int(n) for n in lengths)
    if sum(lengths) > MAX_ARRAY_CELLS:
        raise ValueError(
            f"`documents` add up to {sum(lengths):,} tokens, more than a sequence can hold in "
            f"memory: no array holds more than {MAX_ARRAY_CELLS:,} numbers (1 GiB of float32). "
            "Pack fewer or shorter documents."
        )
    return lengths


def document_ids(lengths: Any) -> np.ndarray:
    """`(N,)` the document (0, 1, …) of each position of a row packed with `lengths`."""
    lengths = check_documents(lengths)
    return np.repeat(np.arange(len(lengths)), lengths)


def parse_document_lengths(text: str) -> tuple[int, ...] | None:
    """Document lengths typed as text ("3, 4, 2" or "3 4 2"); blank text means off (None)."""
    if not isinstance(text, str):
        raise ValueError(
            f"Document lengths must be text like '3, 4, 2'. Received: {describe(text)}."
        )
    parts = text.replace(",", " ").split()
    if not parts:
        return None
    if not all(part.isdigit() for part in parts):
        raise ValueError(
            "Document lengths must be whole numbers separated by commas or spaces, e.g. "
            f"'3, 4, 2'. Received: {describe(text)}."
        )
    return check_documents([int(part) for part in parts])
