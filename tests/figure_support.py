"""A helper for the figure tests: a plain figure (`drawing.plain_figure`) against the figure
plotly builds of the same parts with every property checked."""

from __future__ import annotations

import json
from typing import Any


def plain_and_checked(figure: Any) -> tuple[dict, dict]:
    """(the JSON Streamlit sends of `figure`, the JSON of plotly's checked figure of the same
    dict). Building the checked figure raises on any property plotly does not accept."""
    import plotly.graph_objects as go
    import plotly.io

    from attnviz.drawing.plain_figure import PlainFigure

    assert isinstance(figure, PlainFigure) and "_plain_parts" in vars(figure), type(figure)
    plain = figure.to_dict()
    checked = go.Figure(plain).to_dict()
    return tuple(json.loads(plotly.io.to_json(f, validate=False)) for f in (plain, checked))
