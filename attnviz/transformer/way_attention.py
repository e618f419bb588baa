"""Multi-head attention in one of the three ways of a Transformer (`attnviz.core.ways`).

Shape letters: B batch, Ls source tokens, Lt target tokens, D model features.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from attnviz.core.checks import check_heads, check_score_cells
from attnviz.core.settings import AttentionSettings
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
    settings: AttentionSettings | None = None,
    max_cells: int | None = None,
    **kwargs: Any,
) -> MultiHeadResult:
    """Multi-head attention the way `way` does it: picks Q/K/V and the masks, then attends.

    Args:
        way: "bidirectional", "causal" or "cross".
        source: the encoder side `(Ls, D)` or `(B, Ls, D)`; may be None for "causal".
        target: the decoder side `(Lt, D)` or `(B, Lt, D)`; may be None for "bidirectional".
        source_padding_mask, target_padding_mask: as in `way_mask_settings`.
        settings: as in `compute_multihead`, but the way decides `causal` (it is replaced);
            or None, to give the attention keywords (but `causal`) in `kwargs`.
        max_cells: the most B·H·T·S attention cells, as a page allows
            (`limits.APP_SCORE_CELLS`); None = `compute_multihead`'s memory limit.
        num_heads, **kwargs: passed on to `compute_multihead` (not `causal`/`key_padding_mask`).
    """
    chosen = get_way(way)
    mask = way_mask_settings(
        way, source_padding_mask=source_padding_mask, target_padding_mask=target_padding_mask
    )
    sides = {"source": source, "target": target}
    queries, keys = sides[chosen.queries_from], sides[chosen.keys_from]
    if "causal" in kwargs:
        raise TypeError(f"`compute_way` takes no `causal`: the {way} way decides it.")
    if max_cells is not None and min(np.ndim(queries), np.ndim(keys)) >= 2:
        t, s = np.shape(queries)[-2], np.shape(keys)[-2]
        batch = np.shape(queries)[0] if np.ndim(queries) == 3 else 1
        sizes = {"sequence": batch, "head": check_heads(num_heads), "query": t, "key": s}
        hint = "Use fewer heads or fewer or shorter sentences here, or compute_way in Python."
        check_score_cells(sizes, hint, limit=max_cells, whose="this page's")
    if settings is None:
        kwargs["causal"] = mask.causal
    else:
        settings = replace(settings, causal=mask.causal)
    return compute_multihead(
        queries,
        keys,
        keys,
        num_heads=num_heads,
        key_padding_mask=mask.key_padding_mask,
        settings=settings,
        **kwargs,
    )
