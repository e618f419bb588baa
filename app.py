"""attnviz: an interactive attention visualiser. Run with `streamlit run app.py`.

`streamlit run` finds the `st.App` below and serves the page script `attnviz/ui/page.py`.
Its lifespan hook starts a background thread that imports TensorFlow and traces the attention
graph as soon as the first page has drawn its inputs and controls (or 3 s after the server
starts, if no one has come yet): the page appears as fast as a plain Streamlit page, and the
import does not wait for the first click.
"""

import threading
from contextlib import asynccontextmanager

import streamlit as st


@asynccontextmanager
async def _lifespan(_app):
    from attnviz.ui.warmup import warm_up  # light: imports nothing heavy itself

    threading.Thread(target=warm_up, name="attnviz-warm-up", daemon=True).start()
    yield


app = st.App("attnviz/ui/page.py", lifespan=_lifespan)
