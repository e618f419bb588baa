"""bench/floor_charts.py, the first-open benchmark's floor page, and the chart spec that
bench/first_open_bench.py reads from an attnviz page for it: every chart of the page gets one on
the floor, a heatmap chart as heatmaps of the same size, a chart of curves or bars as lines of as
many points."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import plotly
import pytest

from bench.first_open_bench import CHART_SPEC
from bench.floor_charts import chart, lines, parse_spec

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"  # plotly's own, offline


def test_a_spec_names_heatmap_charts_and_charts_of_lines():
    assert parse_spec("6.16.16,1.5.7,0.3.40") == [(6, 16, 16), (1, 5, 7), (0, 3, 40)]
    assert parse_spec("") == []
    assert parse_spec("0.0.0") == [(0, 1, 1)]  # a chart whose traces hold no point: one line


def test_the_floor_draws_heatmaps_or_lines_as_the_spec_says():
    rng = np.random.default_rng(0)
    heatmaps = chart(rng, 2, 3, 4)
    assert [t.type for t in heatmaps.data] == ["heatmap", "heatmap"]
    assert np.asarray(heatmaps.data[0].z).shape == (3, 4)
    curves = chart(rng, 0, 3, 40)
    assert [t.type for t in curves.data] == ["scatter"] * 3
    assert {len(t.y) for t in curves.data} == {40}
    assert curves.layout.xaxis.showticklabels is False  # bare, as the floor's heatmaps
    again = [lines(np.random.default_rng(1), 2, 5) for _ in range(2)]  # the seed decides them
    np.testing.assert_array_equal(*([t.y for t in figure.data] for figure in again))


@pytest.mark.browser
@pytest.mark.slow
def test_the_page_s_spec_counts_every_chart_with_or_without_heatmaps(browser):
    page = browser.new_page()
    try:
        page.set_content("<div id='h' style='width:400px'></div><div id='c'></div>")
        page.add_script_tag(path=str(PLOTLY_JS))
        page.evaluate("""async () => {
          const z = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]];
          await Plotly.newPlot('h', [{type: 'heatmap', z}, {type: 'heatmap', z, xaxis: 'x2'},
                                     {type: 'scatter', x: [], y: [], xaxis: 'x2'}]);
          await Plotly.newPlot('c', [{type: 'scatter', x: [0, 1, 2, 3, 4], y: [1, 2, 3, 4, 5]},
                                     {type: 'bar', x: ['a', 'b'], y: [1, 2]},
                                     {type: 'scatter', x: [], y: []}]);
        }""")
        assert page.evaluate(CHART_SPEC) == ["2.3.4", "0.2.5"]
    finally:
        page.close()
