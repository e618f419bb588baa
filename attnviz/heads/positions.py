"""What position scheme an attention layer uses, read from the layer (so a view can say what
its weights include).

Shape letters: H heads.

A scheme acts in one of two places. "qk": queries and keys are rotated by position before
`Q·Kᵀ` (RoPE), so the recorded query and key heads already carry it. "scores": a bias is added to
the logits after `Q·Kᵀ` (ALiBi, T5's buckets, learned relative tables, DeBERTa's and XLNet's
position terms); the recorded logits hold it, `Q·Kᵀ` alone does not. Absolute embeddings added
to the model's inputs are not the layer's: such layers report "none".

`position_scheme(layer)` tries each reader in `READERS` in order; each looks for what a family
of layers exposes (a rotary sublayer, an ALiBi sublayer or argument, T5's bucket settings, a
relative-bias table, ...), so one reader covers every model built the same way.
"""

from __future__ import annotations

import inspect as pyinspect
from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import keras

from attnviz.core.positions import alibi_slopes

WAVELENGTHS = ("rope_max_wavelength", "max_wavelength", "rope_wavelength",
               "rotary_max_wavelength", "rope_theta", "theta")  # fmt: skip
ROTARY_FRACTIONS = ("rotary_percentage", "partial_rotary_factor", "rope_partial_rotary_factor")
GIVEN_ROTATIONS = {"position_embeddings", "positional_encoding", "rotary_embedding"}  # arguments
ADDED_POSITIONS = ("DFineMultiheadAttention",)  # given `position_embeddings` to add, not rotate


@dataclass(frozen=True)
class PositionScheme:
    """How an attention layer brings in token positions."""

    name: str  # "none", "rope", "alibi", "t5-buckets", "relative-table", "relative-axes",
    # "disentangled", "relative" or "added"
    applied: str  # "qk" (in the recorded Q and K), "scores" (in the logits only), "" (none)
    text: str  # one sentence for a view, e.g. "RoPE (wavelength 10000): Q and K rotated ..."
    details: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))  # numbers


NONE = PositionScheme("none", "", "No position scheme in the layer (positions, if any, were "
                      "added to its inputs).")  # fmt: skip


def position_scheme(layer: keras.layers.Layer) -> PositionScheme:
    """The position scheme of `layer` (NONE if no reader recognises one)."""
    for reader in READERS:
        scheme = reader(layer)
        if scheme is not None:
            return scheme
    return NONE


def _scheme(name: str, applied: str, text: str, **details: Any) -> PositionScheme:
    return PositionScheme(name, applied, text, MappingProxyType(details))


def _attribute(layer: Any, names: tuple[str, ...]) -> Any:
    """The first of `names` the layer (or, with a leading "_", privately) has, else None."""
    for name in names:
        for spelled in (name, f"_{name}"):
            value = getattr(layer, spelled, None)
            if value is not None and not callable(value):
                return value
    return None


def _sublayers(layer: keras.layers.Layer) -> list[keras.layers.Layer]:
    return list(layer._flatten_layers(include_self=False, recursive=True))


def _call_parameters(layer: keras.layers.Layer) -> set[str]:
    """The names `layer.call` takes (Keras lists them; else from the signature)."""
    listed = getattr(layer, "call_signature_parameters", None)
    if isinstance(listed, (list, tuple)):
        return set(listed)
    try:
        return set(pyinspect.signature(layer.call).parameters)
    except (TypeError, ValueError):
        return set()


def _added(layer: keras.layers.Layer) -> PositionScheme | None:
    """DETR-style layers (D-Fine): position embeddings added to the inputs of Q and K."""
    if type(layer).__name__ not in ADDED_POSITIONS:
        return None
    text = "Position embeddings added to the inputs of Q and K (DETR): Q·Kᵀ includes them."
    return _scheme("added", "qk", text)


def _rope(layer: keras.layers.Layer) -> PositionScheme | None:
    """Rotary embeddings: a rotary sublayer, or rotations the model hands to the call."""
    if False in (getattr(layer, "use_rope", True), getattr(layer, "apply_rotary_embedding", True)):
        return None  # SmolLM3's layers without RoPE ("NoPE"), Moonshine's cross-attention
    rotary = [s for s in _sublayers(layer) if _is_rotary(type(s).__name__)]
    given = _call_parameters(layer) & GIVEN_ROTATIONS
    if not rotary and not given and "rope" not in type(layer).__name__.lower():
        return None
    sources = [layer, *rotary]
    wavelength = next((w for s in sources if (w := _attribute(s, WAVELENGTHS)) is not None), None)
    fraction = next((f for s in sources if (f := _attribute(s, ROTARY_FRACTIONS)) is not None), 1.0)
    details = {"max_wavelength": wavelength, "rotary_fraction": float(fraction)}
    where = "computed by the model and given to the layer" if given and not rotary else ""
    text = "RoPE: each query and key is rotated by its position before Q·Kᵀ"
    text += f" ({where})" if where else ""
    text += f", max wavelength {wavelength:g}" if isinstance(wavelength, (int, float)) else ""
    text += f", on {fraction:.0%} of each head's features" if fraction != 1.0 else ""
    return _scheme("rope", "qk", text + ".", **details)


