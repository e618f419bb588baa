"""Tests for ui/pages/glossary.py: the glossary page lists every term with its definition, from A
to Z, and the navigation reaches it."""

from __future__ import annotations

import app_support as ui

from attnviz.lessons.glossary import TERMS
from attnviz.ui.frame.explained import GLOSSARY_PAGE


def test_the_glossary_page_draws_every_term_with_its_definition_from_a_to_z():
    at = ui.new_session("matrices")
    ui.open_page(at, GLOSSARY_PAGE)
    ui.assert_ok(at)
    text = "\n".join(m.value for m in at.markdown)
    places = []
    for term in TERMS:
        line = f"**{term.name}**: {term.definition}"
        assert line in text, term.name
        places.append((text.index(line), term.name))
    listed = [name for _, name in sorted(places)]
    assert (
        listed.index("ablation")
        < listed.index("key")
        < listed.index("θ (theta)")
        < (listed.index("W_O"))
    )  # by the Latin letters: θ under T, −∞ under M
    assert listed.index("−∞ (minus infinity) and −1e9") > listed.index("mask")
    assert not at.sidebar.toggle  # a page to read: no controls


def test_the_navigation_lists_the_glossary_beside_the_start_page():
    at = ui.new_session("matrices")
    assert "Glossary" in ui.menu_links(at, "matrices")
