"""Tests for attnviz/ui/classroom/watch.py: a server reads each followed class's version once
and runs again exactly the pages whose class moved on; a student's page follows its class
while it shows it, and stops when it shows something else."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from app_support import assert_ok
from classroom_support import EXERCISES, find
from streamlit.testing.v1 import AppTest

from attnviz.classroom import ClassError, Classroom, MemoryStore, StoreDownError
from attnviz.ui.classroom import session, watch

TIMEOUT = 30  # seconds an AppTest run may take (the first imports the pages' modules)


@pytest.fixture(autouse=True)
def nobody_follows():
    """Each test starts and ends with no page following a class."""
    for name in watch.following():
        watch.forget(name)
    yield
    for name in watch.following():
        watch.forget(name)


class Versions:
    """A store's versions by class code, counting the reads; `down`: it does not answer."""

    def __init__(self, **versions: int) -> None:
        self.versions, self.reads, self.down = versions, [], False

    def __call__(self, code: str) -> int:
        self.reads.append(code)
        if self.down:
            raise StoreDownError("Redis is restarting")
        if code not in self.versions:
            raise ClassError(f"There is no class {code}")
        return self.versions[code]


def _step(versions: Versions, alive: set[str] | None = None) -> list[str]:
    """One step of the watch; the sessions it asked to run again."""
    asked: list[str] = []

    def rerun(name: str) -> bool:
        asked.append(name)
        return alive is None or name in alive

    with ThreadPoolExecutor(1) as pool:  # a loop of its own (a browser test's may be running)
        done = pool.submit(asyncio.run, watch.step(versions, rerun)).result()
    assert done == len([a for a in asked if alive is None or a in alive])
    return sorted(asked)


def test_only_the_pages_whose_class_moved_on_run_again_and_only_once():
    watch.follow("AAAAAA", 3, session="s1")  # drawn at version 3
    watch.follow("AAAAAA", 4, session="s2")  # drawn after the move
    watch.follow("BBBBBB", 7, session="s3")  # another class, unchanged
    versions = Versions(AAAAAA=4, BBBBBB=7)
    assert _step(versions) == ["s1"]
    assert sorted(versions.reads) == ["AAAAAA", "BBBBBB"]  # once per class, not per page
    assert watch.following()["s1"] == ("AAAAAA", 4)  # asked once: its run says what it shows
    assert _step(versions) == []
    versions.versions["BBBBBB"] = 8
    assert _step(versions) == ["s3"]


def test_a_store_that_does_not_answer_reruns_nobody_until_it_answers():
    watch.follow("AAAAAA", -1, session="s1")  # drawn while the store was down
    versions = Versions(AAAAAA=5)
    versions.down = True
    assert _step(versions) == []
    assert watch.following()["s1"] == ("AAAAAA", -1)
    versions.down = False
    assert _step(versions) == ["s1"]


def test_a_class_that_is_gone_runs_its_pages_again_to_say_so():
    watch.follow("AAAAAA", 2, session="s1")
    assert _step(Versions()) == ["s1"]
    assert watch.following()["s1"] == ("AAAAAA", watch.GONE)


def test_a_closed_session_is_dropped_and_a_page_that_forgot_is_not_run():
    watch.follow("AAAAAA", 1, session="gone")
    watch.follow("AAAAAA", 1, session="left")
    watch.forget("left")
    assert _step(Versions(AAAAAA=2), alive=set()) == ["gone"]
    assert watch.following() == {}


def test_without_a_streamlit_server_no_session_can_be_run():
    assert watch.rerun_session("no-such-session") is False


class App:
    """A session as `rerun_session` sees it: its last client state (a timer's run of another
    fragment), the fragments it holds, and the runs asked of it."""

    def __init__(self, fragments: set[str]) -> None:
        from streamlit.proto.ClientState_pb2 import ClientState

        self._client_state = ClientState(
            query_string="code=AAAAAA", fragment_id="timer", is_auto_rerun=True
        )
        self.fragments, self.asked = fragments, []

    def has_fragment(self, fragment: str) -> bool:
        return fragment in self.fragments

    def request_rerun(self, state) -> None:
        self.asked.append((state.fragment_id, state.is_auto_rerun, state.query_string))


