"""Multi-head attention in one of the three ways of a Transformer (`attnviz.core.ways`).

Shape letters: B batch, Ls source tokens, Lt target tokens, D model features.
"""

from __future__ import annotations

from typing import Any

from attnviz.core.ways import get_way, way_mask_settings
from attnviz.transformer.multihead import MultiHeadResult, compute_multihead


def compute_way(
    way: str,
    source: Any,
    target: Any,
    *,
    num_heads: int = 1,
    source_padding_mask: Any = None,
    target_padding_mask: Any = None,
    **kwargs: Any,
) -> MultiHeadResult:
    """Multi-head attention the way `way` does it: picks Q/K/V and the masks, then attends.

    Args:
        way: "bidirectional", "causal" or "cross".
        source: the encoder side `(Ls, D)` or `(B, Ls, D)`; may be None for "causal".
        target: the decoder side `(Lt, D)` or `(B, Lt, D)`; may be None for "bidirectional".
        source_padding_mask, target_padding_mask: as in `way_mask_settings`.
        num_heads, **kwargs: passed on to `compute_multihead` (not `causal`/`key_padding_mask`).
    """
    chosen = get_way(way)
    settings = way_mask_settings(
        way, source_padding_mask=source_padding_mask, target_padding_mask=target_padding_mask
    )
    sides = {"source": source, "target": target}
    keys = sides[chosen.keys_from]
    return compute_multihead(
        sides[chosen.queries_from],
        keys,
        keys,
        num_heads=num_heads,
        causal=settings.causal,
        key_padding_mask=settings.key_padding_mask,
        **kwargs,
    )
