"""Tests for ui/frame/tables.py: a table's columns reach the page as they were given, without
row numbers and without a pandas DataFrame on the way; columns of unequal length are refused."""

import json
import math

import numpy as np
import pytest
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest

from attnviz.ui.frame.tables import data_table


def _script():
    import numpy as np

    from attnviz.ui.frame.tables import data_table

    data_table(
        {
            "query": ["0: the", "1: cat"],
            "entropy (bits)": np.round(np.array([0.5, 1.25], dtype=np.float32), 4),
            "most attended key": ["cat", "—"],
            "allowed keys": np.array([2, 0]),
            "no visible key": np.array([False, True]),
            "induction score": [0.812, None],
        }
    )


def test_the_columns_reach_the_page_as_given_in_their_order_without_row_numbers():
    at = AppTest.from_function(_script).run()
    assert not at.exception
    shown = at.dataframe[0]
    assert json.loads(shown.proto.columns) == {"_index": {"hidden": True}}  # no row numbers
    frame = shown.value
    assert list(frame.columns) == ["query", "entropy (bits)", "most attended key", "allowed keys",
                                   "no visible key", "induction score"]  # fmt: skip
    assert frame["query"].tolist() == ["0: the", "1: cat"]
    assert frame["entropy (bits)"].tolist() == [0.5, 1.25]
    assert frame["most attended key"].tolist() == ["cat", "—"]
    assert frame["allowed keys"].tolist() == [2, 0]
    assert frame["no visible key"].tolist() == [False, True]
    assert frame["induction score"][0] == 0.812 and math.isnan(frame["induction score"][1])


def test_a_table_is_sent_without_making_a_pandas_dataframe(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the table went through pandas")

    monkeypatch.setattr(dataframe_util, "convert_anything_to_pandas_df", refuse)
    at = AppTest.from_function(_script).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.dataframe) == 1


def test_columns_of_unequal_length_are_refused_with_their_lengths():
    with pytest.raises(ValueError, match=r"as many values.*'a': 2, 'b': 1"):
        data_table({"a": [1, 2], "b": np.array([3])})
