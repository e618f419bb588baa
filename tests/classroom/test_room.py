"""A class, against both stores: start, join, moves, questions, answers (one per student per
question), tallies, reveal, end, expiry, and every refusal (no secret, wrong code, an ended
class, an old question, answers too fast, answers of the wrong shape)."""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest
from classroom_support import EXERCISES, find

from attnviz.classroom import codes
from attnviz.classroom.limits import RateLimit
from attnviz.classroom.room import NOT_TEACHER, ClassError, Classroom, Joined


@pytest.fixture
def room(store) -> Classroom:
    return Classroom(store, find=find)


def test_start_gives_a_code_and_a_secret(room, store):
    started = room.start(3)
    assert re.fullmatch(r"[A-HJ-NP-Z2-9]{6}", started.code)
    state = started.state
    assert (state.lesson, state.exercise, state.question, state.moves) == (3, "", 0, 0)
    assert not state.revealed and not state.ended
    assert state.expires_at == pytest.approx(time.time() + 12 * 3600, abs=5)
    fields = store.read(started.code)
    assert started.secret not in fields.values()  # only its hash is stored
    assert fields["secret"] == codes.hash_secret(started.secret)
    assert room.is_teacher(started.code, started.secret)
    assert not room.is_teacher(started.code, "guess")


@pytest.mark.parametrize("lesson", [0, 13, "3", True, None])
def test_start_at_no_lesson(room, lesson):
    with pytest.raises(ClassError, match="A class is at lesson 1 to 12"):
        room.start(lesson)


def test_students_join_and_follow_moves(room, store):
    started = room.start(3)
    ada = room.join(started.code.lower(), "Ada")
    bob = room.join(started.code, "")
    assert store.members(started.code) == {ada.member: "Ada", bob.member: ""}
    moved = room.move(started.code, started.secret, 4, "4a")
    assert (moved.lesson, moved.exercise, moved.moves) == (4, "4a", 1)
    assert room.state(ada.code) == moved and moved.version > started.state.version
    assert room.rejoin(started.code, bob.member) == bob


@pytest.mark.parametrize("secret", ["", None, "not-the-secret", "x" * 10_000])
def test_a_student_cannot_lead(room, secret):
    started = room.start(3)
    room.join(started.code)
    for action in (
        lambda: room.move(started.code, secret, 4),
        lambda: room.ask(started.code, secret, "3a", 5),
        lambda: room.reveal(started.code, secret),
        lambda: room.end(started.code, secret),
    ):
        with pytest.raises(ClassError, match=re.escape(NOT_TEACHER)):
            action()
    assert room.state(started.code) == started.state  # nothing changed


def test_the_teacher_secret_is_compared_in_constant_time(room, monkeypatch):
    calls = []
    monkeypatch.setattr(codes.hmac, "compare_digest", lambda a, b: calls.append(1) or a == b)
    started = room.start(3)
    room.move(started.code, started.secret, 3)
    assert calls == [1]


