"""Tests for drawing/inspection_page: `attnviz.inspect`'s result writes its views,
`ViewedInspection.to_html` (every model view of the run on one standalone page, each call
described) and `.to_svg` (one model view, drawn by plotly.js in headless Chromium: slow)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import keras
import numpy as np
import plotly.io as pio
import pytest

from attnviz.drawing.inspection_page import ViewedInspection, inspect
from attnviz.drawing.model_view import inspection_view
from deploy.chromium import browser_missing


@pytest.fixture(scope="module")
def run():
    """A padded encoder (self-attention) whose output also attends over a second input
    (cross-attention of another shape), inspected."""
    keras.utils.set_random_seed(3)
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    memory = keras.Input((3, 8), name="memory")
    embedded = keras.layers.Embedding(20, 8, mask_zero=True, name="embed")(tokens)
    attended = keras.layers.MultiHeadAttention(2, 4, name="self_mha")(embedded, embedded)
    crossed = keras.layers.MultiHeadAttention(3, 4, name="cross_mha")(attended, memory)
    model = keras.Model([tokens, memory], crossed, name="encoder")
    inputs = [np.array([[3, 7, 9, 0]], dtype="int32"), np.ones((1, 3, 8), dtype="float32")]
    return inspect(model, inputs)


def test_attnvizs_inspect_is_the_capture_whose_result_writes_its_views(run):
    import attnviz
    from attnviz.heads import Inspection

    assert attnviz.inspect is inspect and isinstance(run, ViewedInspection)
    assert not hasattr(Inspection, "to_html")  # heads captures; drawing draws
    assert run.keys() == ("self_mha", "cross_mha")


def _specs(page: str) -> list[dict]:
    blocks = re.findall(r'<script type="application/json" id="spec-\d+">(.*?)</script>', page, re.S)
    return [json.loads(block) for block in blocks]


def test_to_html_draws_every_kind_of_call_and_describes_each(run, tmp_path):
    labels = ["the", "<b>cat</b>", "sat", "<pad>"]
    path = run.to_html(tmp_path / "run.html", row_labels=labels, col_labels=labels)
    page = path.read_text(encoding="utf-8")
    self_view = inspection_view(run, keys=["self_mha"], title="self attention, 4 × 4",
                                row_labels=labels, col_labels=labels)  # fmt: skip
    cross_view = inspection_view(run, keys=["cross_mha"], title="cross attention, 4 × 3",
                                 row_labels=labels)  # the keys: 3, not the 4 labels  # fmt: skip
    assert _specs(page) == [json.loads(pio.to_json(f, validate=False))
                            for f in (self_view, cross_view)]  # fmt: skip
    assert re.search(r"<th>call self_mha</th><td>keras\.[^<]*MultiHeadAttention; self attention; "
                     r"2 heads, 4 queries × 4 keys; masked; ", page)  # fmt: skip
    assert "<th>call cross_mha</th>" in page and "3 heads, 4 queries × 3 keys" in page
    assert "<pre>the &lt;b&gt;cat&lt;/b&gt; sat &lt;pad&gt;</pre>" in page  # the tokens, as text
    assert "<b>cat" not in page.replace("\\u003cb\\u003ecat", "")


@pytest.mark.slow
@pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))
def test_to_svg_draws_one_model_view(run, tmp_path):
    path = run.to_svg(tmp_path / "run.svg", kind="cross", title="the cross calls")
    root = ET.fromstring(path.read_text(encoding="utf-8"))
    text = " ".join(root.itertext())
    assert "the cross calls" in text and "cross_mha" in text and "self_mha" not in text
