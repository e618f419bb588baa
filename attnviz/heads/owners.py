"""Which layer call an attention belongs to, and what that call was given.

Shape letters: B batch, T queries, S keys, D features.

The owner of an attention is the innermost layer whose call ran the product `A·V` (its Keras
name scope was the last one open). One exception keeps hand-written layers whole: a layer with
no weights of its own that is not one of Keras's attention layers, called from a layer (or a
subclassed model used as a block, not a functional or sequential model), hands the attention to
that caller. The decoder tutorial's `MultiHeadAttention` (with `W_q`, `W_k`, `W_v`, `W_o`) calls
a weightless `DotProductAttention`; the attention is recorded as the `MultiHeadAttention`'s,
called on the tokens it projects.

A weightless layer named "…Attention…" called by a block that is not (Flux's
`FluxRoPEAttention`, given Q, K and V by its `DoubleStreamBlock`) stays the owner, but what it
was given is read at the block's level.

What the call was given is found by walking back from `Q`, `K` and `V` through the ops of the
call to the tensors that came from outside it (its inputs; variables and constants are not
inputs). The call is "self" attention when `Q` and `K` come from the same input (the same
tensor, or equal values after a cast), "cross" when they come from different ones, "unknown"
when one side cannot be traced. When each side has exactly one input of rank 3, those are kept
as the call's "query", "key" and "value" `(B, T, D)`, `(B, S, D)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import keras
import numpy as np
from keras.src.models.functional import Functional

from attnviz.core.checks import read_only
from attnviz.heads.tracing import OpNode, OpTrace

KEEP_OWNER = (  # Keras's attention layers own their attention even without weights
    keras.layers.Attention,
    keras.layers.MultiHeadAttention,
    keras.layers.GroupQueryAttention,
)  # AdditiveAttention subclasses Attention
WALK_TENSORS = 2000  # most tensors walked back from Q, K or V


@dataclass(frozen=True)
class Owner:
    """The layer call an attention belongs to."""

    layer: keras.layers.Layer  # the owner layer
    scope: Any  # the Keras name scope of this call (one object per call)
    chain: tuple  # the scopes from the inspected model down to `scope`
    path: str  # layer names from the inspected model down, e.g. "layer_0/self_attention"
    kind: str  # "self", "cross" or "unknown"
    inputs: dict  # "query", "key", "value": read-only (B, ·, D) arrays the call got; or {}


def find_owner(trace: OpTrace, scopes: tuple, sources: dict) -> Owner | None:
    """The owner of an attention computed under `scopes` (layer scopes, outermost first) whose
    Q, K and V entered their products at `sources` ("query" -> (op, input index), ...)."""
    if not scopes:
        return None
    lowest = 1 if isinstance(scopes[0].caller, keras.Model) else 0  # never the inspected model
    source = depth = len(scopes) - 1  # where the inputs are read; the owner's depth
    while source > lowest and _hands_over(scopes[source].caller, scopes[source - 1].caller):
        source -= 1
    while depth > source and (
        _looks_like_attention(scopes[depth - 1].caller)
        or not _looks_like_attention(scopes[depth].caller)
    ):
        depth -= 1
    scope = scopes[depth]
    roots = {
        name: _roots(trace, op, index, scopes[source]) for name, (op, index) in sources.items()
    }
    if "scores" in roots:  # scores that are not a product: their inputs are Q's and K's
        roots |= _split_scores(roots.pop("scores"), roots["value"])
    return Owner(
        layer=scope.caller,
        scope=scope,
        chain=scopes[: depth + 1],
        path="/".join(s.name for s in scopes[1 : depth + 1]) or scope.name,
        kind=_kind(roots.get("query"), roots.get("key")),
        inputs=_inputs(roots),
    )


def _hands_over(layer: keras.layers.Layer, caller: keras.layers.Layer) -> bool:
    """Whether `layer`'s attention is recorded as its caller's (see module doc)."""
    return not (isinstance(layer, KEEP_OWNER) or layer.weights or _is_graph(caller))


def _looks_like_attention(layer: keras.layers.Layer) -> bool:
    return "attention" in type(layer).__name__.lower()


def _is_graph(layer: keras.layers.Layer) -> bool:
    """A functional or sequential model: a graph of layers, not a block that computes."""
    return isinstance(layer, (Functional, keras.Sequential))


def _roots(trace: OpTrace, op: OpNode, index: int, scope: Any) -> list:
    """The float tensors of rank >= 2 from outside `scope`'s call that input `index` of `op`
    was computed from (walking back through the call's ops; variables are not followed)."""
    roots, seen, stack = [], set(), [(op, index)]
    while stack and len(seen) < WALK_TENSORS:
        consumer, i = stack.pop()
        ref = consumer.input_refs[i]  # one reference object per tensor (see `tracing`)
        if id(ref) in seen:
            continue
        seen.add(id(ref))
        producer = trace.producer(consumer, i)
        if producer is None or not any(s is scope for s in producer.scopes):
            tensor = consumer.input(i)
            if tensor is not None and len(tensor.shape) >= 2 and tensor.dtype.is_floating:
                roots.append(tensor)
        elif producer.op_type != "ReadVariableOp":
            stack += [(producer, j) for j in range(len(producer.input_ids))]
    return roots


def _split_scores(scores: list, value: list) -> dict:
    """{"query": [...], "key": [...]} from the inputs the scores were computed from: the one
    that is also an input of V is the key (both, for self-attention); {} if unclear."""
    keys = [x for x in scores if any(_equal(x, v) for v in value)]
    queries = [x for x in scores if not any(_equal(x, k) for k in keys)] or keys
    if len(keys) != 1 or len(queries) != 1:
        return {}
    return {"query": queries, "key": keys}


def _kind(query: list | None, key: list | None) -> str:
    """The kind: "self" if Q and K come from the same inputs, "cross" if not, else "unknown"."""
    if not query or not key:
        return "unknown"
    if {id(x) for x in query} == {id(x) for x in key}:
        return "self"
    same = all(any(_equal(q, k) for k in key) for q in query) and all(
        any(_equal(k, q) for q in query) for k in key
    )
    return "self" if same else "cross"


def _equal(a: Any, b: Any) -> bool:
    """The same values (the same input cast twice, e.g. under a mixed-precision policy)."""
    if a is b:
        return True
    if tuple(a.shape) != tuple(b.shape):
        return False
    return bool(np.array_equal(np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)))


def _inputs(roots: dict) -> dict:
    """The call's query, key and value, read-only, when each is one rank-3 tensor."""
    if set(roots) != {"query", "key", "value"} or any(len(r) != 1 for r in roots.values()):
        return {}
    if any(len(r[0].shape) != 3 for r in roots.values()):
        return {}
    return {name: read_only(tensor) for name, (tensor,) in roots.items()}  # views, no copies
