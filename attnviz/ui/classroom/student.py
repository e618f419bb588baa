"""The students' side of a class, on the page /class: join by code (the QR code's link fills it
in), then follow the teacher: the page shows the lesson the teacher moved to, and the question
asked, with its answer widget; after the reveal, the answer and the room's answers. The page
follows its class (`watch.follow`): the server runs its class's fragment again when the class
has changed (the page itself checks only every `CHECK_SECONDS`, a safety net). A link opens
the lesson to explore on one's own; every page then shows a link back to the class."""

from __future__ import annotations

import functools

import streamlit as st

from attnviz.classroom import ClassError, Classroom, ClassState, Joined, StoreDownError, Tally
from attnviz.classroom.codes import CODE_LENGTH, NICKNAME_CHARS, clean_nickname
from attnviz.lessons import LESSONS
from attnviz.lessons.exercises import Variant
from attnviz.ui.classroom import question, watch
from attnviz.ui.classroom.session import CODE_FIELD, JOINED, MEMBER_FIELD, joined, room
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import error, plain
from attnviz.ui.frame.state import slot, slot_family

PAGE = "class"  # the page's URL path
CHECK_SECONDS = 30.0  # how often a page in a class checks its class itself (`_check`)
INTRO = "Join your teacher's class: follow the lesson on the projector and answer its questions."
ANSWER = slot_family("class_answer", None)  # class_answer_<question>: the answer widget
SENT = slot_family("class_sent", None, kept=True)  # class_sent_<code>_<question>: what sending
# said, ("ok" | "error", message)
SHOWN = slot("class_shown", -1)  # the version of the class the page drew last (-1: none; the
# store did not answer)
BEHIND = slot("class_behind", None, kind=int)  # the version the page showed when a check found
# the class moved on (None: it was not)
MINE = slot_family("class_mine", None, kept=True)  # class_mine_<code>_<question>: my answer


def draw_class_page(pages: dict[str, st.Page] | None = None) -> None:
    """The whole /class page: the join form, or the class followed; `pages` (by URL path) for
    the link to explore the class's lesson (None: no link)."""
    me = joined()
    if me is None:
        watch.forget()
        _join_form()
        return
    _follow(me, pages)
    _check(me.code)
    if me.nickname:
        st.text(f"You are in as {me.nickname}.")  # their own text: plain, never markup
    _leave_button()


def _join_form() -> None:
    linked = st.query_params.get(CODE_FIELD, "")[:20]
    with st.form("class_join"):
        code = st.text_input("The class's code, from the projector", value=linked, max_chars=20,
                             placeholder=f"{CODE_LENGTH} letters and digits")  # fmt: skip
        nickname = st.text_input(
            "Your nickname (optional)", max_chars=NICKNAME_CHARS,
            help=f"Plain text, at most {NICKNAME_CHARS} characters. Leave it empty to stay "
            "anonymous: the projector shows only how many answered.",
        )  # fmt: skip
        if not st.form_submit_button("Join the class", type="primary"):
            return
    try:
        me = room().join(code, clean_nickname(nickname))
    except ValueError as err:
        error(plain(err))
        return
    JOINED.set(me)
    st.query_params[CODE_FIELD], st.query_params[MEMBER_FIELD] = me.code, me.member
    st.rerun()


@st.fragment
def _follow(me: Joined, pages: dict[str, st.Page] | None) -> None:
    """The class as it is now, followed (`watch`): when the class changes, the server runs
    this fragment again, not the whole page. It draws only what a move changes (the page's
    own run draws the rest once: the check, the nickname, Leave): each element is a message
    to every phone of the room at each move."""
    try:
        state = room().state(me.code)
    except StoreDownError as err:
        st.warning(plain(err), icon=":material/sync_problem:")
        watch.follow(me.code, -1, fragment=watch.fragment_id())  # run again once it answers
        SHOWN.set(-1)
        return
    except ClassError as err:
        watch.forget()
        SHOWN.set(watch.GONE)
        error(plain(err))
        return
    SHOWN.set(state.version)
    if state.ended:
        watch.forget()
        st.info(f"Class {state.code} has ended. Thank you for taking part!")
        return
    watch.follow(state.code, state.version, fragment=watch.fragment_id())
    lesson = LESSONS[state.lesson - 1]
    st.subheader(f"Class {state.code} · lesson {lesson.number}: {lesson.title}")
    at = f" The teacher is at exercise {state.exercise}." if state.exercise else ""
    st.caption(f"Follow the projector.{at}")
    if pages is not None:
        st.page_link(pages[lesson.slug], label=f"Explore lesson {lesson.number} on your own",
                     icon=":material/explore:")  # fmt: skip
    if not state.question:
        st.info("Waiting for the teacher's question…", icon=":material/hourglass_top:")
    else:
        _question(me, state)


