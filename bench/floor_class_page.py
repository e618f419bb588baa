"""The page of the class load's floor app (`floor_class.py`, see there): a phone's page shows
the room's step; the teacher's page (`?teacher=1`) moves it on."""

from __future__ import annotations

import floor_class_room as room
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx


@st.fragment
def phone() -> None:
    """The room's step, in the fragment the server runs again when it moves on."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

    now = room.step()
    room.shows(get_script_run_ctx().session_id, now, ThreadState.get().fragment_id or "")
    st.markdown(f"Step {now}")


if st.query_params.get("teacher"):
    if st.button("Move"):
        room.move()
    st.markdown(f"Teacher at step {room.step()}")
else:
    phone()
