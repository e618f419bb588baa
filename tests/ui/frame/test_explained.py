"""Tests for ui/frame/explained.py: a lesson's answer is one click away, its words are listed with
their definitions and a link to the glossary, and its words say where the controls are in the
view shown (the sidebar, or the settings in the page while presenting)."""

from __future__ import annotations

import app_support as ui

from attnviz.lessons import LESSONS
from attnviz.lessons.glossary import terms_in
from attnviz.ui.frame.explained import ANSWER_LABEL, GLOSSARY_PAGE, WORDS_LABEL


def _expander(at, label: str):
    (found,) = [e for e in at.main.expander if e.label == label]
    return found


def test_a_lesson_shows_its_answer_and_its_words_one_click_away():
    at = ui.new_session("matrices")
    ui.open_page(at, "lesson-4")
    ui.assert_ok(at)
    lesson = LESSONS[3]
    answer, words = _expander(at, ANSWER_LABEL), _expander(at, WORDS_LABEL)
    assert not answer.proto.expanded and not words.proto.expanded  # try first
    assert [m.value for m in answer.markdown] == [lesson.why]
    listed = words.markdown[0].value
    for name in ("mask", "causal", "padding", "softmax", "−∞ (minus infinity) and −1e9"):
        assert f"**{name}**:" in listed, name
    terms = terms_in("\n".join((lesson.text, lesson.try_this, lesson.why)))
    assert listed.count("**") == 2 * len(terms)  # its own words, no others
    assert "**RoPE**" not in listed
    (link,) = words.get("page_link")
    assert link.proto.page == GLOSSARY_PAGE


def test_a_lesson_says_where_the_controls_are_in_the_view_shown():
    # presenting folds the sidebar away: lesson 11 says where θ is, in the page's words
    at = ui.new_session("matrices")
    ui.open_page(at, "lesson-11")
    ui.assert_ok(at)

    def try_this() -> str:
        return next(i.value for i in at.info if i.value.startswith("**Try this.**"))

    assert "θ down in the sidebar:" in try_this()
    at.toggle(key="present").set_value(True).run()
    ui.assert_ok(at)
    assert "θ down in the settings above the charts:" in try_this()
    assert "sidebar" not in try_this() and "{" not in try_this()


def test_a_page_says_where_the_controls_are_in_the_view_shown():
    # the Positions tab with no scheme points at the Positions controls: the sidebar, or the
    # settings above the charts while presenting (the same words as the lessons')
    from attnviz.ui.frame.presenter import WHERE

    for present, where in WHERE.items():
        at = ui.new_session("matrices", present=str(present).lower())
        ui.open_view(at, "Positions")
        (note,) = [i.value for i in at.info if "Choose RoPE or ALiBi" in i.value]
        assert f"under **Positions** {where} to see" in note
    assert WHERE == {False: "in the sidebar", True: "in the settings above the charts"}
