"""Tests for ui/pages/class_room.py: the site serves /class (the students' page), the navigation
lists it, a link with `?code=` fills the join form in, and a lesson page in the presenter view
starts a class (the code, its QR code and the link on the projector; the teacher's key in the
teacher's URL only). The class itself: tests/ui/classroom/test_class.py."""

from __future__ import annotations

import app_support as ui
import pytest

from attnviz.classroom import Classroom, MemoryStore
from attnviz.ui.classroom import session
from attnviz.ui.pages.class_room import PAGE


@pytest.fixture
def room():
    classroom = Classroom(MemoryStore())
    session.use_room(classroom)
    yield classroom
    session.use_room(None)


def test_the_class_page_is_in_the_navigation_and_takes_the_code_from_its_link(room):
    started = room.start(2)
    at = ui.new_session("matrices")
    assert "Class" in ui.menu_links(at, "matrices")
    ui.follow_link(at, PAGE, code=started.code.lower())  # the QR code's link
    ui.assert_ok(at)
    assert at.text_input[0].value == started.code.lower()
    [b for b in at.button if b.label == "Join the class"][0].click().run()
    ui.assert_ok(at)
    assert f"Class {started.code} · lesson 2" in "\n".join(s.value for s in at.subheader)
    assert len(room.members(started.code)) == 1
    ui.open_page(at, "matrices")  # off exploring: one tap back to the class
    back = [link for link in at.get("page_link") if link.proto.label.startswith("Back to class")]
    assert len(back) == 1


def test_a_lesson_in_the_presenter_view_starts_a_class(room):
    at = ui.new_session("matrices", present="true")
    ui.open_page(at, "lesson-1")
    ui.assert_ok(at)
    [b for b in at.button if b.label == "Start a class"][0].click().run()
    ui.assert_ok(at)
    code, secret = at.session_state[session.TEACHING.key]
    assert room.is_teacher(code, secret)
    assert at.query_params["class"] == code and at.query_params["key"] == secret
    assert len(at.get("image")) == 1  # the QR code
    assert any(f"`{code}`" in m.value for m in at.markdown)
