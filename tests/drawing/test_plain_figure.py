"""Tests for attnviz/drawing/plain_figure.py: plain and frozen figures draw what plotly draws."""

import json

import numpy as np
import pytest

from attnviz.drawing.heatmap import heatmap, heatmap_parts
from attnviz.drawing.plain_figure import PlainFigure, frozen, with_shapes

XSS = "<img src=x onerror=alert(1)>"


def test_a_frozen_figure_draws_the_same_and_builds_its_plain_form_once():
    import plotly.graph_objects as go
    import plotly.io

    figure = heatmap(np.eye(3), kind="weights", title="eye")
    kept = frozen(figure)
    assert isinstance(kept, go.Figure)
    drawn = [json.loads(plotly.io.to_json(f, validate=False)) for f in (kept, figure)]
    assert drawn[0] == drawn[1]
    assert kept.to_dict() is kept.to_dict()  # built once, not copied per draw
    assert kept.layout.width == figure.layout.width


def _heatmap_cases() -> list[dict]:
    """Heatmaps of every kind: exact and pooled, with and without blocked cells, thumbnails."""
    rng = np.random.default_rng(3)
    cases = []
    for n in (3, 16, 300):
        signed = rng.normal(size=(n, n))
        causal = np.triu(np.ones((n, n), bool), 1)
        weights = np.abs(signed) / np.abs(signed).sum(axis=1, keepdims=True)
        for kind, matrix in (("signed", signed), ("weights", weights), ("values", signed)):
            for blocked in (None, causal):
                for thumbnail in (False, True):
                    cases.append(dict(matrix=matrix, kind=kind, blocked=blocked,
                                      thumbnail=thumbnail, title=f"{XSS} {n}"))  # fmt: skip
        cases.append(dict(matrix=signed > 0, kind="mask", row_labels=[XSS] * n))
    return cases


@pytest.mark.parametrize("case", _heatmap_cases(), ids=lambda case: f"{case['kind']}")
def test_a_plain_figure_draws_exactly_what_plotlys_figure_draws(case):
    # what Streamlit sends (the plain form as JSON) equals what plotly's own figure of the same
    # traces and layout gives, arrays as typed arrays and the default template included
    import plotly.graph_objects as go
    import plotly.io

    traces, layout = heatmap_parts(**case)
    plotlys = go.Figure(data=traces, layout=layout, _validate=False)
    plain = heatmap(**case)
    assert isinstance(plain, go.Figure)
    drawn = [json.loads(plotly.io.to_json(f.to_dict(), validate=False)) for f in (plain, plotlys)]
    assert drawn[0] == drawn[1]
    assert "template" in drawn[0]["layout"]


def test_a_plain_figure_writes_every_kind_of_array_as_plotly_does():
    # the typed arrays are written here, not by plotly: every dtype, order and place must give
    # plotly's JSON (64-bit integers narrowed, bools and strings as lists, nothing under "range")
    import plotly.graph_objects as go
    import plotly.io

    arrays = {
        "z": np.arange(12, dtype=np.float32).reshape(3, 4),
        "x": np.linspace(0, 1, 4),
        "y": np.array([1, 2, 3]),  # int64
        "text": np.array(["<b>a</b>", "b", "c"]),
        "customdata": np.array([True, False, True]),
        "ids": np.arange(6, dtype=np.uint64)[::2],  # strided
        "meta": np.arange(4, dtype=">f4"),  # big-endian
        "hovertext": np.zeros((0,)),
        "zmax": np.float32(2.5),  # a numpy scalar, not an array
        "marker": {"color": np.arange(3, dtype=np.int16), "size": [np.ones(3)]},
    }
    traces = [{"type": "heatmap", **arrays}]
    layout = {"xaxis": {"range": np.array([0.0, 1.0])}, "title": {"text": "arrays"}}
    plain = PlainFigure.of(traces, layout)
    plotlys = go.Figure(data=traces, layout=layout, _validate=False)
    drawn = [json.loads(plotly.io.to_json(f.to_dict(), validate=False)) for f in (plain, plotlys)]
    assert drawn[0] == drawn[1]
    assert drawn[0]["data"][0]["z"]["dtype"] == "f4"


