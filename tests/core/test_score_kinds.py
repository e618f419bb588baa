"""Tests for core/score_kinds.py: the facts of each score kind, and that the layers carry them."""

import numpy as np
import pytest

from attnviz.core.score_kinds import SCORE_KINDS, SCORE_KINDS_BY_NAME
from attnviz.core.scoring import ConcatScore, DotScore, GeneralScore


def test_the_three_kinds_in_menu_order():
    assert SCORE_KINDS == ("dot", "general", "concat")


@pytest.mark.parametrize(
    ("layer", "name"), [(DotScore, "dot"), (GeneralScore, "general"), (ConcatScore, "concat")]
)
def test_each_keras_score_layer_carries_its_kind(layer, name):
    assert layer.kind is SCORE_KINDS_BY_NAME[name]
    assert layer.kind.pair_tex.startswith(r"\operatorname{score}(q_i, k_j) = ")


def test_param_shapes():
    by = SCORE_KINDS_BY_NAME
    assert by["dot"].param_shapes(3, 3, 0) == {}
    assert by["general"].param_shapes(2, 3, 0) == {"W": (2, 3)}
    assert by["concat"].param_shapes(2, 3, 5) == {
        "W_q": (2, 5),
        "W_k": (3, 5),
        "v": (5,),
        "b": (5,),
    }


def test_terms_multiply_and_add_up_to_the_score():
    q, k = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    w = np.array([[1.0, 0.5], [0.0, 2.0]])
    dot = SCORE_KINDS_BY_NAME["dot"].terms(q, k, {})
    assert dot == ((1.0, 3.0), (2.0, -1.0))  # 1·3 + 2·(−1) = 1
    general = SCORE_KINDS_BY_NAME["general"].terms(q, k, {"W": w})
    assert sum(a * b for a, b in general) == pytest.approx(q @ w @ k)  # (1, 4.5)·(3, −1) = −1.5
    params = {"W_q": w, "W_k": np.eye(2), "v": np.array([1.0, -1.0])}
    concat = SCORE_KINDS_BY_NAME["concat"].terms(q, k, params)
    expected = params["v"] @ np.tanh(q @ w + k)  # tanh(4) − tanh(3.5)
    assert sum(a * b for a, b in concat) == pytest.approx(expected)
