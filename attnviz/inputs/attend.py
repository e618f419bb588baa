"""Attention on a `Problem`: what the explorer computes before it draws anything.

One call runs the user's settings (A) and, while the Compare view is open, a second setting (B)
one change away from A (`other_settings`) on the same inputs, so a page computes first and then
only draws. TensorFlow is imported on the first call, not with this module.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from attnviz.core.checks import check_choice, check_score_cells
from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.core.settings import AttentionSettings
from attnviz.inputs.problem import Problem

if TYPE_CHECKING:
    from attnviz.core.attention import AttentionResult


COMPARISONS = {  # what changes -> its label
    "mask": "Masks on / off",
    "scale": "Scaled / unscaled",
    "score": "Another score function",
    "mask_value": "−∞ / −1e9",
}


@dataclass(frozen=True)
class Other:
    """The second setting of a comparison."""

    settings: AttentionSettings  # B's settings
    use_padding: bool  # B's padding mask
    label: str  # what B is, for its chart's title ("unscaled", "no masks", ...)


def other_scores(settings: AttentionSettings) -> list[str]:
    """The score functions B may use: every one but A's."""
    return [kind for kind in SCORE_KINDS if kind != settings.score]


def other_settings(
    what: str, settings: AttentionSettings, use_padding: bool, masked: bool, score: str | None
) -> Other:
    """B for comparing `what` (a key of `COMPARISONS`): scaling or the masked logits flipped,
    another score (`score`, or the first other one), or the masks off (`masked`: some mask is
    on; else a causal mask on, so the comparison shows something)."""
    check_choice(what, "what", tuple(COMPARISONS))
    if what == "scale":
        label = "unscaled" if settings.scale else "scaled by 1/√Dk"
        return Other(replace(settings, scale=not settings.scale), use_padding, label)
    if what == "mask_value":
        flipped = "-1e9" if settings.mask_value == "-inf" else "-inf"
        return Other(replace(settings, mask_value=flipped), use_padding, f"masked logits {flipped}")
    if what == "score":
        kinds = other_scores(settings)
        kind = score if score in kinds else kinds[0]
        return Other(replace(settings, score=kind), use_padding, f"{kind} score")
    if masked:
        off = dict(causal=False, window=None, sinks=None, documents=None, prefix=None, chunk=None)
        return Other(replace(settings, **off), False, "no masks")
    return Other(replace(settings, causal=True), use_padding, "causal mask")


@dataclass(frozen=True)
class Attended:
    """A problem's attention under the user's settings, and under the compared setting."""

    result: AttentionResult  # A: every batch item, as compute_attention returns it
    padding_used: bool  # the padding mask hid keys: it is on and the problem marks some
    other: Other | None = None  # B's setting, when comparing
    other_result: AttentionResult | None = None  # B's result, or None (not comparing, or failed)
    other_error: str | None = None  # why B could not be computed (A still can be drawn)


def attend(
    problem: Problem,
    settings: AttentionSettings,
    use_padding: bool,
    compare: str | None = None,
    compare_score: str | None = None,
    *,
    max_cells: int | None = None,
) -> Attended:
    """Attention of `problem` under `settings`, and under B (see `other_settings`) when `compare`
    names a comparison (a key of `COMPARISONS`).

    `max_cells` is the most B·T·S attention cells of the problem, as a page allows
    (`limits.APP_SCORE_CELLS`); None = what memory holds (`compute_attention`'s own limit).

    Raises:
        ValueError: when the inputs and settings do not fit together (A); B's own error is
            kept in `Attended.other_error`.
    """
    from attnviz.core.attention import compute_attention

    if max_cells is not None:
        sizes = {"sequence": problem.batch, "query": problem.query.shape[-2]}
        sizes["key"] = problem.key.shape[-2]
        hint = "Use fewer or shorter sequences here, or compute_attention in Python."
        check_score_cells(sizes, hint, limit=max_cells, whose="this page's")
    padding = problem.padding if use_padding else None
    hid = padding is not None and not padding.all()  # a padding mask of all True hides nothing
    other = None
    if compare is not None:  # B's setting first: pure Python, and a wrong `compare` fails fast
        masked = padding is not None or any_mask(settings)
        other = other_settings(compare, settings, use_padding, masked, compare_score)
    result = compute_attention(
        problem.query, problem.key, problem.value, key_padding_mask=padding,
        params=problem.params, settings=settings,
    )  # fmt: skip
    if other is None:
        return Attended(result, hid)
    b_padding = problem.padding if other.use_padding else None
    try:
        b = compute_attention(
            problem.query, problem.key, problem.value, key_padding_mask=b_padding,
            params=problem.params, settings=other.settings,
        )  # fmt: skip
    except ValueError as err:
        return Attended(result, hid, other, None, str(err))
    return Attended(result, hid, other, b)


def any_mask(settings: AttentionSettings) -> bool:
    """Whether any mask rule of `settings` is on (padding aside)."""
    rules = (settings.window, settings.sinks, settings.documents, settings.prefix, settings.chunk)
    return settings.causal or any(rule is not None for rule in rules)
