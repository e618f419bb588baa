"""CSV and JSON downloads: exact numbers, -inf spelled out, labels kept as text."""

import csv
import io
import json

import numpy as np

from attnviz import compute_attention
from attnviz.drawing.export import MATRICES, matrix_to_csv, result_to_json


def test_csv_has_labels_and_exact_values():
    text = matrix_to_csv(np.array([[0.5, -np.inf], [True, 2.25]]), ["a,b", "<x>"], ["k0", "k1"])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["", "k0", "k1"], ["a,b", "0.5", "-inf"], ["<x>", "1.0", "2.25"]]


def test_csv_of_a_bool_mask_is_ones_and_zeros():
    text = matrix_to_csv(np.array([[True, False]]), ["q"], ["a", "b"])
    assert text.splitlines()[1] == "q,1,0"


def test_json_holds_every_stage_and_round_trips_the_numbers():
    q, k, v = [[1, 0, 0], [0, 1, 0]], [[1, 2, 3], [4, 5, 6]], [[0, 1, 0], [1, 0, 1]]
    result = compute_attention(q, k, v, causal=True)
    doc = json.loads(
        result_to_json(
            result,
            query=np.array(q),
            key=np.array(k),
            value=np.array(v),
            query_labels=["0", "1"],
            key_labels=["0", "1"],
        )
    )
    for name in MATRICES:
        assert name in doc
    assert doc["masked_scores"][0][1] == "-inf"
    assert np.allclose(doc["weights"], [[1, 0], [0.150325, 0.849675]], atol=1e-6)
    assert doc["settings"]["causal"] is True and doc["settings"]["score"] == "dot"
    assert doc["mask"] == [[True, False], [True, True]]
    assert doc["inputs"]["key"] == k
