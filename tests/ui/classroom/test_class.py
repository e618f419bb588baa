"""A class through its pages, in one process (AppTest, the in-process store): a teacher on a
lesson page in the presenter view and three students on /class. They join; the teacher moves
the class and asks a question; the students answer (one of them twice); the projector counts
them and draws how the room answered; Reveal reaches the students; a student cannot lead.

The exercises here are `classroom_support`'s (their checks need no TensorFlow); one test asks a
real lesson-1 exercise (slow: it runs attnviz's maths)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from app_support import assert_ok, decode
from classroom_support import EXERCISES, find
from streamlit.testing.v1 import AppTest

from attnviz.classroom import Classroom, MemoryStore
from attnviz.classroom.room import NOT_TEACHER
from attnviz.lessons import LESSONS
from attnviz.ui.classroom import session

TIMEOUT = 30  # seconds an AppTest run may take (the first imports the pages' modules)


def _teacher_page(lesson: int) -> None:
    from attnviz.lessons import LESSONS
    from attnviz.ui.classroom.teacher import class_panel

    class_panel(LESSONS[lesson - 1])


def _class_page() -> None:
    from attnviz.ui.classroom.student import draw_class_page

    draw_class_page(None)


@pytest.fixture
def room():
    """The pages' classroom: an in-process store, the test exercises."""
    classroom = Classroom(
        MemoryStore(), find=find,
        listed=lambda n: tuple(e for e in EXERCISES.values() if e.lesson == n),
    )  # fmt: skip
    session.use_room(classroom)
    yield classroom
    session.use_room(None)


def _teacher(lesson: int = 3) -> AppTest:
    at = AppTest.from_function(_teacher_page, args=(lesson,), default_timeout=TIMEOUT)
    at.query_params["present"] = "true"
    at.run()
    assert_ok(at)
    return at


def _student(code: str, nickname: str = "", ok: bool = True) -> AppTest:
    at = AppTest.from_function(_class_page, default_timeout=TIMEOUT)
    at.run()
    at.text_input[0].input(code)
    at.text_input[1].input(nickname)
    _click(at, "Join the class", ok)
    return at


def _click(at: AppTest, label: str, ok: bool = True) -> None:
    found = [b for b in at.button if b.label == label]
    assert len(found) == 1, (label, [b.label for b in at.button])
    found[0].click().run()
    if ok:
        assert_ok(at)


def _texts(at: AppTest) -> str:
    parts = [*at.markdown, *at.caption, *at.subheader, *at.success, *at.warning, *at.info]
    return "\n".join(str(p.value) for p in parts) + "\n" + "\n".join(t.value for t in at.text)


def _bars(at: AppTest) -> dict[str, int]:
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    return dict(
        zip(spec["data"][0]["x"], decode(spec["data"][0]["y"]).astype(int).tolist(), strict=True)
    )


def _start(teacher: AppTest) -> str:
    _click(teacher, "Start a class")
    code, secret = teacher.session_state[session.TEACHING.key]
    assert teacher.query_params[session.CLASS_FIELD] == code  # the teacher's own link
    assert teacher.query_params[session.KEY_FIELD] == secret
    assert len(teacher.get("image")) == 1  # the QR code
    assert f"`{code}`" in _texts(teacher) and f"/class?code={code}" in _texts(teacher)
    return code