def test_a_plain_figure_becomes_a_figure_when_used_as_one():
    import copy
    import pickle

    figure = heatmap(np.eye(3), kind="weights", title="eye")
    plain = figure.to_dict()
    plain["layout"]["height"] = 1  # changing the plain form leaves the figure as it was
    plain["layout"]["xaxis"]["range"][0] = 99
    assert figure.to_dict()["layout"]["height"] != 1
    assert figure.to_dict()["layout"]["xaxis"]["range"][0] == -0.5
    for same in (copy.deepcopy(figure), pickle.loads(pickle.dumps(figure))):
        assert same.to_dict() == figure.to_dict()
    figure.update_layout(height=321)  # used as a figure: plotly's figure from then on
    assert figure.layout.height == 321 and figure.to_dict()["layout"]["height"] == 321
    assert figure.data[0].type == "heatmap"


def test_threads_using_one_plain_figure_all_get_the_built_figure():
    # a cached figure is shared by every session: the first uses build it once, the others wait
    from concurrent.futures import ThreadPoolExecutor

    figure = heatmap(np.eye(4), kind="weights", title="shared")
    with ThreadPoolExecutor(8) as pool:
        heights = list(pool.map(lambda _: figure.layout.height, range(64)))
    assert heights == [figure.layout.height] * 64
    assert [trace.type for trace in figure.data] == ["heatmap", "scatter"]


def test_shapes_added_to_a_plain_figure_draw_what_plotly_draws_and_leave_it_unchanged():
    import plotly.graph_objects as go
    import plotly.io

    figure = heatmap(np.eye(3), kind="weights", title="eye")
    before = json.loads(plotly.io.to_json(figure, validate=False))
    row = dict(type="rect", x0=0, x1=1, xref="x domain", y0=0.5, y1=1.5, yref="y")
    cell = dict(type="rect", x0=1.5, x1=2.5, xref="x", y0=0.5, y1=1.5, yref="y",
                line=dict(color="#e41a1c", width=3), fillcolor="rgba(0,0,0,0)")  # fmt: skip
    marked = with_shapes(with_shapes(figure, row), cell)
    assert "_plain_parts" in marked.__dict__  # still plain: no validated copy was built
    checked = go.Figure(figure)  # plotly's own way, every property validated
    checked.add_shape(**row)
    checked.add_shape(**cell)
    drawn = [json.loads(plotly.io.to_json(f, validate=False)) for f in (marked, checked)]
    assert drawn[0] == drawn[1]
    assert json.loads(plotly.io.to_json(figure, validate=False)) == before
    assert with_shapes(checked, row).layout.shapes[-1].xref == "x domain"  # a built figure too


def test_a_layout_s_own_template_is_kept_as_plotly_keeps_it():
    import plotly.graph_objects as go

    own = {"layout": {"font": {"size": 30}}}
    traces, layout = [{"type": "bar", "y": [1, 2]}], {"template": own, "height": 200}
    plain = PlainFigure.of(traces, layout).to_dict()
    assert plain["layout"]["template"] == own
    assert plain == go.Figure(data=traces, layout=layout).to_dict()
    assert "template" in PlainFigure.of(traces, {"height": 200}).to_dict()["layout"]  # default


def test_every_plain_form_shares_one_default_template_that_refuses_change():
    # the template was copied into each plain form: a third of a heatmap's to_dict, six times a run
    import copy
    import pickle

    import plotly.graph_objects as go

    first, second = (heatmap(np.eye(n), kind="weights", title="eye").to_dict() for n in (2, 3))
    template = first["layout"]["template"]
    assert second["layout"]["template"] is template
    assert template == go.Figure().to_dict()["layout"]["template"]  # plotly's own, equal
    colorway = template["layout"]["colorway"]
    changes = (
        lambda: template.update(layout={}), lambda: template.pop("data"),
        lambda: template["layout"].__setitem__("font", {}), lambda: colorway.append("#fff"),
        lambda: colorway.__setitem__(0, "#fff"), lambda: colorway.sort(),
    )  # fmt: skip
    for change in changes:
        with pytest.raises(TypeError, match="shared by every figure"):
            change()
    assert template == go.Figure().to_dict()["layout"]["template"]  # unchanged
    for changeable in (copy.deepcopy(template), copy.copy(template)):
        assert changeable == template and type(changeable) is dict
        changeable["layout"] = {}  # a copy can be changed
    deep = copy.deepcopy(template)
    deep["layout"]["colorway"].append("#fff")
    assert type(deep["layout"]["colorway"]) is list and colorway[-1] != "#fff"
    assert pickle.loads(pickle.dumps(template)) == template
