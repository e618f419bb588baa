"""The floor of the class load's teacher's move → phone time (bench section `class_load`): the
least Streamlit app that shows a teacher's move on every phone of a room spread over replicas.

Its page (`floor_class_page.py`): a phone's page shows the room's step, read from Redis
(`ATTNVIZ_REDIS_URL`), in a fragment; the teacher's page (`?teacher=1`) has one button that adds
1 to that step. Phones do not poll: each server reads the step every `WATCH_SECONDS` and runs
again the fragment of each phone that shows an old step, by the push attnviz's classes use
(`attnviz/ui/classroom/watch.py`: Streamlit's `AppSession.request_rerun` of the fragment, with
the session's last client state; the one way a Streamlit server updates a page by itself). No
class, no members, no question, no lesson: one line of text a phone, so whatever attnviz's
phones take beyond this is attnviz's own.

Run from `bench/`: `ATTNVIZ_REDIS_URL=redis://... streamlit run floor_class.py`.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from pathlib import Path

import floor_class_room as room
import streamlit as st

PAGE = Path(__file__).resolve().with_name("floor_class_page.py")


async def _watch() -> None:
    """Forever: every `WATCH_SECONDS`, run again each phone's fragment that shows an old step."""
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.runtime import Runtime

    while True:
        await asyncio.sleep(room.WATCH_SECONDS)
        now = await asyncio.to_thread(room.step)
        for session, fragment in room.behind(now).items():
            app = Runtime.instance().get_app_session(session) if Runtime.exists() else None
            if app is None:
                room.drop(session)
                continue
            state = ClientState()
            state.CopyFrom(app._client_state)  # noqa: SLF001 - as attnviz's watch does
            state.fragment_id, state.is_auto_rerun = fragment, False
            app.request_rerun(state)
            room.shows(session, now, fragment)  # asked: its run says what it shows next


@asynccontextmanager
async def lifespan(_app: st.App):
    watching = asyncio.create_task(_watch(), name="floor-room")
    try:
        yield
    finally:
        watching.cancel()


app = st.App(PAGE, lifespan=lifespan)
