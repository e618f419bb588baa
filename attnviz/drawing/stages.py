"""The stages of one attention result as figures and text: what the Heatmaps and Step-by-step
views show, built in plain Python (plotly figures and strings) so a notebook can show them too.

Shape letters: T queries, S keys, Dq/Dk/Dv query/key/value features.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from attnviz.core.score_kinds import SCORE_KINDS_BY_NAME
from attnviz.core.stats import CellStep, format_number
from attnviz.drawing.focus_row import focus_row
from attnviz.drawing.heatmap import heatmap

if TYPE_CHECKING:  # only for hints: drawing does not import TensorFlow
    from attnviz.core.attention import AttentionResult

BLOCKED_LABELS = {"-inf": "masked: logit −∞", "-1e9": "masked: score − 1e9"}
MAX_TERMS = 8  # products shown in one cell's arithmetic before "… more"


@dataclass(frozen=True)
class SequenceView:
    """One batch item's result and what to call its rows and columns."""

    result: AttentionResult  # unbatched: (T, S) matrices
    query: np.ndarray  # (T, Dq)
    key: np.ndarray  # (S, Dk)
    value: np.ndarray  # (S, Dv)
    rows: tuple[str, ...]  # (T,) query labels
    cols: tuple[str, ...]  # (S,) key labels
    padding: np.ndarray | None  # (S,) bool, True = real key


@dataclass(frozen=True)
class HeatmapsFigures:
    """What the Heatmaps view shows of one `SequenceView`, every figure built in one call."""

    caption: str  # what the charts show, or what these settings change in them
    groups: tuple[dict[str, object], ...]  # the scores, ALiBi's bias, the rest (`score_groups`)
    rules: dict[str, object]  # each mask rule alone, by name (empty unless asked)
    focus: object | None  # one query row's exact weights (None unless asked)


def heatmaps_figures(
    view: SequenceView,
    *,
    fit_scale: bool = False,
    rules: dict[str, np.ndarray] | None = None,
    focus: int | None = None,
) -> HeatmapsFigures:
    """Every figure of the Heatmaps view: the stages (`score_groups`; `fit_scale` colours the
    weights from 0 to their largest), each mask rule of `rules` (`(T, S)` bool masks by name,
    True = allowed) alone, and with `focus` the exact weights of that query row, the zoom-in
    under a pooled overview."""
    r = view.result
    caption, groups = _caption(r), score_groups(view, fit_scale)
    alone = {
        name: heatmap(rule.astype(float), kind="mask", title=name.capitalize(),
                      row_labels=view.rows, col_labels=view.cols)
        for name, rule in (rules or {}).items()
    }  # fmt: skip
    row = None
    if focus is not None:
        title = f"Weights of query {named(focus, view.rows)}"
        row = focus_row(r.weights[focus], col_labels=view.cols, title=title, blocked=~r.mask[focus])
    return HeatmapsFigures(caption, groups, alone, row)


def _caption(r: AttentionResult) -> str:
    """What is special about these settings' stages, or what the stages are."""
    notes = []
    if r.rotated_query is not None:
        notes.append(
            "RoPE is on: the scores are computed from Q and K rotated by position "
            "(the Positions tab shows them)."
        )
    if not r.settings.scale:
        notes.append("Scaling is off: the scaled scores equal the raw scores.")
    if r.mask.all():
        notes.append("No key is masked here: every query may attend every key.")
    bias = " + B" if r.position_bias is not None else ""
    return " ".join(notes) or f"Each stage of softmax(score(Q, K)/√Dk{bias} + M)·V, in order."


def rotated_figures(view: SequenceView) -> dict[str, object]:
    """RoPE's own stages, Q and K after its rotation (none without RoPE)."""
    r, features = view.result, {"col_title": "feature"}
    if r.rotated_query is None:
        return {}
    return {
        "rotated query": heatmap(
            r.rotated_query, kind="values", title="Rotated Q (RoPE: each pair turned by "
            "position)", row_labels=view.rows, **features,
        ),
        "rotated key": heatmap(
            r.rotated_key, kind="values", title="Rotated K (RoPE)", row_labels=view.cols,
            row_title="key", **features,
        ),
    }  # fmt: skip


POSITION_TEXT = {  # the position scheme's stages: (caption, TeX)
    "rotated query": ("0 · RoPE turns each pair of q's features by its position",
                      r"\tilde q_i = R(i\,\omega)\, q_i"),
    "rotated key": ("0 · … and each pair of k's features by its position",
                    r"\tilde k_j = R(j\,\omega)\, k_j"),
    "position bias": ("2½ · ALiBi adds a distance penalty",
                      r"B_{ij} = -m\,\lvert i - j\rvert"),
}  # fmt: skip


def ordered_stages(view: SequenceView, fit_scale: bool = False) -> dict[str, object]:
    """Every stage's figure in the order of the computation, the position scheme's included:
    RoPE's rotated Q and K first, ALiBi's bias after the scaled scores."""
    return rotated_figures(view) | stage_figures(view, fit_scale)


