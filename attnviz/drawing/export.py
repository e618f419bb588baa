"""Downloads: every matrix as CSV and the whole result as JSON.

Pure Python; the UI only offers the strings these functions return.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # only for the hint: exporting does not import TensorFlow
    from attnviz.core.attention import AttentionResult

MATRICES = ("raw_scores", "scores", "mask", "masked_scores", "weights", "output")


def matrix_to_csv(
    matrix: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str] | None = None
) -> str:
    """A `(T, N)` matrix as CSV with a header row of column labels and a first column of row
    labels. Infinite values are written as `-inf`/`inf`, booleans as `1`/`0`."""
    matrix = np.asarray(matrix)
    cols = list(col_labels) if col_labels is not None else [str(c) for c in range(matrix.shape[1])]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["", *cols])
    for label, row in zip(row_labels, matrix, strict=True):
        writer.writerow([label, *(_cell(x) for x in row)])
    return out.getvalue()


def _cell(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    return repr(float(x)) if np.isfinite(x) else ("-inf" if x < 0 else "inf")


def _jsonable(array: np.ndarray) -> Any:
    """Nested lists; -inf (masked logits) becomes the string "-inf" since JSON has no infinity."""
    array = np.asarray(array)
    if array.dtype == bool:
        return array.tolist()
    as_objects = array.astype(object)
    as_objects[np.isneginf(array)] = "-inf"
    return as_objects.tolist()


def result_to_json(
    result: AttentionResult,
    *,
    query: np.ndarray,
    key: np.ndarray,
    value: np.ndarray,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
) -> str:
    """The inputs, settings, learned weights and every stage of `result` as a JSON document."""
    document = {
        "attnviz": "attention result",
        "settings": {**result.settings.__dict__, "scale_factor": result.scale_factor},
        "labels": {"queries": list(query_labels or []), "keys": list(key_labels or [])},
        "inputs": {"query": _jsonable(query), "key": _jsonable(key), "value": _jsonable(value)},
        "params": {name: _jsonable(w) for name, w in result.params.items()},
        "fully_masked": _jsonable(result.fully_masked),
    }
    for name in MATRICES:
        document[name] = _jsonable(getattr(result, name))
    return json.dumps(document)
