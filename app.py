"""attnviz: an interactive attention visualiser. Run with `streamlit run app.py`.

`streamlit run` finds the `st.App` below and serves the page script `attnviz/ui/page.py`.
Its lifespan hook starts importing TensorFlow and tracing the attention graph in a background
thread as soon as the server starts, so those ~4.5 s overlap the browser loading the page
instead of following it: the first heatmap appears seconds sooner.
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
