"""Tests for drawing/standalone: the page of a view (plotly's script embedded once, nothing
fetched, the figures exactly as given, every user text escaped, small enough), the figures'
`to_html` / `to_svg`, and the SVG drawn by plotly.js in headless Chromium (slow)."""

from __future__ import annotations

import base64
import gzip
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from plotly.offline import get_plotlyjs

import attnviz
from attnviz.drawing.heatmap import heatmap as draw_heatmap
from attnviz.drawing.model_view import model_view
from attnviz.drawing.standalone import (
    BROWSER_ENV,
    Chart,
    Figure,
    figure_svg,
    figure_title,
    standalone_html,
)
from deploy.chromium import browser_missing

RNG = np.random.default_rng(39)
HOSTILE = '</script><script>alert("x")</script><img src=x onerror=alert(1)>&amp;'
MIB = 2**20


def _weights(*shape: int) -> np.ndarray:
    """Random softmax rows of `shape` (…, S), float32 as a model's."""
    w = RNG.random(shape).astype(np.float32)
    return w / w.sum(-1, keepdims=True)


def _specs(page: str) -> list[dict]:
    """The figures a page draws, read back from its JSON blocks."""
    blocks = re.findall(r'<script type="application/json" id="spec-\d+">(.*?)</script>', page, re.S)
    return [json.loads(block) for block in blocks]


def _outside_plotly(page: str) -> str:
    """The page without its packed plotly.js."""
    return re.sub(r'(<script type="application/gzip;base64" id="plotly-gz">).*?(</script>)',
                  r"\1\2", page, flags=re.S)  # fmt: skip


@pytest.fixture(scope="module")
def heatmap():
    return draw_heatmap(
        np.array([[0.25, 0.75], [0.5, 0.5]]), row_labels=["the", HOSTILE], col_labels=["a", "b"],
        kind="weights", title="Attention weights",
    )  # fmt: skip


@pytest.fixture(scope="module")
def page(heatmap):
    grid = model_view(_weights(2, 3, 4, 4), list("abcd"), list("abcd"), title="grid")
    return standalone_html(
        [Chart(heatmap, "weights"), grid], f"My view {HOSTILE}",
        settings={"score": "dot", "causal": True, "label": HOSTILE},
        inputs={"Q (queries)": f",0,1\nthe,1.5,2\n{HOSTILE},0,1"}, notes=[f"Note {HOSTILE}"],
    )  # fmt: skip


def test_the_page_embeds_plotly_once_and_fetches_nothing(page):
    packed = re.findall(r'id="plotly-gz">\s*([A-Za-z0-9+/=]+)\s*</script>', page)
    assert len(packed) == 1  # the script, once, for every chart
    assert gzip.decompress(base64.b64decode(packed[0])).decode() == get_plotlyjs()
    rest = _outside_plotly(page)
    assert not re.findall(r"<[a-z]+\s[^>]*(src|href)=", rest)  # no script, style, link to load
    assert "http://" not in rest and "https://" not in rest and "cdn." not in rest


def test_the_page_draws_the_figures_exactly_as_given(page, heatmap):
    specs = _specs(page)
    assert len(specs) == 2 and len(re.findall(r'<div class="chart" id="chart-\d+"', page)) == 2
    assert specs[0] == json.loads(pio.to_json(heatmap, validate=False))  # every number, label
    assert 'data-name="attnviz-weights"' in page and 'data-name="attnviz-chart-1"' in page
    assert specs[1]["layout"]["title"]["text"].startswith("grid")


def test_the_page_holds_its_settings_inputs_and_version(page):
    assert f"attnviz {attnviz.__version__}" in page
    assert "<tr><th>score</th><td>dot</td></tr>" in page
    assert "<tr><th>causal</th><td>True</td></tr>" in page
    assert "<h3>Q (queries)</h3><pre>,0,1\nthe,1.5,2\n" in page


def test_user_text_never_becomes_html(page):
    assert "<img" not in page and "<script>alert" not in page
    escaped = "&lt;/script&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x "
    assert page.count(escaped) == 5  # the title twice, the note, a setting, an input
    # the page's own scripts only: the packed plotly, one JSON block per chart, the drawing
    assert len(re.findall(r"<script\b", page)) == 2 + 2
    assert page.count("</script>") == 2 + 2  # none in the JSON: its "<" are \u003c


def test_a_12_by_12_model_view_page_is_under_5_mb():
    tokens = [f"token{i}" for i in range(128)]
    grid = model_view(_weights(12, 12, 128, 128), tokens, tokens)
    page = standalone_html([grid], "model view", inputs={"tokens": " ".join(tokens)})
    assert len(page.encode()) < 5 * MIB