@st.fragment(run_every=CHECK_SECONDS)
def _check(code: str) -> None:
    """Every `CHECK_SECONDS`, one small read: has the class moved on from what the page last
    drew (`SHOWN`), also at the check before? Then the page runs again. The server's watch
    (`watch`) runs the page again as soon as its class changes; this slow check is the page's
    own safety net, and, being a timer, what makes the browser run the page again when its
    websocket reconnects to another server (Streamlit's page reruns on a reconnection only if
    it has timers): a student whose server died would otherwise not be followed by the new one
    until they touched the page.

    A check that finds the class moved on for the first time only notes it (`BEHIND`): its
    timer runs apart from the moves, and the watch's run may be on its way (with a room of
    200, the last phone's comes seconds after the move); a whole page's run then would cost a
    page's run for a tenth of the room at each move. Drawn by the page's own run, it reads
    nothing: that run has just read the class."""
    if not _timer_run():
        return
    try:
        now = room().state(code).version
    except StoreDownError:
        return  # asked again in `CHECK_SECONDS`
    except ClassError:
        now = watch.GONE  # the page's next run says so
    if now == SHOWN.get():
        BEHIND.clear()
    elif BEHIND.get() != SHOWN.get():  # first seen: the watch's run may be on its way
        BEHIND.set(SHOWN.get())
    else:  # behind since the last check: the watch missed it
        st.rerun()


def _timer_run() -> bool:
    """This fragment runs on its own (its timer), not inside the run that drew it."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx is not None and watch.fragment_id() in (ctx.fragment_ids_this_run or ())


def _question(me: Joined, state: ClassState) -> None:
    exercise, variant = room().question(state)
    st.markdown(f"#### Question {state.question}: {exercise.title}")
    question.task(variant)
    mine = MINE.of(f"{state.code}_{state.question}")
    if state.revealed:
        answer = mine.get() if mine.is_set() else room().my_answer(me, state.question)
        with back_end():  # the check, the answer and its chart: attnviz's maths
            question.revealed(exercise, variant, answer, key=f"class_chart_mine_{state.question}")
            question.room_answers(exercise, variant, _final_tally(room(), state), True,
                                  key=f"class_chart_room_{state.question}")  # fmt: skip
        return
    _answer(me, state, variant)


@functools.lru_cache(maxsize=16)
def _final_tally(classroom: Classroom, state: ClassState) -> Tally:
    """The room's answers to `state`'s revealed question, read and counted once per server at
    each version of the class (a revealed question takes no more answers): every phone of the
    room shows them, and each read them all from the store."""
    return classroom.tally(state)


@st.fragment
def _answer(me: Joined, state: ClassState, variant: Variant) -> None:
    """The answer widget and Send (a fragment: sending reruns only this)."""
    mine = MINE.of(f"{state.code}_{state.question}")
    answer = question.answer_widget(variant, ANSWER.of(state.question).key)
    sent = SENT.of(f"{state.code}_{state.question}")
    if st.button("Send my answer", type="primary", key=f"class_send_{state.question}"):
        with back_end():  # the exercise's check: attnviz's maths
            sent.set(_send(me, state, answer))
        if sent.get()[0] == "ok":
            mine.set(answer)
    if sent.get() is not None:
        kind, message = sent.get()
        (st.success if kind == "ok" else st.warning)(message)


def _send(me: Joined, state: ClassState, answer) -> tuple[str, str]:
    """Send `answer`; what to tell the student: ("ok" | "error", message)."""
    try:
        verdict = room().answer(me, state.question, answer)
    except ValueError as err:
        return "error", plain(err)
    told = f" {verdict.message}" if room().question(state)[0].kind == "make" else ""
    return "ok", (
        f"Your answer is in: {plain(question.as_text(answer))}. You can change it until the "
        f"teacher reveals the answer.{told}"
    )


def _leave_button() -> None:
    if st.button("Leave the class", key="class_leave"):
        JOINED.clear()
        for field in (CODE_FIELD, MEMBER_FIELD):
            st.query_params.pop(field, None)
        st.rerun()


def back_link(pages: dict[str, st.Page], here: str) -> None:
    """On any other page, while this student is in a class: one tap back to it (the class no
    longer runs this page again when it moves on)."""
    if here != PAGE:
        watch.forget()
    me = JOINED.get()
    if me is not None and here != PAGE and PAGE in pages:
        st.page_link(pages[PAGE], label=f"Back to class {me.code}", icon=":material/groups:",
                     query_params={CODE_FIELD: me.code, MEMBER_FIELD: me.member})  # fmt: skip
