"""A class in the room: the teacher starts it (a join code for the room, a secret for the
teacher's own link), students join by code, the teacher moves the class to a lesson or an
exercise and asks an exercise's question (one seed: every student gets the same numbers),
students answer (one answer each, a new one replacing the old), the room's answers are
tallied, the teacher reveals the answer and ends the class. It expires after 12 hours anyway.

Everything lives in a `ClassStore` (`store`), so every server of the site sees one class;
everything a student sends is checked here before it is stored. Errors are `ClassError`s
(a `ValueError`) with a message for the person who caused them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnviz.classroom import answers as answer_text
from attnviz.classroom.answers import Tally
from attnviz.classroom.codes import (
    hash_secret,
    new_code,
    new_member,
    new_secret,
    read_code,
    read_member,
    secret_matches,
)
from attnviz.classroom.errors import ClassError
from attnviz.classroom.limits import RateLimit
from attnviz.classroom.store import EXPIRES, VERSION, ClassStore
from attnviz.lessons import LESSONS
from attnviz.lessons.exercises import Exercise, Variant, Verdict, exercises_of, get_exercise

TTL = 12 * 3600.0  # seconds a class lives at most
MAX_SEED = 2**31 - 1  # seeds a question may draw its numbers from: 0 to this
NOT_TEACHER = (
    "Only the teacher can do this: the teacher's own link carries a key that students' "
    "links do not."
)


@dataclass(frozen=True)
class ClassState:
    """Where a class is, as a student's page polls it."""

    code: str
    lesson: int  # the lesson the teacher moved the class to
    exercise: str  # ... and its exercise ("": the lesson's text)
    question: int  # questions asked so far; answers are kept per question (0: none yet)
    asked: str  # the exercise asked ("": none)
    seed: int  # the seed the asked exercise's numbers are drawn from
    revealed: bool  # the teacher revealed the asked question's answer
    ended: bool  # the teacher ended the class
    moves: int  # how many times the teacher moved the class
    version: int  # moves on with every change: a page redraws when it changes
    expires_at: float  # epoch seconds


@dataclass(frozen=True)
class Started:
    """A class just started: its code for the room, the secret for the teacher's link."""

    code: str
    secret: str
    state: ClassState


@dataclass(frozen=True)
class Joined:
    """A student in a class."""

    code: str
    member: str  # their id, in their own link
    nickname: str  # "" for none


