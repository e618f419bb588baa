"""Tests for attnviz/__init__.py: the public names, imported lazily (no TensorFlow on import)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def test_import_attnviz_and_drawing_need_no_tensorflow():
    # The top-level names are imported on first use: a notebook can draw without TensorFlow.
    probe = (
        "import sys\n"
        "import attnviz\n"
        "from attnviz.drawing import export, lineview\n"
        "from attnviz.drawing.heatmap import heatmap\n"
        "from attnviz.inputs import parsing, presets, probe, text\n"
        "from attnviz.core import checks, kv_cache, limits, mask_spec, masks, positions, stats\n"
        "from attnviz.core import tiled\n"
        "heatmap([[0.25, 0.75], [1.0, 0.0]], kind='weights')\n"
        "print(sorted(m for m in ('tensorflow', 'keras', 'streamlit') if m in sys.modules))\n"
        "print('compute_attention' in attnviz.__all__)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[]", "True"]


def test_a_lazy_name_is_the_module_attribute_it_stands_for():
    import attnviz
    from attnviz.core.attention import compute_attention

    assert attnviz.compute_attention is compute_attention  # imported on first use
    result = attnviz.compute_attention([[1.0]], [[1.0]], [[2.0]])
    assert result.output.tolist() == [[2.0]]


def test_every_public_name_resolves_and_unknown_names_fail():
    import attnviz

    for name in attnviz.__all__:
        assert getattr(attnviz, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        attnviz.nope  # noqa: B018
