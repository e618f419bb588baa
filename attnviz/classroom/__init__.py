"""A class in the room: a teacher leads, students follow and answer from their phones, the
room's answers are shown before the reveal. Pure (no Streamlit): the pages in `attnviz.ui`
draw it. The classes live in a `ClassStore`: Redis when `ATTNVIZ_REDIS_URL` is set, else in
the process (`store_from_env`)."""

from __future__ import annotations

from attnviz.classroom.answers import Tally
from attnviz.classroom.errors import ClassError, StoreDownError
from attnviz.classroom.from_env import store_from_env
from attnviz.classroom.room import Classroom, ClassState, Joined, Started
from attnviz.classroom.store import ClassStore, MemoryStore

__all__ = [
    "ClassError",
    "ClassState",
    "ClassStore",
    "Classroom",
    "Joined",
    "MemoryStore",
    "Started",
    "StoreDownError",
    "Tally",
    "store_from_env",
]