@pytest.mark.parametrize(
    ("code", "message"),
    [("ZZZZZZ", "There is no class ZZZZZZ"), ("12", "6 letters and digits"), ("", "Type the")],
)
def test_unknown_codes(room, code, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        room.join(code)
    with pytest.raises(ValueError, match=re.escape(message)):
        room.state(code)


def test_bad_moves(room):
    started = room.start(3)
    with pytest.raises(ClassError, match="Exercise 4a is not one of lesson 3's"):
        room.move(started.code, started.secret, 3, "4a")
    with pytest.raises(ClassError, match="There is no exercise '9z'"):
        room.move(started.code, started.secret, 3, "9z")
    with pytest.raises(ClassError, match="lesson 1 to 12"):
        room.move(started.code, started.secret, 99)
    for seed in (-1, 2**31, 1.5, "7"):
        with pytest.raises(ClassError, match="seed is a whole number"):
            room.ask(started.code, started.secret, "3a", seed)
    with pytest.raises(ClassError, match="Ask a question first"):
        room.reveal(started.code, started.secret)


def test_a_question_answered_tallied_revealed(room):
    started = room.start(3)
    students = [room.join(started.code, name) for name in ("Ada", "Bob", "Cy", "Di")]
    asked = room.ask(started.code, started.secret, "3a", 77)
    assert (asked.question, asked.asked, asked.seed, asked.exercise) == (1, "3a", 77, "3a")
    exercise, variant = room.question(asked)
    assert exercise is EXERCISES["3a"] and variant.prompt == "Question 3a at seed 77"
    for student, pick in zip(students[:3], ("key 1", "key 0", "key 1"), strict=True):
        assert room.answer(student, 1, pick).solved == (pick == "key 1")
    got = room.tally(room.state(started.code))
    assert got.options == (("key 0", 1), ("key 1", 2), ("key 2", 0))
    assert (got.answered, got.members, got.solved) == (3, 4, 2)
    assert room.my_answer(students[1], 1) == "key 0" and room.my_answer(students[3], 1) is None
    revealed = room.reveal(started.code, started.secret)
    assert revealed.revealed and room.state(students[0].code).revealed
    with pytest.raises(ClassError, match="The answer is out"):
        room.answer(students[3], 1, "key 1")


def test_answering_again_counts_once(room):
    started = room.start(3)
    ada = room.join(started.code, "Ada")
    room.ask(started.code, started.secret, "3b", 1)
    room.answer(ada, 1, {(0, 1)})
    room.answer(ada, 1, [(0, 1), (0, 2), (1, 2)])
    got = room.tally(room.state(started.code))
    assert (got.answered, got.solved) == (1, 1)
    np.testing.assert_array_equal(got.cells, [[0, 1, 1], [0, 0, 1], [0, 0, 0]])


def test_a_new_question_starts_from_no_answers(room):
    started = room.start(3)
    ada = room.join(started.code)
    room.ask(started.code, started.secret, "3c", 1)
    room.answer(ada, 1, 0.3)
    state = room.ask(started.code, started.secret, "3d", 1)
    assert state.question == 2 and not state.revealed
    assert room.tally(state).answered == 0
    with pytest.raises(ClassError, match="That question is closed"):
        room.answer(ada, 1, 0.5)  # the page still showed the old one
    room.answer(ada, 2, "2.5")
    assert room.tally(room.state(started.code)).solved == 1


def test_one_press_of_ask_arriving_twice_asks_once(room):
    # The end-to-end test saw one press of the teacher's Ask (drawn at question 1) ask questions
    # 2 and 3: the room's answers to 2 were closed at once. `after` names the question the
    # button was drawn at; a press arriving again once the class is past it asks nothing.
    started = room.start(3)
    ada = room.join(started.code)
    room.ask(started.code, started.secret, "3a", 1, after=0)
    assert room.ask(started.code, started.secret, "3a", 1, after=0).question == 1  # again
    room.answer(ada, 1, "key 1")  # question 1 still takes answers
    assert room.tally(room.state(started.code)).answered == 1
    assert room.ask(started.code, started.secret, "3b", 1, after=1).question == 2  # next press
    assert room.ask(started.code, started.secret, "3b", 1).question == 3  # no `after`: asks


@pytest.mark.parametrize(
    ("exercise_id", "sent", "message"),
    [
        ("3a", "<script>", "Pick one of"),
        ("3b", [(5, 5)], "Pick cells of the 3 × 3 grid"),
        ("3c", 7.0, "between 0 and 1"),
        ("3d", "x" * 10_000, "characters long"),
        ("4a", {"Q": ["1"]}, "Q is text"),
        ("4b", {"causal": True, "window": 99}, "Window is a whole number from 0 to 4"),
    ],
)
def test_answers_of_the_wrong_shape_are_refused(room, exercise_id, sent, message):
    started = room.start(EXERCISES[exercise_id].lesson)
    ada = room.join(started.code)
    room.ask(started.code, started.secret, exercise_id, 1)
    with pytest.raises(ValueError, match=re.escape(message)):
        room.answer(ada, 1, sent)
    assert room.tally(room.state(started.code)).answered == 0


def test_make_and_compute_tally_how_many_solved(room):
    started = room.start(4)
    students = [room.join(started.code) for _ in range(3)]
    room.ask(started.code, started.secret, "4b", 3)
    room.answer(students[0], 1, {"causal": True, "window": 2})
    room.answer(students[1], 1, {"causal": False, "window": 2})
    got = room.tally(room.state(started.code))
    assert (got.answered, got.members, got.solved) == (2, 3, 1)


def test_answers_faster_than_a_person_are_refused(store):
    now = [0.0]
    room = Classroom(store, find=find, limit=RateLimit(3, 1.0, clock=lambda: now[0]))
    started = room.start(3)
    ada, bob = room.join(started.code), room.join(started.code)
    room.ask(started.code, started.secret, "3a", 1)
    for pick in ("key 0", "key 1", "key 2"):
        room.answer(ada, 1, pick)
    with pytest.raises(ClassError, match="faster than a person"):
        room.answer(ada, 1, "key 1")
    room.answer(bob, 1, "key 1")  # the class goes on for everyone else
    now[0] = 1.0
    room.answer(ada, 1, "key 1")
    assert room.tally(room.state(started.code)).options[1] == ("key 1", 2)


def test_a_stranger_cannot_answer(room):
    started = room.start(3)
    room.ask(started.code, started.secret, "3a", 1)
    stranger = Joined(started.code, codes.new_member(), "")
    with pytest.raises(ClassError, match="You are not in this class"):
        room.answer(stranger, 1, "key 1")
    with pytest.raises(ClassError, match="not in the class: join again"):
        room.rejoin(started.code, stranger.member)
    with pytest.raises(ValueError, match="join again by code"):
        room.rejoin(started.code, "<b>")


def test_concurrent_answers_from_threads(room):
    started = room.start(3)
    students = [room.join(started.code) for _ in range(30)]
    room.ask(started.code, started.secret, "3a", 1)
    picks = ["key 0", "key 1", "key 2"]

    def answer(k: int) -> None:
        room.answer(students[k], 1, picks[(k + 1) % 3])  # first a wrong one, then ...
        room.answer(students[k], 1, picks[k % 3])  # ... the one that counts

    threads = [threading.Thread(target=answer, args=(k,)) for k in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    got = room.tally(room.state(started.code))
    assert got.options == (("key 0", 10), ("key 1", 10), ("key 2", 10))
    assert (got.answered, got.members, got.solved) == (30, 30, 10)


def test_an_ended_class(room):
    started = room.start(3)
    ada = room.join(started.code)
    room.ask(started.code, started.secret, "3a", 1)
    assert room.end(started.code, started.secret).ended
    assert room.state(started.code).ended  # students are told
    with pytest.raises(ClassError, match=f"Class {started.code} has ended"):
        room.join(started.code)
    with pytest.raises(ClassError, match="has ended"):
        room.answer(ada, 1, "key 1")
    with pytest.raises(ClassError, match="has ended"):
        room.move(started.code, started.secret, 4)


def test_a_class_expires(store):
    room = Classroom(store, find=find, ttl=0.4)
    started = room.start(3)
    ada = room.join(started.code)
    room.ask(started.code, started.secret, "3a", 1)
    time.sleep(0.5)
    for action in (
        lambda: room.state(started.code),
        lambda: room.join(started.code),
        lambda: room.answer(ada, 1, "key 1"),
        lambda: room.move(started.code, started.secret, 4),
    ):
        with pytest.raises(ClassError, match=f"There is no class {started.code}"):
            action()