def _is_rotary(class_name: str) -> bool:
    lowered = class_name.lower()
    return "rotary" in lowered or "rope" in lowered or lowered == "roformrpositionalembedding"


def _alibi(layer: keras.layers.Layer) -> PositionScheme | None:
    """ALiBi: a linear distance penalty per head (Bloom's sublayer, Falcon's argument)."""
    biases = [s for s in _sublayers(layer) if "alibi" in type(s).__name__.lower()]
    if not biases and "alibi" not in _call_parameters(layer):
        return None
    heads = _attribute(layer, ("num_heads", "num_query_heads", "num_attention_heads"))
    biggest = getattr(biases[0], "alibi_bias_max", 8) if biases else 8
    slopes = _slopes(heads, biggest)
    text = "ALiBi: each head adds −slope × (query position − key position) to its scores"
    return _scheme("alibi", "scores", text + ".", slopes=slopes, alibi_bias_max=biggest)


def _slopes(heads: Any, biggest: Any) -> tuple[float, ...] | None:
    """The layer's slopes by the paper's formula (`core.positions.alibi_slopes`), or None when
    its heads or largest bias are not numbers it can use."""
    try:
        return tuple(float(m) for m in alibi_slopes(heads, max_bias=biggest))
    except ValueError:
        return None


def _t5_buckets(layer: keras.layers.Layer) -> PositionScheme | None:
    """T5: a learned bias per head for each of `num_buckets` log-spaced relative distances."""
    buckets = _attribute(layer, ("relative_attention_buckets", "relative_attention_num_buckets"))
    if buckets is None:
        return None
    distance = _attribute(layer, ("relative_attention_max_distance",))
    bidirectional = not bool(getattr(layer, "is_decoder", False))
    text = (f"T5 relative buckets: a learned bias per head for each of {buckets} log-spaced "
            f"distance buckets (up to {distance}), added to the scores")  # fmt: skip
    return _scheme("t5-buckets", "scores", text + ".", num_buckets=buckets,
                   max_distance=distance, bidirectional=bidirectional)  # fmt: skip


def _relative_table(layer: keras.layers.Layer) -> PositionScheme | None:
    """Swin: a learned bias per head for each 2-D offset inside a window."""
    if getattr(layer, "relative_position_bias_table", None) is None:
        return None
    window = tuple(getattr(layer, "window_size", ()))
    text = "Relative position bias: a learned bias per head for each 2-D offset in the window"
    return _scheme("relative-table", "scores", text + ".", window_size=window)


def _relative_axes(layer: keras.layers.Layer) -> PositionScheme | None:
    """ViTDet and SAM: learned relative embeddings per image axis, multiplied by Q."""
    if getattr(layer, "use_rel_pos", False) is not True:
        return None
    text = "Decomposed relative positions: Q times learned height and width offsets, added"
    return _scheme("relative-axes", "scores", text + " to the scores.",
                   input_size=tuple(getattr(layer, "input_size", ()) or ()))  # fmt: skip


def _disentangled(layer: keras.layers.Layer) -> PositionScheme | None:
    """DeBERTa: content-to-position and position-to-content terms added to Q·Kᵀ."""
    if "rel_embeddings" not in _call_parameters(layer):
        return None
    span = _attribute(layer, ("bucket_size",))
    text = (f"Disentangled attention: content-to-position and position-to-content terms over "
            f"relative distances up to {span} are added to Q·Kᵀ")  # fmt: skip
    return _scheme("disentangled", "scores", text + ".", bucket_size=span)


def _xlnet_relative(layer: keras.layers.Layer) -> PositionScheme | None:
    """XLNet: sinusoidal relative encodings, each with learned biases, added to Q·Kᵀ."""
    if "relative_position_encoding" not in _call_parameters(layer):
        return None
    text = "Relative attention (Transformer-XL): Q times sinusoidal relative encodings, added"
    return _scheme("relative", "scores", text + " to Q·Kᵀ.")


READERS: tuple[Callable[[keras.layers.Layer], PositionScheme | None], ...] = (
    _alibi, _t5_buckets, _relative_table, _relative_axes, _disentangled, _xlnet_relative, _added,
    _rope,
)  # fmt: skip
