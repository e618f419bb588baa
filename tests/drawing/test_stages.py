"""Tests for drawing/stages.py: the six stage figures and one cell's arithmetic as text."""

from dataclasses import replace

import numpy as np
import pytest

from attnviz import compute_attention
from attnviz.core.stats import explain_cell
from attnviz.drawing.stages import (
    SequenceView,
    cell_text,
    formula_tex,
    heatmaps_figures,
    stage_figures,
    stage_tex,
    stage_texts,
)

Q = np.array([[1.0, 0, 0], [0, 1, 0]])  # the NumPy lab's worked example
K = np.array([[1.0, 2, 3], [4, 5, 6]])
V = np.array([[0.0, 1, 0], [1, 0, 1]])


def _view(**settings) -> SequenceView:
    result = compute_attention(Q, K, V, **settings)
    return SequenceView(result, Q, K, V, ("q0", "q1"), ("k0", "k1"), None)


def test_six_stages_in_order_with_their_titles_and_values():
    figs = stage_figures(_view(causal=True))
    assert list(figs) == [
        "raw scores",
        "scaled scores",
        "mask",
        "masked scores",
        "weights",
        "output",
    ]
    titles = [fig.layout.title.text for fig in figs.values()]
    assert titles[1] == "Scaled scores (× 0.5774)"
    np.testing.assert_allclose(figs["raw scores"].data[0].z, [[1, 4], [2, 5]])
    weights = np.nan_to_num(np.asarray(figs["weights"].data[0].z, dtype=float))
    np.testing.assert_allclose(weights, [[1, 0], [0.150325, 0.849675]], atol=1e-6)
    assert stage_figures(_view(scale=False))["scaled scores"].layout.title.text.endswith("× 1)")


def test_heatmaps_figures_bundle_the_stages_rules_and_focus_row():
    view = _view(causal=True, position="alibi")
    rule = np.array([[True, False], [True, True]])
    figures = heatmaps_figures(view, rules={"causal": rule}, focus=1)
    scores, bias, rest = (list(group) for group in figures.groups)
    assert scores == ["raw scores", "scaled scores"] and bias == ["position bias"]
    assert rest == ["mask", "masked scores", "weights", "output"]
    assert figures.caption == "Each stage of softmax(score(Q, K)/√Dk + B + M)·V, in order."
    assert figures.rules["causal"].layout.title.text == "Causal"
    np.testing.assert_array_equal(figures.rules["causal"].data[0].z, [[1, np.nan], [1, 1]])
    np.testing.assert_allclose(figures.focus.data[0].y, view.result.weights[1])
    plain = heatmaps_figures(_view())
    assert plain.rules == {} and plain.focus is None and plain.groups[1] == {}
    assert plain.caption == "No key is masked here: every query may attend every key."


def test_cell_text_shows_each_step_of_one_weight():
    view = _view(causal=True)
    text = cell_text(explain_cell(view.result, Q, K, 1, 1), view)
    lines = text.splitlines()
    assert lines[0] == "query i = 1 (q1), key j = 1 (k1)"
    numbered = replace(view, rows=["0", "1"], cols=["0", "1"])  # typed matrices: numbers only
    assert cell_text(explain_cell(view.result, Q, K, 1, 1), numbered).startswith(
        "query i = 1, key j = 1\n"
    )
    assert lines[1] == "1. score    q_i · k_j = 0×4 + 1×5 + 0×6 = 5"
    assert lines[2].startswith("2. scale    5 × 0.57735") and lines[2].endswith("= 2.88675")
    assert lines[3] == "3. mask     allowed: M = 0, logit = 2.88675"
    assert lines[6].startswith("6. weight") and lines[6].endswith("= 0.849675")
    # 7: the output row, the weights times the values (V = Q here: [[1, 0, 0], [0, 1, 0]])
    assert lines[7].startswith("7. output   o_1 = Σ_j w_1j · v_j; feature 0 = ")
    assert lines[8].strip().startswith("o_1 = [")
    blocked = cell_text(explain_cell(view.result, Q, K, 0, 1), view).splitlines()
    assert blocked[3] == "3. mask     blocked: M = −∞, logit = −∞"


def test_stage_tex_names_the_score_and_the_mask_value():
    assert stage_tex("raw scores", _view(score="general").result).endswith(r"Q W K^{\top}")
    assert stage_tex("mask", _view(mask_value="-1e9").result).endswith(r"-10^{9}")


@pytest.mark.parametrize("score", ["dot", "general", "concat"])
def test_no_square_root_in_any_formula_while_scaling_is_off(score):
    result = _view(score=score, scale=False).result
    texts = stage_texts(result)
    assert "sqrt" not in formula_tex(result)
    assert not [name for name, (_, tex) in texts.items() if "sqrt" in tex]
    assert "√" not in texts["scaled scores"][0] and "off" in texts["scaled scores"][0]
    on = _view(score=score).result
    assert r"\sqrt{d_k}" in formula_tex(on) and r"\sqrt{d_k}" in stage_texts(on)["weights"][1]


def test_the_formulas_add_alibis_bias_and_name_the_mask_value():
    plain = stage_texts(_view().result)
    assert "B" not in plain["masked scores"][1] and "−∞ where" in plain["mask"][0]
    alibi = _view(position="alibi", mask_value="-1e9").result
    assert "+ B + M" in formula_tex(alibi) and "+ B + M" in stage_texts(alibi)["output"][1]
    assert "−1e9 where" in stage_texts(alibi)["mask"][0]
