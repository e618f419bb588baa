"""Sidebar controls: how attention is computed. Each returns plain values; no maths here.

The explorer modes draw all of them (`explorer_controls`): the score, the masks
(`masks`), the position scheme (`positions`), scaling, the masked logits and the
seed; Multi-head its own part (`multihead_controls`), the Decoder and Learn only what applies to
them. A preset, a lesson or "open in the explorer" sets them through `apply_settings`, which
asks each module that owns controls to set its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnviz.core import limits
from attnviz.core.mask_spec import parse_document_lengths
from attnviz.core.score_kinds import SCORE_KINDS, SCORE_KINDS_BY_NAME
from attnviz.core.settings import AttentionSettings
from attnviz.ui.controls import masks, positions
from attnviz.ui.frame.messages import plain
from attnviz.ui.frame.presenter import controls
from attnviz.ui.frame.state import slot

DEFAULTS = AttentionSettings()
SCORE = slot("score", DEFAULTS.score, url=True)
SCALE = slot("scale", DEFAULTS.scale, url=True)
MASK_VALUE = slot("mask_value", DEFAULTS.mask_value, url=True)
SEED = slot("seed", DEFAULTS.seed, url=True)
OWN = {s.key: s for s in (SCORE, SCALE, MASK_VALUE)}  # the settable controls drawn here
SETTABLE = OWN | masks.SLOTS | positions.SLOTS  # what a preset may set
GROUPS = ("score", "masks", "mask rules", "positions", "scale", "masked logits", "seed")  # the
# groups of controls a lesson may name (`Lesson.controls`: it shows those and folds the others
# away). "masks": causal and padding; "mask rules": prefix-LM, window, sinks, chunks, documents
SIDEBAR_TEX_CHARS = 60  # TeX longer than this (the concat score) is broken over two lines
MASK_VALUE_CAPTIONS = {
    "-inf": "exact: a row with no allowed key gets zeros",
    "-1e9": "added in float32, as in the Keras tutorials",
}


@dataclass(frozen=True)
class Controls:
    """Everything the explorer's sidebar decides."""

    settings: AttentionSettings | None  # score, scaling, masks, positions, seed; None: the
    # sidebar shows why the controls do not fit together
    use_padding: bool  # apply the key padding mask


def _as_controls(values: dict[str, object]) -> dict[str, object]:
    """`values` (control keys, or `AttentionSettings` names for masks and positions) as the
    controls' values, every control included (the ones not given at their defaults)."""
    given = {key: value for key, value in values.items() if key in OWN}
    given |= masks.as_controls(values) | positions.as_controls(values)
    return {key: given.get(key, control.default) for key, control in SETTABLE.items()}


def apply_settings(values: dict[str, object]) -> None:
    """Set the controls before they are drawn (a preset, a lesson, "open in the explorer"):
    `values` maps a control's key, or an `AttentionSettings` name ("window": 2), to its value;
    every other control goes back to its default."""
    known = {*SETTABLE, *(rule.name for rule in masks.SIZED)}
    unknown = set(values) - known
    if unknown:
        raise ValueError(f"Unknown control(s) {sorted(unknown)}. Known: {sorted(known)}.")
    for key, value in _as_controls(values).items():
        SETTABLE[key].set(value)


def settings_are(values: dict[str, object]) -> bool:
    """Whether the controls say what `values` asks for (the others at their defaults); a
    rule's number counts only while its switch is on."""
    return not settings_differing(values)


def settings_differing(values: dict[str, object]) -> list[str]:
    """The controls that do not say what `values` asks for (see `settings_are`), in words:
    "score", "causal", "window"."""
    wanted = _as_controls(values)
    for rule in masks.SIZED:
        if not wanted[rule.on.key]:
            wanted.pop(rule.size.key)
    keys = [key for key, value in wanted.items() if SETTABLE[key].get() != value]
    return list(dict.fromkeys(key.removesuffix("_on").replace("_", " ") for key in keys))


