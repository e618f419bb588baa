"""A session's place in a class, kept in the session (not reset when a lesson opens) and in the
URL (a reload, or a server that took over after another died, finds it again): a student's
class code and member id (`?code=K7MQ2X&me=...`), a teacher's class and secret (`?class=K7MQ2X
&key=...`, the teacher's own link only). And the one `Classroom` of this server process, over
the store `ATTNVIZ_REDIS_URL` names (`store_from_env`)."""

from __future__ import annotations

import streamlit as st

from attnviz.classroom import ClassError, Classroom, Joined, store_from_env
from attnviz.ui.frame.state import slot

CODE_FIELD, MEMBER_FIELD = "code", "me"  # a student's URL fields
CLASS_FIELD, KEY_FIELD = "class", "key"  # the teacher's URL fields
POLL_SECONDS = 1.5  # how often the teacher's projector asks the store how the room answered
# (a student's page does not poll: the server runs it again when its class moves, `watch`)
JOINED = slot("class_joined", None, kind=Joined, kept=True)  # the student's class, once joined
TEACHING = slot("class_teaching", None, kind=tuple, kept=True)  # (code, secret): the teacher's
_ROOM: list[Classroom] = []  # this process's classroom, made when first needed (`use_room`)


def room() -> Classroom:
    """The server's `Classroom` (one store, one rate limit for every session)."""
    if not _ROOM:
        _ROOM.append(Classroom(store_from_env()))
    return _ROOM[0]


def use_room(classroom: Classroom | None) -> None:
    """Serve `classroom` from now on (None: the store the environment names, made again)."""
    _ROOM.clear()
    if classroom is not None:
        _ROOM.append(classroom)


def joined() -> Joined | None:
    """The class this student is in: the session's, or the one its link names (checked)."""
    if JOINED.get() is None and MEMBER_FIELD in st.query_params:
        try:
            JOINED.set(room().rejoin(st.query_params.get(CODE_FIELD, ""),
                                     st.query_params[MEMBER_FIELD]))  # fmt: skip
        except ClassError:
            pass  # the join form says what is wrong with the code, if anything
        except ValueError:
            del st.query_params[MEMBER_FIELD]
    return JOINED.get()


def teaching() -> tuple[str, str] | None:
    """`(code, secret)` of the class this session teaches: the session's, or the one the
    teacher's link names (its secret checked); None for a student."""
    if TEACHING.get() is None and {CLASS_FIELD, KEY_FIELD} <= set(st.query_params):
        code, secret = st.query_params[CLASS_FIELD], st.query_params[KEY_FIELD]
        try:
            if room().is_teacher(code, secret) and not room().state(code).ended:
                TEACHING.set((room().state(code).code, secret))
        except ValueError:
            pass  # a class that is over, a mistyped link: the panel offers a new class
    return TEACHING.get()


def stop_teaching() -> None:
    """Forget the class this session taught (it ended), and its fields in the URL."""
    TEACHING.clear()
    for field in (CLASS_FIELD, KEY_FIELD):
        st.query_params.pop(field, None)


def teacher_fields() -> dict[str, str]:
    """The URL fields of the teacher's own link ({} when not teaching)."""
    teacher = TEACHING.get()
    return {} if teacher is None else {CLASS_FIELD: teacher[0], KEY_FIELD: teacher[1]}
