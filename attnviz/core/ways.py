"""The three ways of attention in a Transformer: one registry (`WAYS`) that the multi-head
maths, the trained models and the pages all read, and each way's mask.

Shape letters: B batch, T queries, S keys; the source is the encoder's input sentence (Ls tokens),
the target is the decoder's input sentence (Lt tokens).

- "bidirectional": encoder self-attention; queries and keys both from the source, every token
  sees every real token (source padding mask). T = S = Ls.
- "causal": decoder masked self-attention; queries and keys both from the target, each token sees
  itself and earlier real tokens (look-ahead AND target padding mask). T = S = Lt.
- "cross": encoder–decoder attention; queries from the target, keys and values from the source,
  every target token sees every real source token (source padding mask). T = Lt, S = Ls.

Padding masks are bool `(L,)` or `(B, L)`, True = real token; they mask keys only, as in the
Transformer: a padded query still gets a row, which later layers ignore.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from attnviz.core.checks import check_choice, check_score_cells, check_size
from attnviz.core.masks import build_mask, causal_mask, check_padding_mask


@dataclass(frozen=True)
class Way:
    """One way of attention: where its queries and keys come from and how it is masked."""

    name: str  # "bidirectional", "causal" or "cross"
    title: str  # a label for a menu
    part: str  # what the attention is called inside an encoder–decoder Transformer
    short: str  # the same in two words, for a chart title
    where: str  # one line: where it sits in the Transformer
    queries_from: str  # "source" or "target"
    keys_from: str  # "source" or "target" (the values come from the same place)
    causal: bool  # add the look-ahead mask

    @property
    def axis_titles(self) -> tuple[str, str]:
        """What the rows (queries) and columns (keys) of its weights are."""
        return self.queries_from, self.keys_from

    def mask(self, t: int, s: int) -> np.ndarray:
        """The bool `(T, S)` mask of the way itself (no padding), True = may attend."""
        return causal_mask(t, s) if self.causal else np.ones((t, s), dtype=bool)


WAYS: Mapping[str, Way] = MappingProxyType(
    {
        way.name: way
        for way in (
            Way(
                "bidirectional",
                "Bi-directional self-attention",
                "encoder self-attention",
                "encoder self",
                "Encoder self-attention: every source token attends every real source token.",
                "source",
                "source",
                False,
            ),
            Way(
                "causal",
                "Causal self-attention",
                "decoder masked self-attention",
                "decoder self",
                "Decoder masked self-attention: each target token attends itself and earlier ones.",
                "target",
                "target",
                True,
            ),
            Way(
                "cross",
                "Encoder–decoder attention",
                "encoder–decoder attention",
                "cross",
                "Decoder's second attention: target queries attend the encoder's source tokens.",
                "target",
                "source",
                False,
            ),
        )
    }
)


@dataclass(frozen=True)
class WayMask:
    """The mask settings of one way, ready for `compute_attention` / `compute_multihead`."""

    causal: bool  # pass as `causal`
    key_padding_mask: Any  # pass as `key_padding_mask`: bool (S,) or (B, S) as given, or None


def get_way(way: str) -> Way:
    """The `Way` named `way`, with a helpful error for an unknown name."""
    return WAYS[check_choice(way, "way", tuple(WAYS))]


def way_mask_settings(
    way: str, *, source_padding_mask: Any = None, target_padding_mask: Any = None
) -> WayMask:
    """The look-ahead flag and the key padding mask of `way`.

    Args:
        way: "bidirectional", "causal" or "cross".
        source_padding_mask: bool `(Ls,)` or `(B, Ls)`, True = real source token, or None.
        target_padding_mask: bool `(Lt,)` or `(B, Lt)`, True = real target token, or None.
    """
    chosen = get_way(way)
    padding = target_padding_mask if chosen.keys_from == "target" else source_padding_mask
    return WayMask(chosen.causal, padding)


def way_mask(
    way: str,
    source_length: int,
    target_length: int,
    *,
    source_padding_mask: Any = None,
    target_padding_mask: Any = None,
) -> np.ndarray:
    """The bool `(B, T, S)` mask of `way`, True = the query may attend the key.

    B is the batch of the padding masks (1 when they have no batch axis); T and S are the
    source or target lengths as the way says. `masks.build_mask` does the combining.
    """
    chosen = get_way(way)
    lengths = {
        "source": check_size(source_length, "source_length"),
        "target": check_size(target_length, "target_length"),
    }
    given = {"source": source_padding_mask, "target": target_padding_mask}
    batch = _batch_size(given)
    t, s = lengths[chosen.queries_from], lengths[chosen.keys_from]
    check_score_cells({"sequence": batch, "query": t, "key": s}, "Use shorter sequences.")
    padding = given[chosen.keys_from]
    if padding is not None:
        padding = check_padding_mask(padding, batch, s, name=f"{chosen.keys_from}_padding_mask")
    return build_mask(batch, t, s, causal=chosen.causal, key_padding_mask=padding)  # (B, T, S)


def _batch_size(padding_masks: Mapping[str, Any]) -> int:
    """B from the padding masks that have a batch axis (1 if none); they must agree."""
    sizes = {
        name: np.shape(mask)[0]
        for name, mask in padding_masks.items()
        if mask is not None and np.ndim(mask) == 2
    }
    if len(set(sizes.values())) > 1:
        raise ValueError(
            "The source and target padding masks must have the same batch size. Received: "
            f"source {sizes['source']}, target {sizes['target']} rows. Give one row per sentence "
            "pair."
        )
    return next(iter(sizes.values()), 1)