def changed_settings(values: dict[str, object]) -> dict[str, str]:
    """`values` as URL fields ("true", "-1e9") of the controls that differ from their
    defaults."""
    return {
        key: str(value).lower() if isinstance(value, bool) else str(value)
        for key, value in _as_controls(values).items()
        if SETTABLE[key].default != value
    }


def _fit_sidebar(tex: str) -> str:
    """A formula broken after its "=" when it is too long for the sidebar on one line."""
    left, equals, right = tex.partition(" = ")
    if len(tex) <= SIDEBAR_TEX_CHARS or not equals:
        return tex
    return rf"\begin{{aligned}}&{left} = \\ &\quad {right}\end{{aligned}}"


def score_control() -> str:
    """The score function, with its formula."""
    side = controls("score")
    side.subheader("Scoring")
    score = side.radio(
        "Score function",
        list(SCORE_KINDS),
        captions=[SCORE_KINDS_BY_NAME[kind].caption for kind in SCORE_KINDS],
        **SCORE.widget(),
    )
    side.latex(_fit_sidebar(SCORE_KINDS_BY_NAME[score].pair_tex))
    return score


def scale_and_mask_value_controls() -> tuple[bool, str]:
    """√Dk scaling and what masked logits become."""
    scale = controls("scale").toggle(
        "Scale by √Dk",
        help="Divide every score by the square root of the key size Dk.",
        **SCALE.widget("value"),
    )
    mask_value = controls("masked logits").radio(
        "Masked logits become",
        list(MASK_VALUE_CAPTIONS),
        captions=list(MASK_VALUE_CAPTIONS.values()),
        **MASK_VALUE.widget(),
    )
    return bool(scale), mask_value


def seed_control() -> int:
    """The seed of learned weights and projections."""
    return int(
        controls("seed").number_input(
            "Seed (learned weights, projections)",
            min_value=0,
            max_value=limits.MAX_SEED,
            value=0,
            step=1,
            **SEED.widget(),
        )
    )


def explorer_controls(rope_needs: str = "") -> Controls:
    """Every control of the explorer modes (matrices, sentences, cross)."""
    score = score_control()
    mask_fields, use_padding = masks.mask_controls()
    position_fields = positions.position_controls(rope_needs)
    scale, mask_value = scale_and_mask_value_controls()
    fields = dict(score=score, scale=scale, mask_value=mask_value, seed=seed_control())
    return Controls(_settings(fields | mask_fields | position_fields), use_padding)


def _settings(fields: dict[str, object]) -> AttentionSettings | None:
    """The settings the controls say, or None after saying in the sidebar why they do not fit
    together (a sink count with no window, a bad list of documents...)."""
    try:
        lengths = fields.get("documents")
        if isinstance(lengths, str):
            fields = fields | {"documents": parse_document_lengths(lengths)}
        return AttentionSettings(**fields)
    except ValueError as err:
        controls().error(plain(str(err)), icon=":material/error:")
        return None


def multihead_controls(trained: bool) -> AttentionSettings | None:
    """Multi-head: the scaled dot product, the way sets the causal and padding masks; the
    other masks, positions, scaling, masked logits and the seed apply to random weights
    (`trained`: the weights are a trained Transformer's)."""
    side = controls()
    side.caption("Multi-head attention scores with the scaled dot product.")
    if trained:  # nothing below would change the trained weights: the controls are hidden
        side.caption(
            "Trained weights: the Transformer's own attention, always scaled by √Dk, padding "
            "never attended. Masks, positions, scaling, masked logits and the seed apply to "
            "random weights."
        )
        return AttentionSettings(score="dot")
    mask_fields, _ = masks.mask_controls(
        way_decides="The way of attention sets the causal and padding masks; add others here."
    )
    position_fields = positions.position_controls(heads=True)
    scale, mask_value = scale_and_mask_value_controls()
    fields = dict(score="dot", scale=scale, mask_value=mask_value, seed=seed_control())
    return _settings(fields | mask_fields | position_fields)
