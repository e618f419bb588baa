"""One trace type: the attention calls of one run of a model, whatever model ran.

Shape letters: B batch, H heads, T queries, S keys, Dk and Dv features per head, L calls stacked
as layers.

Every model attnviz runs returns its attention as `AttentionCalls`, a read-only stack of
`AttentionCall`s in the order they were computed: `attnviz.inspect` of any Keras model (an
`Inspection`, which adds the model's outputs and warnings), the Transformer translator's and the
language model's `trace` (`.attention`), and the seeded decoder's `run_decoder` (`.attention`).
The model view panel, `drawing.model_view.inspection_view`, summaries and rollout read this type
(summaries and rollout through `layer_stack`), as TransformerLens reads one `ActivationCache`.

Vocabulary. `kind` says how a call's queries and keys relate, which any run can tell: "self"
(Q and K from one input), "cross" (from two), "unknown". `way` says which of the three ways of
`attnviz.core.ways` the call is, when the model knows it: "bidirectional" (an encoder's
self-attention), "causal" (a decoder's masked self-attention), "cross" (encoder–decoder); None
when not known (`inspect`). A way fixes the kind: "cross" is a "cross" call, the others "self".

Weights are always `(B, H, T, S)`, one batch axis first even for one sequence (B = 1), as the
layers compute them. Pure numpy: nothing here imports TensorFlow.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from attnviz.core.checks import check_choice, check_int, describe, read_only
from attnviz.core.ways import WAYS

if TYPE_CHECKING:  # only for hints: the inspect-only fields' types load Keras
    from attnviz.heads.positions import PositionScheme
    from attnviz.heads.readout import Fold
    from attnviz.heads.verification import Verified

KINDS = ("self", "cross", "unknown")  # how a call's Q and K relate: one input, two, not known
Labels = tuple[tuple[str, ...], ...]  # (B, ·) one tuple of token labels per sequence


@dataclass(frozen=True, kw_only=True)
class AttentionCall:
    """One attention computed during a run (arrays are read-only).

    `key`, `kind` and `weights` are always known; the rest where the producer knows them
    (`inspect` fills the layer's path, config, logits, position scheme and check; the
    Transformers fill `way`, `layer` and the tokens as labels).
    """

    key: str  # unique in the run, e.g. "decoder_layer_0/self_attention" or "causal/1"
    kind: str  # "self" (Q and K from the same input), "cross", or "unknown" (see `KINDS`)
    weights: np.ndarray  # (B, H, T, S) float32 softmax weights as the layer used them
    mask: np.ndarray | None = None  # (B, T, S) bool, True = may attend (in some head); None =
    # unmasked
    way: str | None = None  # "bidirectional", "causal" or "cross" when known (`core.ways`)
    layer: int = 0  # the layer it belongs to; for `inspect`, the n-th call of its kind
    row_labels: Labels | None = None  # (B, T) each sequence's query tokens; None: not known
    col_labels: Labels | None = None  # (B, S) each sequence's key tokens; None: not known
    query_heads: np.ndarray | None = None  # (B, H, T, Dk) Q as multiplied by K (after RoPE)
    key_heads: np.ndarray | None = None  # (B, H, S, Dk) K, shared heads repeated per query head
    value_heads: np.ndarray | None = None  # (B, H, S, Dv) V, likewise
    # what `inspect` reads of the layer that computed it
    path: str = ""  # layer names from the model down, e.g. "decoder_layer_0/self_attention"
    name: str = ""  # the layer's own name (not unique: every decoder layer has a "self_attention")
    call_index: int = 0  # 0 for the layer's first attention in the run, 1 for its second, ...
    config: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))  # read-only
    # view of a copy of the layer's `get_config()`
    class_name: str = ""  # the layer's class, e.g. "keras_hub...LlamaAttention"
    # "query" (B, T, Dq), "key" and "value" (B, S, ·) the layer's call was given; empty when
    # its queries, keys or values came from more than one input each
    inputs: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    logits: np.ndarray | None = None  # (B, H, T, S) the softmax's input: scores, biases, masks
    kv_heads: tuple[int, ...] | None = None  # per query head, the key/value head it shares
    head_mask: np.ndarray | None = None  # (B, H, T, S) bool, only when heads mask differently
    position: PositionScheme | None = None  # the layer's position scheme (None: not read)
    fold: Fold | None = None  # windows etc.: the batch axis holds B·G groups (None: just B)
    notes: tuple[str, ...] = ()  # remarks: sliding window, soft-capping, sinks, ...
    # how the recorded weights and values recompute what the layer returned in the same run
    # (None: no check was made)
    verified: Verified | None = None

    def __post_init__(self) -> None:
        check_choice(self.kind, "kind", KINDS)
        if self.way is not None:
            check_choice(self.way, "way", tuple(WAYS))
            if self.kind != ("cross" if self.way == "cross" else "self"):
                raise ValueError(
                    f"A {self.way!r} call is a {'cross' if self.way == 'cross' else 'self'} "
                    f"call. Received kind={self.kind!r} for call {self.key!r}."
                )
        if np.ndim(self.weights) != 4:
            raise ValueError(
                f"`weights` of call {self.key!r} must be (B, H, T, S). Received: "
                f"{describe(self.weights)}. For one sequence, add the batch axis: weights[None]."
            )

    @property
    def head_masks(self) -> np.ndarray:
        """`(B, H, T, S)` bool, True = may attend, per head (all True when unmasked)."""
        if self.head_mask is not None:
            return self.head_mask
        b, h, t, s = self.weights.shape
        mask = np.ones((b, t, s), dtype=bool) if self.mask is None else self.mask
        return read_only(np.broadcast_to(mask[:, None], (b, h, t, s)))

    def labels(self, item: int = 0) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(row labels `(T,)`, column labels `(S,)`) of sequence `item`: its tokens where
        known, else the positions "0", "1", ..."""
        _, _, t, s = self.weights.shape
        rows, cols = (
            tuple(str(i) for i in range(n)) if given is None else tuple(given[item])
            for given, n in ((self.row_labels, t), (self.col_labels, s))
        )
        return rows, cols