def score_groups(
    view: SequenceView, fit_scale: bool = False
) -> tuple[dict[str, object], dict[str, object], dict[str, object]]:
    """The stages from the scores on, in three groups: the raw and scaled scores, ALiBi's bias
    (empty without ALiBi), the rest."""
    stages = stage_figures(view, fit_scale)
    scores = {n: stages[n] for n in ("raw scores", "scaled scores")}
    bias = {n: stages[n] for n in ("position bias",) if n in stages}
    return scores, bias, {n: f for n, f in stages.items() if n not in scores | bias}


def stage_figures(view: SequenceView, fit_scale: bool = False) -> dict[str, object]:
    """The figure of every stage from the scores on, by name, in the order attention computes
    them (ALiBi's bias, where it is used, after the scaled scores); with `fit_scale`, the
    weights are coloured from 0 to their largest (see `heatmap`)."""
    r, rows, cols = view.result, view.rows, view.cols
    blocked = ~r.mask
    label = BLOCKED_LABELS[r.settings.mask_value]
    common = {"row_labels": rows, "col_labels": cols}
    shown_zero = blocked & (r.weights == 0)  # masked and really zero: draw as blocked
    scores = {
        "raw scores": heatmap(r.raw_scores, kind="signed", title="Raw scores", **common),
        "scaled scores": heatmap(
            r.scores,
            kind="signed",
            title=f"Scaled scores (× {r.scale_factor:.4g})"
            if r.settings.scale
            else "Scaled scores (scaling off: × 1)",
            **common,
        ),
    }
    if r.position_bias is not None:
        scores["position bias"] = heatmap(
            r.position_bias, kind="signed", title=f"ALiBi bias −m·|i − j| (m = "
            f"{r.alibi_slope:.4g})", **common,
        )  # fmt: skip
    return scores | {
        "mask": heatmap(
            r.mask.astype(float),
            kind="mask",
            title="Mask (allowed keys)",
            blocked=blocked,
            blocked_label="blocked",
            **common,
        ),
        "masked scores": heatmap(
            r.masked_scores,
            kind="signed",
            title="Masked scores (what softmax sees)",
            blocked=blocked,
            blocked_label=label,
            **common,
        ),
        "weights": heatmap(
            r.weights,
            kind="weights",
            title="Attention weights",
            blocked=shown_zero,
            blocked_label=label,
            fit_scale=fit_scale,
            **common,
        ),
        "output": heatmap(
            r.output,
            kind="values",
            title="Output (context vectors)",
            row_labels=rows,
            col_labels=[str(c) for c in range(r.output.shape[1])],
            col_title="feature",
        ),
    }


SCORE_TEX = r"\operatorname{score}(Q, K)"


def logits_tex(r: AttentionResult, score: str = SCORE_TEX) -> str:
    """What softmax sees, as the settings of `r` make it: the score, divided by √d_k only while
    scaling is on, plus ALiBi's bias B where it is used, plus the mask M."""
    scaled = rf"\frac{{{score}}}{{\sqrt{{d_k}}}}" if r.settings.scale else score
    bias = " + B" if r.position_bias is not None else ""
    return f"{scaled}{bias} + M"


def formula_tex(r: AttentionResult) -> str:
    """The whole computation of `r` in one line, its own score written out."""
    score = SCORE_KINDS_BY_NAME[r.settings.score].matrix_tex
    return r"\text{output} = \operatorname{softmax}\Big(" + logits_tex(r, score) + r"\Big)\,V"


def stage_texts(r: AttentionResult) -> dict[str, tuple[str, str]]:
    """Each stage's caption and TeX, by name, as the settings of `r` make them (no √d_k while
    scaling is off, ALiBi's B where it is used, the mask value in M)."""
    logits = logits_tex(r)
    blocked = "−∞" if r.settings.mask_value == "-inf" else "−1e9"
    if r.settings.scale:
        scaling = ("2 · Divide by √Dk", rf"\frac{{{SCORE_TEX}}}{{\sqrt{{d_k}}}}")
    else:
        scaling = ("2 · Scaling is off: the scores stay as they are", rf"{SCORE_TEX} \times 1")
    return {
        "raw scores": ("1 · Score every query against every key", stage_tex("raw scores", r)),
        "scaled scores": scaling,
        "mask": (f"3 · The mask M: 0 where allowed, {blocked} where blocked",
                 stage_tex("mask", r)),
        "masked scores": ("4 · Add the mask", logits),
        "weights": ("5 · Softmax over each row", rf"\operatorname{{softmax}}\Big({logits}\Big)"),
        "output": ("6 · Weighted sum of the values",
                   rf"\operatorname{{softmax}}\Big({logits}\Big)\,V"),
    }  # fmt: skip