@pytest.mark.slow  # about 40 runs of four pages, and the checks' first run imports Keras
def test_a_teacher_and_three_students(room):
    teacher = _teacher()
    code = _start(teacher)
    students = [_student(code.lower(), name) for name in ("Ada", "", "Cy")]
    for student in students:
        assert f"Class {code} · lesson 3" in _texts(student)
        assert "Waiting for the teacher's question" in _texts(student)
    assert "You are in as Ada." in _texts(students[0])
    teacher.run()
    assert "3 joined" in _texts(teacher)
    # the teacher moves the class to exercise 3b: every page shows it at its next poll
    teacher.selectbox(key="class_target").set_value("3b").run()
    _click(teacher, "Move the class here")
    for student in students:
        student.run()
        assert "The teacher is at exercise 3b." in _texts(student)
    # ... and asks 3a: the students see its question and answer it
    teacher.selectbox(key="class_target").set_value("3a").run()
    _click(teacher, "Ask this question")
    picks = ("key 1", "key 0", "key 1")
    for student, pick in zip(students, picks, strict=True):
        student.run()
        assert "Question 1: Test 3a" in _texts(student)
        student.radio[0].set_value(pick).run()
        _click(student, "Send my answer")
        assert f"Your answer is in: {pick}." in _texts(student)
        assert "right" not in _texts(student)  # not told before the reveal
    teacher.run()
    assert "3 of 3 answered" in _texts(teacher)
    assert _bars(teacher) == {"key 0": 1, "key 1": 2, "key 2": 0}
    # one student changes their mind: still 3 answers, the counts follow
    students[1].radio[0].set_value("key 2").run()
    _click(students[1], "Send my answer")
    teacher.run()
    assert "3 of 3 answered" in _texts(teacher)
    assert _bars(teacher) == {"key 0": 0, "key 1": 2, "key 2": 1}
    # Reveal: on the projector and on every phone
    _click(teacher, "Reveal the answer")
    assert "2 of 3** answers hold" in _texts(teacher) and "The answer:** key 1" in _texts(teacher)
    spec = json.loads(teacher.get("plotly_chart")[0].proto.spec)
    assert spec["data"][0]["marker"]["color"][1] != spec["data"][0]["marker"]["color"][0]
    for student, told in zip(students, ("right", "no", "right"), strict=True):
        student.run()
        assert "The answer:** key 1" in _texts(student)
        messages = [m.value for m in (*student.success, *student.warning)]
        assert told in messages
        assert not [b for b in student.button if b.label == "Send my answer"]  # closed


def test_ask_asks_after_the_question_it_was_drawn_at(room):
    # One press of Ask reaching the callback twice (seen end to end: questions 2 and 3 asked at
    # once, the room's answers to 2 closed) is one press of a button drawn at question n: it
    # asks once. Here the class moved past the drawn page meanwhile (another tab asked): the
    # press asks nothing; the page, drawn again, asks the next question.
    teacher = _teacher()
    code = _start(teacher)
    secret = teacher.session_state[session.TEACHING.key][1]
    teacher.selectbox(key="class_target").set_value("3a").run()
    room.ask(code, secret, "3a", 1)  # after the page was drawn at question 0
    _click(teacher, "Ask this question")
    assert room.state(code).question == 1
    _click(teacher, "Ask this question")  # drawn at question 1 now
    assert room.state(code).question == 2


def test_a_student_cannot_lead(room):
    teacher = _teacher()
    code = _start(teacher)
    secret = teacher.session_state[session.TEACHING.key][1]
    # a student's link without the key, or with a wrong one, shows no teacher's controls
    for fields in ({"class": code}, {"class": code, "key": secret[:-1] + "x"}):
        at = AppTest.from_function(_teacher_page, args=(3,), default_timeout=TIMEOUT)
        at.query_params.update(fields)
        at.run()
        assert_ok(at)
        assert not [b for b in at.button if b.label == "Move the class here"]
    # a session that holds a wrong key anyway is refused, and the class does not move
    at = AppTest.from_function(_teacher_page, args=(3,), default_timeout=TIMEOUT)
    at.session_state[session.TEACHING.key] = (code, "not-the-key")
    at.run()
    at.selectbox(key="class_target").set_value("3a").run()
    for label in ("Move the class here", "Ask this question", "End the class"):
        [b for b in at.button if b.label == label][0].click().run()
        assert [e.value for e in at.error] == [NOT_TEACHER]
    state = room.state(code)
    assert (state.moves, state.question, state.ended) == (0, 0, False)
    # the teacher's own link opens the controls in a new session
    at = AppTest.from_function(_teacher_page, args=(3,), default_timeout=TIMEOUT)
    at.query_params.update({"class": code, "key": secret})
    at.run()
    assert [b for b in at.button if b.label == "Move the class here"]


@pytest.mark.parametrize(
    ("code", "nickname", "message"),
    [
        ("ZZZZZZ", "", "There is no class ZZZZZZ"),
        ("K7MQ0X", "", "'0' never appear"),
        (None, "<b>Ada</b>", "leave out < and >"),
    ],
    ids=["unknown code", "a zero", "markup"],
)  # (a nickname longer than 24 characters: the box takes no more; `test_codes` sends one)
def test_joining_refused_with_a_message(room, code, nickname, message):
    code = code or room.start(3).code
    at = _student(code, nickname, ok=False)
    assert not at.exception
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert session.MEMBER_FIELD not in at.query_params  # not in the class
    assert [b for b in at.button if b.label == "Join the class"]  # the form is still there


