"""The attnviz server: an `st.App` serving the page script, with a warm-up when it starts.

`streamlit run attnviz/ui/app/server.py` (what the `attnviz` command runs) and `streamlit run
app.py` (the checkout's entry, which builds its `st.App` from the same `PAGE` and `lifespan`)
serve the page script `attnviz/ui/app/page.py` once per session and per rerun.

Its middleware (`history.HistoryScript`) puts a script in the page's head that gives each thing
the user does one browser-history entry.

The lifespan hook starts a background thread that imports TensorFlow and traces the attention
graph as soon as the first page has drawn its inputs and controls (or 10 s after the server
starts, if no one has come yet): the page appears as fast as a plain Streamlit page, and the
import does not wait for the first click.
"""

from __future__ import annotations

import os
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from attnviz.ui.app.history import HistoryScript
from attnviz.ui.frame.server_config import WARM_UP_ENV

PAGE = Path(__file__).resolve().parent / "page.py"  # the page script, found wherever installed
MIDDLEWARE = [Middleware(HistoryScript)]  # one history entry per thing the user does (`history`)


@asynccontextmanager
async def lifespan(_app: st.App):
    """Start the warm-up (`attnviz.ui.app.warmup.warm_up`) in a daemon thread, unless the
    environment says `ATTNVIZ_WARM_UP=0`; nothing to stop."""
    if os.environ.get(WARM_UP_ENV, "1").strip() != "0":
        from attnviz.ui.app.warmup import warm_up  # light: imports nothing heavy itself

        threading.Thread(target=warm_up, name="attnviz-warm-up", daemon=True).start()
    yield


app = st.App(PAGE, lifespan=lifespan, middleware=MIDDLEWARE)