@dataclass(frozen=True)
class Classroom:
    """Classes kept in `store`; `find` looks an exercise up by id and `listed` gives a lesson's
    exercises; `limit` refuses a session answering faster than a person could; `ttl` is how
    long a class lives (seconds)."""

    store: ClassStore
    find: Callable[[str], Exercise] = get_exercise
    listed: Callable[[int], tuple[Exercise, ...]] = exercises_of
    limit: RateLimit = field(default_factory=RateLimit)
    ttl: float = TTL

    # ---- the teacher ---------------------------------------------------------------------

    def start(self, lesson: int) -> Started:
        """A new class at lesson `lesson`, with a code no live class has."""
        _check_lesson(lesson)
        secret = new_secret()
        fields = {"secret": hash_secret(secret), "lesson": str(lesson), "exercise": "",
                  "question": "0", "asked": "", "seed": "0", "revealed": "0", "ended": "0",
                  "moves": "0"}  # fmt: skip
        for _ in range(20):
            code = new_code()
            if self.store.create(code, fields, self.ttl):
                return Started(code, secret, self.state(code))
        raise ClassError("No free class code was found: try again in a moment.")

    def move(self, code: str, secret: str, lesson: int, exercise: str = "") -> ClassState:
        """Move the class to `lesson`, and to its `exercise` ("": the lesson's text)."""
        state = self._teacher(code, secret)
        _check_lesson(lesson)
        if exercise and self._exercise(exercise).lesson != lesson:
            raise ClassError(f"Exercise {exercise} is not one of lesson {lesson}'s.")
        changes = {"lesson": str(lesson), "exercise": exercise, "moves": str(state.moves + 1)}
        return self._update(state.code, changes)

    def ask(
        self, code: str, secret: str, exercise_id: str, seed: int, after: int | None = None
    ) -> ClassState:
        """Ask exercise `exercise_id`'s question, its numbers drawn from `seed`: the class
        moves to it, and its answers start from none. `after`: the question the teacher's page
        showed when Ask was pressed; once the class is past it, the same press arriving again
        (a double click, a replayed button) asks nothing more and closes no one's answers."""
        state = self._teacher(code, secret)
        if after is not None and state.question != after:
            return state
        exercise = self._exercise(exercise_id)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise ClassError(f"A question's seed is a whole number from 0 to {MAX_SEED}.")
        changes = {"lesson": str(exercise.lesson), "exercise": exercise.id,
                   "question": str(state.question + 1), "asked": exercise.id,
                   "seed": str(seed), "revealed": "0", "moves": str(state.moves + 1)}  # fmt: skip
        return self._update(state.code, changes)

    def reveal(self, code: str, secret: str) -> ClassState:
        """Show the asked question's answer on every page."""
        state = self._teacher(code, secret)
        if not state.question:
            raise ClassError("Ask a question first: there is nothing to reveal yet.")
        return self._update(state.code, {"revealed": "1"})

    def end(self, code: str, secret: str) -> ClassState:
        """End the class: students are told, and nothing more is taken."""
        return self._update(self._teacher(code, secret).code, {"ended": "1"})

    def is_teacher(self, code: str, secret: str) -> bool:
        """Whether `secret` is class `code`'s teacher's (compared in constant time)."""
        fields = self.store.read(read_code(code))
        return fields is not None and secret_matches(secret, fields["secret"])

    # ---- the students --------------------------------------------------------------------

    def join(self, code: str, nickname: str = "") -> Joined:
        """Join class `code`; `nickname` is already checked (`codes.clean_nickname`)."""
        state = self.state(code)
        _check_open(state)
        member = new_member()
        if not self.store.add_member(state.code, member, nickname):
            raise _gone(state.code)
        return Joined(state.code, member, nickname)

    def rejoin(self, code: str, member: str) -> Joined:
        """Back in class `code` as `member` (a reload, or another server after one died)."""
        state = self.state(code)
        member = read_member(member)
        nicknames = self.store.members(state.code)
        if member not in nicknames:
            raise ClassError("This link's member is not in the class: join again by code.")
        return Joined(state.code, member, nicknames[member])

    def answer(self, joined: Joined, question: int, answer: Any) -> Verdict:
        """`joined`'s answer to question `question` (the one their page shows): checked against
        the question's kind, run through the exercise's check, stored (replacing theirs)."""
        if not self.limit.allow(joined.member):
            raise ClassError("Answers are coming faster than a person could send them: wait a "
                             "second, then send yours again.")  # fmt: skip
        state = self.state(joined.code)
        _check_open(state)
        if not state.question or question != state.question:
            raise ClassError("That question is closed: the teacher has asked another one.")
        if state.revealed:
            raise ClassError("The answer is out: this question takes no more answers.")
        if not self.store.is_member(state.code, joined.member):
            raise ClassError("You are not in this class: join it by its code first.")
        exercise, variant = self.question(state)
        text = answer_text.encode(variant.answer, answer)  # a ValueError: the wrong shape
        verdict = exercise.check(variant, answer_text.decode(variant.answer, text))
        stored = answer_text.record(text, verdict.solved)
        if not self.store.put_answer(state.code, state.question, joined.member, stored):
            raise _gone(state.code)
        return verdict

    def my_answer(self, joined: Joined, question: int) -> Any:
        """`joined`'s stored answer to question `question`, as the exercise checks it; None."""
        state = self.state(joined.code)
        stored = self.store.answers(state.code, question).get(joined.member)
        if stored is None or question != state.question:
            return None
        text, _ = answer_text.read_record(stored)
        return answer_text.decode(self.question(state)[1].answer, text)

    # ---- what everyone reads -------------------------------------------------------------

    def state(self, code: str) -> ClassState:
        """Where class `code` is (one small read), or a `ClassError` for an unknown or expired
        code."""
        code = read_code(code)
        fields = self.store.read(code)
        if fields is None:
            raise _gone(code)
        return _state(code, fields)

    def members(self, code: str) -> dict[str, str]:
        """Class `code`'s members: member id -> nickname ("" for none)."""
        return self.store.members(read_code(code))

    def exercises(self, lesson: int) -> tuple[Exercise, ...]:
        """Lesson `lesson`'s exercises: the questions a teacher may ask there."""
        return self.listed(lesson)

    def question(self, state: ClassState) -> tuple[Exercise, Variant]:
        """The asked exercise and its numbers."""
        exercise = self._exercise(state.asked)
        return exercise, exercise.variant(state.seed)

    def tally(self, state: ClassState) -> Tally:
        """The room's answers to the asked question, counted in its chart's terms."""
        if not state.question:
            raise ClassError("No question has been asked yet.")
        _, variant = self.question(state)
        stored = self.store.answers(state.code, state.question)
        members = len(self.store.members(state.code))
        return answer_text.tally(variant.answer, stored.values(), members)

    # ---- inside --------------------------------------------------------------------------

    def _teacher(self, code: str, secret: str) -> ClassState:
        code = read_code(code)
        fields = self.store.read(code)
        if fields is None:
            raise _gone(code)
        if not secret_matches(secret, fields["secret"]):
            raise ClassError(NOT_TEACHER)
        state = _state(code, fields)
        _check_open(state)
        return state

    def _update(self, code: str, changes: dict[str, str]) -> ClassState:
        fields = self.store.update(code, changes)
        if fields is None:
            raise _gone(code)
        return _state(code, fields)

    def _exercise(self, exercise_id: str) -> Exercise:
        try:
            return self.find(exercise_id)
        except (KeyError, ValueError) as error:
            raise ClassError(str(error).strip("'\"")) from None


def _state(code: str, fields: dict[str, str]) -> ClassState:
    return ClassState(
        code, int(fields["lesson"]), fields["exercise"], int(fields["question"]),
        fields["asked"], int(fields["seed"]), fields["revealed"] == "1", fields["ended"] == "1",
        int(fields["moves"]), int(fields[VERSION]), int(fields[EXPIRES]) / 1000,
    )  # fmt: skip


def _check_lesson(lesson: int) -> None:
    if isinstance(lesson, bool) or not isinstance(lesson, int) or not 1 <= lesson <= len(LESSONS):
        raise ClassError(f"A class is at lesson 1 to {len(LESSONS)}; received {lesson!r:.20}.")


def _check_open(state: ClassState) -> None:
    if state.ended:
        raise ClassError(f"Class {state.code} has ended. Thank you for taking part!")


def _gone(code: str) -> ClassError:
    return ClassError(
        f"There is no class {code}: the code may be mistyped, or the class over (a class "
        "lasts 12 hours at most). Check the code on the projector."
    )
