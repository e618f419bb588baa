"""A learner's progress and their exercises' numbers, kept in the session and in the URL (so a
reload or a shared link keeps them; nothing is stored on the server):

- `done`: the exercises solved, their ids joined by "." ("1a.1b.4a");
- `variant`: the seed every exercise draws its numbers from (a teacher shares one exact variant
  by its link); a new visitor gets a random one, written to the URL as a lesson opens;
- `solutions`: the teacher's switch that shows each exercise's solution (a learner's link does
  not carry it).
"""

from __future__ import annotations

import re
import secrets

import streamlit as st

from attnviz.lessons.exercises import EXERCISES, exercises_of
from attnviz.ui.frame.state import slot, slot_family

DONE_FIELD = "done"
VARIANT_FIELD = "variant"
MAX_VARIANT = 99_999  # variants are numbered 1 to this (short enough to read out in class)
DONE = slot("exercises_done", "", kept=True)  # the ids solved, "1a.2b"
VARIANT = slot("exercise_variant", 0, kept=True)  # the learner's seed (0: not drawn yet)
READ = slot("_progress_read", False, kept=True)  # the URL's progress was read (first run)
REDRAWN = slot_family("exercise_redrawn", 0, kept=True)  # times "New numbers" was pressed
SOLUTIONS = slot("solutions", False, url=True, kept=True)  # the teacher's switch
_KNOWN = {exercise.id for exercise in EXERCISES}
_ID = re.compile(r"^\d{1,2}[a-j]$")


def read_url() -> None:
    """On a session's first run, take the progress and the variant a link carries (anything
    unknown in it is ignored: an old or hand-edited link)."""
    if READ.get():
        return
    READ.set(True)
    done = st.query_params.get(DONE_FIELD, "")
    DONE.set(".".join(i for i in done.split(".") if _ID.match(i) and i in _KNOWN))
    text = st.query_params.get(VARIANT_FIELD, "")
    if text.isdigit() and 1 <= int(text) <= MAX_VARIANT:
        VARIANT.set(int(text))


def done_ids() -> set[str]:
    """The exercises this learner has solved."""
    return {i for i in DONE.get().split(".") if i}


def lesson_finished(lesson: int) -> bool:
    """Every exercise of `lesson` is solved."""
    ids = {exercise.id for exercise in exercises_of(lesson)}
    return bool(ids) and ids <= done_ids()


def variant() -> int:
    """The learner's variant, drawn at random the first time."""
    if not VARIANT.get():
        VARIANT.set(secrets.randbelow(MAX_VARIANT) + 1)
    return VARIANT.get()


def seed_of(exercise_id: str) -> int:
    """The seed exercise `exercise_id` draws from: the variant, moved on by each "New numbers"."""
    return variant() + 100_003 * REDRAWN.of(exercise_id).get()


def redraw(exercise_id: str) -> None:
    """New numbers for one exercise."""
    member = REDRAWN.of(exercise_id)
    member.set(member.get() + 1)


def answered(exercise_id: str, solved: bool) -> None:
    """Note an answer: the variant goes into the URL (a reload keeps these numbers), and a
    solved exercise into the progress."""
    if solved and exercise_id not in done_ids():
        DONE.set(".".join(sorted(done_ids() | {exercise_id}, key=_order)))
    write_url()


def write_url() -> None:
    """The progress and the variant in the URL, as they are."""
    fields = link_fields()
    for field in (DONE_FIELD, VARIANT_FIELD):
        if field in fields and st.query_params.get(field) != fields[field]:
            st.query_params[field] = fields[field]


def link_fields() -> dict[str, str]:
    """The URL fields a link to another lesson carries: the progress and the variant (as the
    page's last full run knew them; the lesson opened writes the session's own)."""
    variant()
    fields = {}
    if DONE.get():
        fields[DONE_FIELD] = DONE.get()
    if VARIANT.get():
        fields[VARIANT_FIELD] = str(VARIANT.get())
    return fields


def _order(exercise_id: str) -> tuple[int, str]:
    return int(exercise_id[:-1]), exercise_id[-1]
