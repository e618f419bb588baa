"""AppTest of "Download this view" (ui/frame/takeaway.py): the button a view offers, and the page it
writes, read from the deferred download's callable (Streamlit internals, as test_app's
`test_download_view`; skipped if they change): the view's charts, its settings and inputs.
"""

from __future__ import annotations

import base64
import json
import re

import app_support as ui
import numpy as np
import pytest
import streamlit.testing.v1.app_test as app_test_module
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from attnviz.ui.frame.takeaway import LABEL

LAB_CAUSAL_WEIGHTS = [[1.0, 0.0], [0.150325, 0.849675]]  # the NumPy lab, causal


class _RecordingFiles(MediaFileManager):
    """A media file manager that remembers itself, so a test can read deferred downloads."""

    made: list[MediaFileManager] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.made.append(self)


@pytest.fixture(autouse=True)
def _recording(monkeypatch):
    monkeypatch.setattr(app_test_module, "MediaFileManager", _RecordingFiles)


def _pages(at: AppTest) -> dict[str, str]:
    """The page behind each "Download this view" button, by file name."""
    files = getattr(_RecordingFiles.made[-1], "_deferred_callables", None)
    if files is None:
        pytest.skip("Streamlit's media file manager changed: download data not readable")
    buttons = [b for b in at.get("download_button") if b.label == LABEL]
    entries = [files[b.proto.deferred_file_id] for b in buttons]
    return {entry["filename"]: entry["callable"]() for entry in entries}


def _specs(page: str) -> dict[str, dict]:
    """The page's figures by their title's first words."""
    blocks = re.findall(r'<script type="application/json" id="spec-\d+">(.*?)</script>', page, re.S)
    specs = [json.loads(block) for block in blocks]
    return {spec["layout"]["title"]["text"].split("<")[0]: spec for spec in specs}


def test_the_explorer_offers_its_open_tab_as_one_page():
    at = ui.new_session("matrices")
    at.toggle(key="causal").set_value(True).run()
    ui.assert_ok(at)
    pages = _pages(at)
    assert list(pages) == ["attnviz-explorer-heatmaps.html"]
    page = pages["attnviz-explorer-heatmaps.html"]
    specs = _specs(page)
    assert len(re.findall(r'id="spec-\d+"', page)) == len(at.get("plotly_chart"))  # each once
    weights = specs["Attention weights"]["data"][0]["z"]
    z = np.frombuffer(base64.b64decode(weights["bdata"]), dtype=weights["dtype"])
    np.testing.assert_allclose(np.nan_to_num(z.reshape(2, 2)), LAB_CAUSAL_WEIGHTS, atol=1e-6)
    assert "<tr><th>causal</th><td>True</td></tr>" in page
    assert "<tr><th>view</th><td>Heatmaps</td></tr>" in page
    assert "<h3>Q (queries)</h3><pre>,0,1,2\n0,1.0,0.0,0.0\n1,0.0,1.0,0.0\n</pre>" in page
    ui.open_view(at, "Row statistics")  # no chart: no button
    assert [b for b in at.get("download_button") if b.label == LABEL] == []


def _nested() -> None:
    import numpy as np
    import streamlit as st

    from attnviz.drawing.heatmap import heatmap
    from attnviz.ui.frame.charts import chart
    from attnviz.ui.frame.takeaway import view_download

    with view_download("outer <b>view</b>", "outer", lambda: {"settings": {"who": "<i>me</i>"}}):
        chart(heatmap(np.eye(2), kind="weights", title="First"), "first")
        with view_download("inner", "inner"):
            chart(heatmap(np.eye(3), kind="weights", title="Second"), "second")
    with view_download("no charts", "none"):
        st.write("text only")


def test_a_view_inside_a_view_offers_one_page_with_all_charts():
    at = AppTest.from_function(_nested, default_timeout=ui.FIRST_RUN_TIMEOUT).run()
    ui.assert_ok(at)
    pages = _pages(at)
    assert list(pages) == ["attnviz-outer-b-view-b.html"]  # the outermost view's, alone
    page = pages["attnviz-outer-b-view-b.html"]
    assert list(_specs(page)) == ["First", "Second"]
    assert "<title>outer &lt;b&gt;view&lt;/b&gt;</title>" in page
    assert "<td>&lt;i&gt;me&lt;/i&gt;</td>" in page
    assert 'data-name="attnviz-first"' in page and 'data-name="attnviz-second"' in page


@pytest.mark.slow  # loads the shipped language model
def test_the_language_models_heads_tab_is_one_page_with_its_model_view():
    at = ui.new_session("language-model")
    ui.assert_ok(at)
    pages = _pages(at)  # the tab's button only: the model view panel inside offers none
    assert list(pages) == ["attnviz-language-model-every-head.html"]
    page = pages["attnviz-language-model-every-head.html"]
    specs = re.findall(r'<script type="application/json" id="spec-\d+">', page)
    assert len(specs) == len(at.get("plotly_chart"))  # the bars, the grid, the head map, ...
    assert 'data-name="attnviz-model-view-causal"' in page  # the grid of every head
    assert "<tr><th>task</th><td>Induction: random runs, repeated</td></tr>" in page
    assert "<tr><th>model heads</th><td>4</td></tr>" in page


@pytest.mark.slow  # builds, saves and inspects a Keras model
def test_your_model_page_is_one_page_with_every_call(tmp_path, monkeypatch):
    from user_models import mha_keras_file

    from attnviz.ui.frame.server_config import MODEL_ENV

    monkeypatch.setenv(MODEL_ENV, str(mha_keras_file(tmp_path / "tiny.keras")))
    at = ui.new_session("model", model_text="1 2 3 4")
    ui.assert_ok(at)
    pages = _pages(at)
    assert list(pages) == ["attnviz-your-model.html"]  # the page's, not the panel's inside
    page = pages["attnviz-your-model.html"]
    specs = re.findall(r'<script type="application/json" id="spec-\d+">', page)
    assert len(specs) == len(at.get("plotly_chart"))
    assert 'data-name="attnviz-model-view-self"' in page
    assert re.search(r"<tr><th>call [^<]+</th><td>keras\.[^<]*MultiHeadAttention; self ", page)
    assert "<h3>text</h3><pre>1 2 3 4</pre>" in page
