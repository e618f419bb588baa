"""Tests for drawing/translation.py: a translation's attention as a heatmap, output characters
down and input characters across, spaces shown as ␣."""

from types import SimpleNamespace

import numpy as np

from attnviz.drawing.translation import SPACE, char_labels, translation_figure


def test_a_space_is_drawn_as_its_sign_and_nothing_else_changes():
    assert char_labels(["a", " ", "1", "␣"]) == ["a", SPACE, "1", "␣"]
    assert char_labels("") == []


def test_rows_are_output_characters_and_columns_input_characters():
    weights = np.array([[0.7, 0.2, 0.1], [0.0, 0.5, 0.5]])
    translation = SimpleNamespace(
        weights=weights, source_tokens=["a", " ", "b"], target_tokens=["x", "y"]
    )
    fig = translation_figure(translation, "Attention")
    values = fig.data[0]
    np.testing.assert_allclose(np.asarray(values.z, dtype=float), weights)
    text = str(fig.to_dict())
    for label in ("x", "y", "a", SPACE, "b", "output", "input", "Attention"):
        assert label in text


def test_nothing_decoded_draws_one_empty_row():
    translation = SimpleNamespace(weights=np.zeros((0, 2)), source_tokens=["a", "b"],
                                  target_tokens=[])  # fmt: skip
    fig = translation_figure(translation, "t")
    assert np.asarray(fig.data[0].z, dtype=float).shape == (1, 2)
    assert "(none)" in str(fig.to_dict())
