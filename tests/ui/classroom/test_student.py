"""Tests for attnviz/ui/classroom/student.py's sharing: a revealed question's answers are read
and counted once per server for every phone that shows them. (The page itself: `test_class`.)"""

from __future__ import annotations

from classroom_support import EXERCISES, find

from attnviz.classroom import Classroom, MemoryStore
from attnviz.ui.classroom.student import _final_tally


class CountingStore(MemoryStore):
    """The in-process store, counting the reads of a question's answers."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def answers(self, code: str, question: int) -> dict[str, str]:
        self.reads += 1
        return super().answers(code, question)


def test_a_revealed_questions_answers_are_read_once_for_all_phones():
    store = CountingStore()
    listed = lambda n: tuple(e for e in EXERCISES.values() if e.lesson == n)  # noqa: E731
    room = Classroom(store, find=find, listed=listed)
    started = room.start(3)
    phones = [room.join(started.code) for _ in range(3)]
    room.ask(started.code, started.secret, "3a", 0)
    for phone, pick in zip(phones, ("key 1", "key 0", "key 1"), strict=True):
        room.answer(phone, 1, pick)
    revealed = room.reveal(started.code, started.secret)
    tallies = [_final_tally(room, room.state(started.code)) for _ in phones]
    assert store.reads == 1
    assert [t.options for t in tallies] == [(("key 0", 1), ("key 1", 2), ("key 2", 0))] * 3
    assert (tallies[0].answered, tallies[0].members, tallies[0].solved) == (3, 3, 2)
    moved = room.move(started.code, started.secret, 3, "3b")  # a new version: read again
    assert moved.version > revealed.version
    _final_tally(room, room.state(started.code))
    assert store.reads == 2