@dataclass(frozen=True)
class LayerStack:
    """Some calls' weights for one sequence, stacked like layers (for summaries, rollout, views)."""

    keys: tuple[str, ...]  # the stacked calls, in call order
    weights: np.ndarray  # (L, H, T, S) float32 weights of sequence `item`
    masks: np.ndarray  # (L, T, S) bool, True = may attend (all True for an unmasked call)
    item: int  # which sequence of the batch
    blocked: np.ndarray | None = None  # (L, H, T, S) bool: masked (for that head) and weight
    # exactly 0, drawn grey; None when every cell of every call may be attended


@dataclass(frozen=True)
class AttentionCalls:
    """Every attention of one run, in call order (the one trace type; see module doc)."""

    calls: tuple[AttentionCall, ...]  # in the order the attention was computed

    def keys(self) -> tuple[str, ...]:
        """Every call's key, in call order."""
        return tuple(call.key for call in self.calls)

    @property
    def weights(self) -> MappingProxyType:
        """Read-only {key: weights `(B, H, T, S)`}, in call order."""
        return MappingProxyType({call.key: call.weights for call in self.calls})

    def __getitem__(self, key: str) -> AttentionCall:
        for call in self.calls:
            if call.key == key:
                return call
        raise KeyError(f"No attention call {key!r}. The calls are: {', '.join(self.keys())}.")

    def __len__(self) -> int:
        return len(self.calls)

    def __iter__(self) -> Iterator[AttentionCall]:
        return iter(self.calls)

    def at(self, kind: str, layer: int) -> AttentionCall:
        """The call of `kind` or way (e.g. "causal", "cross") at `layer`.

        Raises:
            KeyError: if the run has no such call.
        """
        for call in self.calls:
            if kind in (call.way, call.kind) and call.layer == layer:
                return call
        raise KeyError(
            f"No {kind!r} attention call at layer {layer}. The calls are: "
            + ", ".join(f"{c.key} ({c.way or c.kind}, layer {c.layer})" for c in self.calls)
        )

    def groups(self) -> dict[str, tuple[str, ...]]:
        """The calls' keys by way (by kind where the way is not known), in order of each
        group's first call: what the model view draws as one stack each."""
        found: dict[str, list[str]] = {}
        for call in self.calls:
            found.setdefault(call.way or call.kind, []).append(call.key)
        return {name: tuple(keys) for name, keys in found.items()}

    def layer_stack(
        self, kind: str | None = "self", *, keys: Sequence[str] | None = None, item: int = 0
    ) -> LayerStack:
        """Stack the weights of sequence `item` over the calls of one `kind` or way (or `keys`).

        Args:
            kind: "self", "cross", "unknown", or a way ("bidirectional", "causal"); None: all.
            keys: the calls to stack instead, in this order.
            item: which sequence of the batch.

        Raises:
            ValueError: if no call matches, the calls' shapes differ, or `item` is not in the batch.
        """
        chosen = self._choose(kind, keys)
        shapes = {call.weights.shape for call in chosen}
        if len(shapes) != 1:
            raise ValueError(
                "The chosen calls must share one (B, H, T, S) shape to be stacked. Received "
                f"shapes {[c.weights.shape for c in chosen]} for {[c.key for c in chosen]}. "
                "Pass `keys=` of calls over the same tokens."
            )
        batch, _, t, s = next(iter(shapes))
        item = check_int(item, "item", low=0, high=batch - 1)
        full = np.ones((t, s), dtype=bool)
        weights = np.stack([call.weights[item] for call in chosen])  # L x (H, T, S)
        masked = [c.mask is not None or c.head_mask is not None for c in chosen]
        blocked = None
        if any(masked):  # (L, H, T, S)
            blocked = ~np.stack([c.head_masks[item] for c in chosen]) & (weights == 0)
        return LayerStack(
            keys=tuple(call.key for call in chosen),
            weights=weights,
            masks=np.stack([full if c.mask is None else c.mask[item] for c in chosen]),
            item=item,
            blocked=blocked,
        )

    def _choose(self, kind: str | None, keys: Sequence[str] | None) -> list[AttentionCall]:
        """The calls named by `keys`, else those of `kind` or way (every call if None)."""
        if isinstance(keys, str):
            keys = (keys,)
        if keys is not None:
            return [self[key] for key in keys] or self._none_chosen(kind, keys)
        if kind is not None:
            check_choice(kind, "kind", (*KINDS, *(w for w in WAYS if w not in KINDS)))
        chosen = [c for c in self.calls if kind is None or kind in (c.kind, c.way)]
        return chosen or self._none_chosen(kind, keys)

    def _none_chosen(self, kind: str | None, keys: Any) -> NoReturn:
        kinds = ", ".join(f"{c.key} ({c.way or c.kind})" for c in self.calls)
        raise ValueError(
            f"No attention call matches kind={kind!r}, keys={keys!r}. The calls are: {kinds}."
        )


def frozen_labels(labels: Sequence[Sequence[Any]] | None) -> Labels | None:
    """`(B, ·)` labels as a tuple of tuples of str (None stays None)."""
    return None if labels is None else tuple(tuple(str(x) for x in row) for row in labels)
