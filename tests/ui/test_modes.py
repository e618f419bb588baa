"""Tests for ui/modes and ui/mode.py: every mode module is listed, and every listed mode draws.

Each mode is opened as a link to it opens it, in a fresh AppTest session.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import app_support as ui
import pytest
from app_support import APP, FIRST_RUN_TIMEOUT
from streamlit.testing.v1 import AppTest

from attnviz.ui.mode import Mode
from attnviz.ui.modes import MODES, MODES_BY_NAME, find_mode

MODE_FILES = sorted(
    p.stem for p in (Path(ui.APP).parent / "modes").glob("*.py") if p.stem != "__init__"
)


def test_every_mode_module_is_in_the_registry():
    listed = {mode.draw.__module__.rsplit(".", 1)[1] for mode in MODES}
    assert listed == set(MODE_FILES)
    for stem in MODE_FILES:
        module = importlib.import_module(f"attnviz.ui.modes.{stem}")
        assert isinstance(module.MODE, Mode) and module.MODE in MODES


def test_modes_have_unique_names_labels_and_paths():
    assert len({m.name for m in MODES}) == len({m.label for m in MODES}) == len(MODES)
    assert all(re.fullmatch(r"[a-z][a-z-]*[a-z]", m.name) for m in MODES)  # URL paths
    assert MODES[0].name == "matrices"  # the page at `/`, as before pages had paths


@pytest.fixture(scope="module")
def session() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run(timeout=FIRST_RUN_TIMEOUT)
    ui.assert_ok(at)
    return at


@pytest.mark.parametrize("name", [ui.quick_unless_loading(m.name) for m in MODES])
def test_every_mode_draws_its_page(session, name):
    ui.open_mode(session, name)
    ui.assert_ok(session)
    assert ui.current_mode(session) == name
    assert [t.value for t in session.title] == ["attnviz"]
    assert "mode" not in session.query_params  # the old field is gone once the page is open


@pytest.mark.parametrize(
    ("link", "name"),
    [
        ("Matrices", "matrices"),
        ("Cross (two sentences)", "cross"),  # the labels old links carry
        ("Multi-head", "multihead"),
        ("decoder", "decoder"),
        ("Bogus", None),
    ],
)
def test_old_mode_links_find_their_page(link, name):
    found = find_mode(link)
    assert (found.name if found else None) == name
    if name:
        assert MODES_BY_NAME[name] is found


def test_an_old_link_keeps_its_other_fields():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"mode": "Sentences", "causal": "true", "sentences": "a b\nc"})
    at.run(timeout=FIRST_RUN_TIMEOUT)
    ui.assert_ok(at)
    assert ui.current_mode(at) == "sentences"
    assert at.toggle(key="causal").value is True
    assert at.text_area(key="sentences").value == "a b\nc"
    assert at.query_params.get("causal") == "true" and "mode" not in at.query_params