def test_bad_charts_and_their_message():
    with pytest.raises(ValueError, match=r"plotly figures.*Received ndarray at position 0"):
        standalone_html([np.zeros((2, 2))], "x")


def test_attnviz_figures_write_their_page(tmp_path, heatmap):
    grid = model_view(_weights(1, 2, 3, 3))
    assert isinstance(heatmap, Figure) and isinstance(grid, Figure)
    path = heatmap.to_html(tmp_path / "weights.html", settings={"score": "dot"})
    page = path.read_text(encoding="utf-8")
    assert _specs(page) == [json.loads(pio.to_json(heatmap, validate=False))]
    assert "<title>Attention weights</title>" in page and "<td>dot</td>" in page
    assert 'data-name="attnviz-weights"' in page
    plain = grid.to_html(include_plotlyjs=False, full_html=False)  # plotly's own, unchanged
    assert plain.startswith("<div") and "Plotly.newPlot" in plain and "plotly-gz" not in plain


def test_figure_title_is_plain_text():
    fig = go.Figure(layout=dict(title=dict(text="<b>Weights</b><br><sup>a &lt;pad&gt;</sup>")))
    assert figure_title(fig) == "Weights a <pad>"
    assert figure_title(go.Figure()) == "attnviz chart"


def test_svg_without_a_browser_says_how_to_get_one(monkeypatch, heatmap):
    monkeypatch.setenv(BROWSER_ENV, "/nonexistent/chromium")
    with pytest.raises(RuntimeError, match=r"needs a Chromium-family browser.*SVG button"):
        figure_svg(heatmap)


@pytest.mark.slow
@pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))
def test_to_svg_is_what_plotly_draws(tmp_path, heatmap):
    path = heatmap.to_svg(tmp_path / "weights.svg")  # one browser launch: a few seconds
    root = ET.fromstring(path.read_text(encoding="utf-8"))  # well-formed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert (root.get("width"), root.get("height")) == ("700", str(heatmap.layout.height))
    text = " ".join(root.itertext())
    assert "Attention weights" in text and "the" in text  # the title and a label, as text
    assert 'alert("x")' in text  # the hostile label too: text, not markup
    assert not root.findall(".//{http://www.w3.org/2000/svg}script")
    assert root.findall(".//{http://www.w3.org/2000/svg}image")  # the cells: one image


@pytest.mark.slow
@pytest.mark.browser
def test_a_saved_page_draws_offline_with_hover_and_svg(browser, tmp_path, heatmap):
    """The page opened from disk in Chromium with the network off (every request but the
    file's aborted): every chart drawn, a hovered cell shows its weight, and each toolbar saves
    PNG and SVG."""
    grid = model_view(_weights(2, 3, 4, 4), list("abcd"), list("abcd"), title="grid")
    curve = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]), layout=dict(title="bars"))
    path = tmp_path / "view.html"
    path.write_text(standalone_html([Chart(heatmap, "weights"), grid, curve], "offline"))
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    asked = []
    context.route(lambda url: not url.startswith("file:"), lambda route: route.abort())
    context.on("request", lambda request: asked.append(request.url))
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_function(
            "() => document.querySelectorAll('div.chart').length === 3 && Array.from("
            "document.querySelectorAll('div.chart')).every((d) => d._fullData && "
            "d._fullData.length && d.querySelector('.main-svg'))"
            " && document.getElementById('status').textContent === ''",
            timeout=60_000,
        )
        assert page.locator("div.chart .heatmaplayer image").count() >= 2  # both heatmaps
        box = page.locator("#chart-0 .nsewdrag").first.bounding_box()
        page.mouse.move(box["x"] + box["width"] * 0.75, box["y"] + box["height"] * 0.25)
        hover = page.locator("#chart-0 .hoverlayer .hovertext")
        hover.first.wait_for(timeout=10_000)
        assert "0.75" in hover.first.text_content()  # row "the", key "b": its weight
        svg_buttons = page.locator('.modebar-btn[data-title="Download plot as an SVG"]')
        assert svg_buttons.count() == 3
        assert page.locator('.modebar-btn[data-title="Download plot as a PNG"]').count() == 3
        page.locator("#chart-0").hover()
        with page.expect_download(timeout=30_000) as saved:
            page.locator('#chart-0 .modebar-btn[data-title="Download plot as an SVG"]').click()
        assert saved.value.suggested_filename == "attnviz-weights.svg"
        svg = ET.fromstring(Path(saved.value.path()).read_text(encoding="utf-8"))
        assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    finally:
        context.close()
    assert [url for url in asked if not url.startswith("file:")] == []
