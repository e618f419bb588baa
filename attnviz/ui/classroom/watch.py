"""A class's students follow the teacher without polling: each server watches the classes its
students' pages show, and runs a page again when its class has moved on.

A student's page in a class says which class it shows and at which version (`follow`); one task
per server (`watch_classes`, started by the server's lifespan hook) reads each followed class's
version every `WATCH_SECONDS`, one small read per class whatever the number of students, and
asks Streamlit to run each page whose class changed again, as Streamlit itself does when a
source file changes (`AppSession.request_rerun` with the session's last client state: its page,
its URL, its widgets' values). A page that polled instead cost a script run per student every
poll: with a room on two servers, the idle class alone took most of a core (`bench/`, section
`class_load`).

A page says too which of its fragments draws the class (`follow(..., fragment=...)`): the watch
then runs that fragment alone, not the whole page (the site's title, its menu of every page,
its navigation: most of a student's run when the class moved on), as a fragment's own timer
would ask for it; a page whose fragment is gone (a full run since dropped it) runs whole.

A page that shows something else (the join form, another page while its student explores, a
class that ended) stops following (`forget`); a session that closed is dropped at its class's
next change. A Learn page follows its training run the same way (`ui.models.training_progress`:
its name starts with "run:", and the server's version reader tells the two apart).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

WATCH_SECONDS = 0.5  # how often a server reads the versions of the classes its pages follow
GONE = -2  # the version of a class that is over or unknown: its page says so when it runs
_LOCK = threading.Lock()
_FOLLOWING: dict[str, tuple[str, int]] = {}  # session id -> (class code, version it shows)
_FRAGMENTS: dict[str, str] = {}  # session id -> the id of the fragment that draws its class
_LOG = logging.getLogger(__name__)


def follow(code: str, version: int, session: str | None = None, fragment: str = "") -> None:
    """This session's page (or session `session`'s) shows class `code` at `version` (-1: not
    known, the store is not answering): run it again once the class's version is another;
    only its fragment `fragment` (an id, `fragment_id()`) if given, else the whole page."""
    session = session or _session_id()
    if session is not None:
        with _LOCK:
            _FOLLOWING[session] = (code, version)
            _FRAGMENTS[session] = fragment


def forget(session: str | None = None) -> None:
    """This session's page (or session `session`'s) follows no class (any more)."""
    session = session or _session_id()
    if session is not None:
        with _LOCK:
            _FOLLOWING.pop(session, None)
            _FRAGMENTS.pop(session, None)


def following() -> dict[str, tuple[str, int]]:
    """Session id -> (class code, version its page shows), for every page that follows one."""
    with _LOCK:
        return dict(_FOLLOWING)


async def watch_classes(
    read_version: Callable[[str], int], interval: float = WATCH_SECONDS
) -> None:
    """Forever, every `interval` s: `step` with `read_version` (code -> the class's version)."""
    while True:
        await asyncio.sleep(interval)
        try:
            await step(read_version, rerun_session)
        except Exception:  # noqa: BLE001 - the watch must outlive any one failure
            _LOG.exception("watching the classes failed; trying again")


async def step(read_version: Callable[[str], int], rerun: Callable[[str], bool]) -> int:
    """Read each followed class's version once (in a worker thread: the store may be remote)
    and `rerun` (session id -> False if it is gone) each page whose class changed; returns how
    many were asked to run again. A class the store cannot read now is asked about next time."""
    from attnviz.classroom.errors import ClassError, StoreDownError  # with the classes: here

    now = following()
    versions: dict[str, int] = {}
    for code in {code for code, _ in now.values()}:
        try:
            versions[code] = await asyncio.to_thread(read_version, code)
        except (StoreDownError, ConnectionError):  # asked again next time
            continue
        except ClassError:
            versions[code] = GONE
    asked = 0
    for session, (code, shown) in now.items():
        if code not in versions or versions[code] == shown:
            continue
        alive = rerun(session)
        asked += alive
        with _LOCK:
            if _FOLLOWING.get(session) == (code, shown):  # its run says what it shows next
                if alive:
                    _FOLLOWING[session] = (code, versions[code])
                else:
                    del _FOLLOWING[session]
                    _FRAGMENTS.pop(session, None)
    return asked


def rerun_session(session: str) -> bool:
    """Ask Streamlit to run session `session`'s page again with its last client state (as
    `AppSession` does on a changed source file), but no widget values: each widget keeps the
    value the server holds (replaying the browser's last message would set a widget back to
    what it was then, and press its last pressed button again): the fragment the page follows
    its class in,
    as the fragment's own timer asks for it, or the whole page if it has no such fragment (now);
    False if there is no such session now. On the server's event loop only."""
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return False
    app = Runtime.instance().get_app_session(session)
    if app is None:
        return False
    state = ClientState()
    state.CopyFrom(app._client_state)  # noqa: SLF001 - the state Streamlit reruns with itself
    state.ClearField("widget_states")  # not the values the browser last sent: they may be
    # older than the server's (a slider the page moved on since, a button's press)
    with _LOCK:
        fragment = _FRAGMENTS.get(session, "")
    if fragment and not app.has_fragment(fragment):  # a full run dropped it: the whole page
        fragment = ""  # (`request_rerun` would ignore a fragment the session no longer holds)
    state.fragment_id, state.is_auto_rerun = fragment, False  # never the page's last fragment
    app.request_rerun(state)
    return True


def fragment_id() -> str:
    """The id of the fragment this code runs in ("" outside one): Streamlit's own, which its
    timers and a fragment's widgets send back to run that fragment alone (internal, as the
    client state above: read where Streamlit's `st.fragment` keeps it)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

    try:
        return ThreadState.get().fragment_id or ""
    except RuntimeError:  # not in a script run
        return ""


def _session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return None if ctx is None else ctx.session_id