@pytest.fixture
def server(monkeypatch):
    """A Streamlit server whose only session is "s1" (an `App`, holding fragment "class")."""
    from streamlit.runtime import Runtime

    app = App({"class"})
    runtime = SimpleNamespace(get_app_session=lambda name: app if name == "s1" else None)
    monkeypatch.setattr(Runtime, "exists", staticmethod(lambda: True))
    monkeypatch.setattr(Runtime, "instance", staticmethod(lambda: runtime))
    return app


def test_the_watch_runs_the_fragment_that_draws_the_class_alone_while_the_page_holds_it(server):
    watch.follow("AAAAAA", 1, session="s1", fragment="class")
    assert watch.rerun_session("s1")
    server.fragments.clear()  # a full run since dropped it: the whole page
    assert watch.rerun_session("s1")
    watch.follow("AAAAAA", 1, session="s1")  # a page that names no fragment: the whole page
    assert watch.rerun_session("s1")
    assert server.asked == [("class", False, "code=AAAAAA")] + [("", False, "code=AAAAAA")] * 2
    assert watch.rerun_session("s2") is False


def test_the_watch_s_run_sends_no_widget_values_the_browser_sent_before(server, monkeypatch):
    # the browser's last message pressed a button and held a slider at 2; since then the page
    # moved the slider on: a run replaying that message would press again and set it back
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    server._client_state.widget_states.widgets.extend(  # noqa: SLF001
        [WidgetState(id="send", trigger_value=True), WidgetState(id="slider", int_value=2)]
    )
    states = []
    monkeypatch.setattr(server, "request_rerun", states.append)
    watch.follow("AAAAAA", 1, session="s1", fragment="class")
    assert watch.rerun_session("s1")
    assert [len(s.widget_states.widgets) for s in states] == [0]
    assert states[0].query_string == "code=AAAAAA"  # the rest of its state stays
    assert len(server._client_state.widget_states.widgets) == 2  # noqa: SLF001 - not changed


def _class_page() -> None:
    from attnviz.ui.classroom.student import draw_class_page

    draw_class_page(None)


def _click(at: AppTest, label: str) -> None:
    [button] = [b for b in at.button if b.label == label]
    button.click().run()
    assert_ok(at)


def test_a_students_page_follows_its_class_while_it_shows_it():
    listed = lambda n: tuple(e for e in EXERCISES.values() if e.lesson == n)  # noqa: E731
    room = Classroom(MemoryStore(), find=find, listed=listed)
    session.use_room(room)
    try:
        started = room.start(3)
        at = AppTest.from_function(_class_page, default_timeout=TIMEOUT)
        at.run()
        assert watch.following() == {}  # the join form follows nothing
        at.text_input[0].input(started.code)
        _click(at, "Join the class")
        [(name, (code, version))] = watch.following().items()
        assert (code, version) == (started.code, room.state(started.code).version)
        assert watch.fragment_id() == ""  # outside a run, outside any fragment
        _asks_a_fragment(name)  # the class is drawn in a fragment: the watch runs that alone
        room.move(started.code, started.secret, 3, "3a")
        at.run()  # what the watch's rerun does: the page shows the move, at its new version
        assert list(watch.following().values()) == [(code, room.state(code).version)]
        _click(at, "Leave the class")
        assert watch.following() == {}
    finally:
        session.use_room(None)


def _asks_a_fragment(name: str) -> None:
    app = App(set())
    app.has_fragment = lambda fragment: True  # the session holds every fragment it names
    runtime = SimpleNamespace(get_app_session=lambda _: app)
    with pytest.MonkeyPatch.context() as patch:
        from streamlit.runtime import Runtime

        patch.setattr(Runtime, "exists", staticmethod(lambda: True))
        patch.setattr(Runtime, "instance", staticmethod(lambda: runtime))
        assert watch.rerun_session(name)
    [(fragment, auto, _)] = app.asked
    assert fragment not in ("", "timer") and auto is False