@pytest.mark.slow  # the check's first run imports Keras (`back_end`)
def test_a_link_brings_the_student_back(room):
    started = room.start(3)
    first = _student(started.code, "Ada")
    member = first.query_params[session.MEMBER_FIELD]
    room.ask(started.code, started.secret, "3c", 4)
    again = AppTest.from_function(_class_page, default_timeout=TIMEOUT)
    again.query_params.update({"code": started.code, "me": member})
    again.run()
    assert "You are in as Ada." in _texts(again) and "Question 1: Test 3c" in _texts(again)
    again.slider[0].set_value(0.3).run()
    _click(again, "Send my answer")
    assert room.tally(room.state(started.code)).counts[3] == 1  # 0.3: in the bin 0.3-0.4


def test_an_ended_class_is_said_to_students(room):
    teacher = _teacher()
    code = _start(teacher)
    student = _student(code)
    _click(teacher, "End the class")
    assert session.TEACHING.key not in teacher.session_state
    student.run()
    assert f"Class {code} has ended" in _texts(student)
    assert [b for b in teacher.button if b.label == "Start a class"]


def test_cells_and_estimates_drawn_in_their_own_terms(room):
    teacher = _teacher()
    code = _start(teacher)
    _, secret = teacher.session_state[session.TEACHING.key]
    students = [room.join(code) for _ in range(2)]
    room.ask(code, secret, "3b", 1)
    room.answer(students[0], 1, {(0, 1), (0, 2)})
    room.answer(students[1], 1, {(0, 1)})
    teacher.run()
    z = decode(json.loads(teacher.get("plotly_chart")[0].proto.spec)["data"][0]["z"])
    np.testing.assert_allclose(z, [[0, 1, 0.5], [0, 0, 0], [0, 0, 0]])  # shares of 2 answers
    room.ask(code, secret, "3c", 1)
    room.answer(students[0], 2, 0.31)
    teacher.run()
    spec = json.loads(teacher.get("plotly_chart")[0].proto.spec)
    assert list(decode(spec["data"][0]["y"])) == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0]


@pytest.mark.slow  # lesson 1's real exercise: its check runs attnviz's maths (TensorFlow)
def test_a_real_question_counted_by_its_own_maths():
    classroom = Classroom(MemoryStore())  # the lessons' own exercises
    session.use_room(classroom)
    try:
        teacher = _teacher(lesson=1)
        code = _start(teacher)
        students = [_student(code) for _ in range(3)]
        teacher.selectbox(key="class_target").set_value("1b").run()
        _click(teacher, "Ask this question")
        state = classroom.state(code)
        variant = classroom.question(state)[1]
        q, k, i = variant.data["q"], variant.data["k"], variant.data["query"]
        best = int(np.argmax(q[i] @ k.T))  # (3,) query i's dot scores, float64 numpy
        picks = [f"key {best}", f"key {(best + 1) % 3}", f"key {best}"]
        for student, pick in zip(students, picks, strict=True):
            student.run()
            student.radio[0].set_value(pick).run()
            _click(student, "Send my answer")
        teacher.run()
        assert "3 of 3 answered" in _texts(teacher)
        expected = {f"key {j}": picks.count(f"key {j}") for j in range(3)}
        assert _bars(teacher) == expected
        _click(teacher, "Reveal the answer")
        assert "2 of 3** answers hold" in _texts(teacher)
        assert f"The answer:** key {best}" in _texts(teacher)
        students[1].run()
        assert f"key {best} is largest" in "\n".join(w.value for w in students[1].warning)
    finally:
        session.use_room(None)


def test_nicknames_are_shown_as_plain_text(room):
    teacher = _teacher()
    code = _start(teacher)
    student = _student(code, "**Ada** [x](y) $1$")
    assert "You are in as **Ada** [x](y) $1$." in [t.value for t in student.text]
    teacher.run()
    assert "**Ada** [x](y) $1$" in [t.value for t in teacher.text]  # "Who joined"
    shown = [m.value for m in (*student.markdown, *teacher.markdown, *teacher.caption)]
    assert not [m for m in shown if "Ada" in m]  # never as markdown


