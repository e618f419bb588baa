"""What each score kind is, in one place: its name, formulas, caption, weights and cell terms.

Shape letters: Dq query features, Dk key features, U concat units.

Plain Python and numpy (no TensorFlow), so the sidebar, the step-by-step view, the statistics and
the compare view can read these facts before TensorFlow has loaded. The Keras score layers of
`scoring` carry their kind as `layer.kind` (`DotScore.kind is SCORE_KINDS_BY_NAME["dot"]`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ScoreKind:
    """One scoring function `score(q_i, k_j)`, described for people and for the step view."""

    name: str  # "dot", "general" or "concat": the `score=` argument
    caption: str  # one line for a menu, with whom it comes from
    pair_tex: str  # TeX of score(q_i, k_j)
    matrix_tex: str  # TeX of the whole (T, S) score matrix
    cell_text: str  # plain text of score(q_i, k_j), for one cell's arithmetic
    weights: tuple[str, ...]  # names of the learned weights, in the order of `param_shapes`

    def param_shapes(self, dq: int, dk: int, units: int) -> dict[str, tuple[int, ...]]:
        """The learned weights this kind uses, by name, with their shapes."""
        return {}

    def terms(
        self, q_i: np.ndarray, k_j: np.ndarray, params: dict[str, np.ndarray]
    ) -> tuple[tuple[float, float], ...]:
        """Factor pairs whose products sum to the unscaled score of `q_i (Dq,)` and `k_j (Dk,)`."""
        return tuple(zip(q_i.tolist(), k_j.tolist(), strict=True))


@dataclass(frozen=True)
class _General(ScoreKind):
    def param_shapes(self, dq: int, dk: int, units: int) -> dict[str, tuple[int, ...]]:
        return {"W": (dq, dk)}

    def terms(self, q_i, k_j, params):
        left = q_i @ params["W"]  # (Dq,) x (Dq, Dk) -> (Dk,)
        return tuple(zip(left.tolist(), k_j.tolist(), strict=True))


@dataclass(frozen=True)
class _Concat(ScoreKind):
    def param_shapes(self, dq: int, dk: int, units: int) -> dict[str, tuple[int, ...]]:
        return {"W_q": (dq, units), "W_k": (dk, units), "v": (units,), "b": (units,)}

    def terms(self, q_i, k_j, params):
        hidden = q_i @ params["W_q"] + k_j @ params["W_k"] + params.get("b", 0.0)  # (U,)
        return tuple(zip(params["v"].tolist(), np.tanh(hidden).tolist(), strict=True))


DOT = ScoreKind(
    name="dot",
    caption="q·k (Vaswani et al.)",
    pair_tex=r"\operatorname{score}(q_i, k_j) = q_i \cdot k_j",
    matrix_tex=r"QK^{\top}",
    cell_text="q_i · k_j",
    weights=(),
)
GENERAL = _General(
    name="general",
    caption="q W kᵀ (Luong)",
    pair_tex=r"\operatorname{score}(q_i, k_j) = q_i\, W\, k_j^{\top}",
    matrix_tex=r"Q W K^{\top}",
    cell_text="(q_i W) · k_j",
    weights=("W",),
)
CONCAT = _Concat(
    name="concat",
    caption="v·tanh(q W_q + k W_k) (Bahdanau)",
    pair_tex=r"\operatorname{score}(q_i, k_j) = v^{\top} \tanh(q_i W_q + k_j W_k)",
    matrix_tex=r"v^{\top}\tanh(QW_q + KW_k)",
    cell_text="Σ v_u · tanh(q_i W_q + k_j W_k)_u",
    weights=("W_q", "W_k", "v", "b"),
)
SCORE_KINDS_BY_NAME = {kind.name: kind for kind in (DOT, GENERAL, CONCAT)}
SCORE_KINDS = tuple(SCORE_KINDS_BY_NAME)  # ("dot", "general", "concat")
