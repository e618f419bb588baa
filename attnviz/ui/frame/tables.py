"""Tables every page draws the same way: named columns of numbers and words in Streamlit's data
grid, without row numbers.

The columns go to Streamlit as an Arrow table, the format Streamlit sends a table in: a dict of
columns given to `st.dataframe` was made a pandas DataFrame first and then converted, ~0.7 ms of
each small table's ~0.8 ms of the server's time (measured), on every run of the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import streamlit as st


def data_table(columns: Mapping[str, Sequence[Any] | np.ndarray], **options: Any) -> None:
    """`columns` (name -> its values, every column as long) as a data grid; `options` as
    `st.dataframe`'s (`column_config`, `height`, `width`)."""
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"Every column of a table needs as many values; received {lengths}.")
    st.dataframe(pa.table(dict(columns)), hide_index=True, **options)