@pytest.mark.slow  # sending runs the check (`back_end` imports Keras on its first run)
def test_answers_faster_than_a_person_are_refused_on_the_page():
    from attnviz.classroom.limits import RateLimit

    classroom = Classroom(
        MemoryStore(), find=find, limit=RateLimit(3, 1.0, clock=lambda: 0.0),  # time stands still
        listed=lambda n: tuple(e for e in EXERCISES.values() if e.lesson == n),
    )  # fmt: skip
    session.use_room(classroom)
    try:
        started = classroom.start(3)
        student = _student(started.code)
        classroom.ask(started.code, started.secret, "3a", 1)
        student.run()
        student.radio[0].set_value("key 1").run()
        for _ in range(3):
            _click(student, "Send my answer")
            assert "Your answer is in: key 1." in _texts(student)
        _click(student, "Send my answer")
        assert "faster than a person could send them" in _texts(student)
        assert classroom.tally(classroom.state(started.code)).answered == 1
    finally:
        session.use_room(None)


def test_a_store_not_answering_is_said_and_the_page_goes_on(room, monkeypatch):
    from attnviz.classroom import StoreDownError

    teacher = _teacher()
    code = _start(teacher)
    student = _student(code)

    def down(*args):
        raise StoreDownError("The class's store is not answering (ConnectionError).")

    monkeypatch.setattr(room.store, "read", down)
    for page in (student, teacher):
        page.run()
        assert not page.exception
        assert "store is not answering" in "\n".join(m.value for m in (*page.warning, *page.error))
    monkeypatch.undo()
    student.run()
    assert f"Class {code} · lesson 3" in _texts(student)


def test_a_students_run_reads_its_class_once(room, monkeypatch):
    # the class's run reads the class; its nested 30 s check, drawn by that run, reads nothing
    started = room.start(3)
    student = _student(started.code)
    reads = []
    state = Classroom.state
    monkeypatch.setattr(
        Classroom, "state", lambda self, code: reads.append(code) or state(self, code)
    )
    room.move(started.code, started.secret, 3, "3a")
    student.run()
    assert "The teacher is at exercise 3a." in _texts(student)
    assert reads == [started.code]


def _followed(me) -> None:
    from attnviz.ui.classroom.student import _follow

    _follow(me, None)  # what the server's watch runs again when the class moves on


def test_a_move_runs_only_what_it_changes_on_every_phone(room):
    # each element of the followed fragment is a message to every phone of the room at each
    # move: the check, the nickname and Leave are the page's, drawn once
    started = room.start(3)
    student = _student(started.code, "Ada")
    assert "You are in as Ada." in _texts(student) and [b.label for b in student.button] == [
        "Leave the class"]  # fmt: skip
    room.move(started.code, started.secret, 3, "3a")
    me = student.session_state[session.JOINED.key]
    moved = AppTest.from_function(_followed, args=(me,), default_timeout=TIMEOUT).run()
    assert_ok(moved)
    assert [s.value for s in moved.subheader] == [f"Class {started.code} · lesson 3: "
                                                  f"{LESSONS[2].title}"]  # fmt: skip
    assert [c.value for c in moved.caption] == ["Follow the projector. The teacher is at "
                                                "exercise 3a."]  # fmt: skip
    assert [i.value for i in moved.info] == ["Waiting for the teacher's question…"]
    assert not moved.button and not moved.text  # no Leave, no nickname


def _checked(code: str) -> None:
    from attnviz.ui.classroom.student import _check

    _check(code)  # as its 30 s timer runs it, apart from the class's fragment


def test_the_pages_own_check_runs_it_again_only_when_the_watch_missed_a_move(room, monkeypatch):
    # the check's timer runs apart from the moves: a check right after a move, before the
    # watch's run reached this phone, waits for the next check (a whole page's run otherwise)
    import streamlit

    from attnviz.ui.classroom import student

    started = room.start(3)
    reruns = []
    monkeypatch.setattr(student, "_timer_run", lambda: True)
    monkeypatch.setattr(streamlit, "rerun", lambda *a, **k: reruns.append(1))
    at = AppTest.from_function(_checked, args=(started.code,), default_timeout=TIMEOUT)
    at.session_state[student.SHOWN.key] = room.state(started.code).version
    at.run()
    assert_ok(at)
    assert reruns == []  # the page shows the class as it is
    room.move(started.code, started.secret, 3, "3a")
    at.run()
    assert reruns == []  # moved on: first seen, the watch's run may be on its way
    at.session_state[student.SHOWN.key] = room.state(started.code).version  # it came
    at.run()
    at.run()
    assert reruns == []
    room.move(started.code, started.secret, 3, "3b")
    at.run()
    at.run()  # behind at two checks: the watch missed it
    assert reruns == [1]
