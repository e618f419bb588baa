"""Tests for ui/pages (the registry in its `__init__.py`) and ui/frame/mode.py: every page module
is listed and named by its URL, no page imports another, and every listed page draws.

Each page is opened as a link to it opens it, in a fresh AppTest session.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import app_support as ui
import pytest
from app_support import APP, FIRST_RUN_TIMEOUT
from streamlit.testing.v1 import AppTest

import attnviz.ui.pages
from attnviz.ui.frame.mode import Mode
from attnviz.ui.pages import MODES, MODES_BY_NAME, find_mode

PAGES = Path(attnviz.ui.pages.__file__).parent
FRAMED = {"start", "glossary", "lesson", "class_room"}  # pages the shell draws itself (not `Mode`s;
# `class_room` serves /class: `class` is a Python keyword)
PAGE_FILES = sorted(p.stem for p in PAGES.glob("*.py") if p.stem != "__init__")
MODE_FILES = sorted(set(PAGE_FILES) - FRAMED)


def test_every_mode_module_is_in_the_registry():
    listed = {mode.draw.__module__.rsplit(".", 1)[1] for mode in MODES}
    assert listed == set(MODE_FILES)
    for stem in MODE_FILES:
        module = importlib.import_module(f"attnviz.ui.pages.{stem}")
        assert isinstance(module.MODE, Mode) and module.MODE in MODES


def test_every_page_module_is_named_by_its_url():
    assert {mode.name.replace("-", "_") for mode in MODES} == set(MODE_FILES)
    assert set(PAGE_FILES) >= FRAMED


def _imported(path: Path) -> set[str]:
    """Every module `path` imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found


@pytest.mark.parametrize("stem", PAGE_FILES)
def test_no_page_imports_another_page(stem):
    pages = {f"attnviz.ui.pages.{other}" for other in PAGE_FILES if other != stem}
    assert not _imported(PAGES / f"{stem}.py") & (pages | {"attnviz.ui.pages"})


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