def stage_tex(name: str, r: AttentionResult) -> str:
    """The TeX of stage `name` that depends on the settings (the score, the mask value)."""
    if name == "raw scores":
        return r"\operatorname{score}(Q, K) = " + SCORE_KINDS_BY_NAME[r.settings.score].matrix_tex
    return r"M_{ij} = 0 \text{ if allowed, else } " + (
        r"-\infty" if r.settings.mask_value == "-inf" else r"-10^{9}"
    )


def named(index: int, labels) -> str:
    """A row or column by its number, and its token when it has one: "2 (sat)"; "2" where the
    labels are the numbers themselves (typed matrices)."""
    label = str(labels[index])
    return str(index) if label == str(index) else f"{index} ({label})"


def cell_text(step: CellStep, view: SequenceView) -> str:
    """The arithmetic of one cell as plain text lines."""
    f = format_number
    what = SCORE_KINDS_BY_NAME[view.result.settings.score].cell_text
    terms = " + ".join(f"{f(a, 4)}×{f(b, 4)}" for a, b in step.terms[:MAX_TERMS])
    if len(step.terms) > MAX_TERMS:
        terms += f" + … ({len(step.terms) - MAX_TERMS} more terms)"
    lines = [
        f"query i = {named(step.i, view.rows)}, key j = {named(step.j, view.cols)}",
        f"1. score    {what} = {terms} = {f(step.raw_score)}",
        f"2. scale    {f(step.raw_score)} × {f(step.scale_factor)} = {f(step.score)}",
        _mask_line(step, view.result.settings.mask_value),
        f"4. exp      exp({f(step.logit)} − row max {f(step.row_max)}) = {f(step.exp_value)}",
        f"5. row sum  Σ_j exp(logit_j − row max) = {f(step.row_sum)}",
        f"6. weight   {f(step.exp_value)} / {f(step.row_sum)} = {f(step.weight)}",
    ]
    if step.rope is not None:
        lines[1:1] = _rope_lines(step)  # the rotation comes before the score
    if step.bias:  # ALiBi's penalty, between scaling and the mask
        biased = f"{f(step.score)} + ({f(step.bias)}) = {f(step.score + step.bias)}"
        lines.insert(-4, f"   + ALiBi  {biased}  (−m·|i − j|, added before the mask)")
    lines.append(_output_line(step, view))
    if step.fully_masked:
        lines.append(
            "   (row fully masked: "
            + (
                "all weights are set to 0)"
                if view.result.settings.mask_value == "-inf"
                else "softmax spreads the weight over masked keys)"
            )
        )
    return "\n".join(lines)


def _rope_lines(step: CellStep) -> list[str]:
    """Line 0: how RoPE turns q_i and k_j (the first pairs), and what that does to q · k."""
    f, rope = format_number, step.rope
    p = rope.frequencies.size  # pairs: feature k pairs with feature k + P
    shown = min(p, 3)
    turns = ", ".join(
        f"pair {k}: q by {f(rope.query_angles[k], 3)}, k by {f(rope.key_angles[k], 3)} rad"
        for k in range(shown)
    )
    more = f", … ({p - shown} more pairs)" if p > shown else ""
    shares = " + ".join(f(x, 3) for x in rope.pair_products[:MAX_TERMS])
    if p > MAX_TERMS:
        shares += " + …"
    return [
        f"0. RoPE     turn feature pairs (k, k + {p}) by position × θ^(−2k/D): {turns}{more}",
        f"            q_i·k_j after turning = Σ pairs {shares}; only i − j = "
        f"{step.i - step.j} decides each pair's angle",
    ]


def _output_line(step: CellStep, view: SequenceView) -> str:
    """Line 7: query i's output row, the weighted sum of the value rows (its first feature
    worked out, then the row)."""
    f = format_number
    weights = view.result.weights[step.i]  # (S,)
    firsts = " + ".join(
        f"{f(w, 4)}×{f(v, 4)}"
        for w, v in list(zip(weights, view.value[:, 0], strict=True))[:MAX_TERMS]
    )
    if weights.size > MAX_TERMS:
        firsts += f" + … ({weights.size - MAX_TERMS} more)"
    row = view.result.output[step.i]  # (Dv,)
    shown = ", ".join(f(x, 4) for x in row[:MAX_TERMS]) + (", …" if row.size > MAX_TERMS else "")
    return (
        f"7. output   o_{step.i} = Σ_j w_{step.i}j · v_j; feature 0 = {firsts} = {f(row[0])}"
        f"\n           o_{step.i} = [{shown}]"
    )


def _mask_line(step, mask_value: str) -> str:
    f = format_number
    if step.allowed:
        return f"3. mask     allowed: M = 0, logit = {f(step.logit)}"
    if mask_value == "-inf":
        return "3. mask     blocked: M = −∞, logit = −∞"
    return f"3. mask     blocked: {f(step.score)} − 1e9 = {f(step.logit)} (float32)"
