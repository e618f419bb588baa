"""attnviz: an interactive attention visualiser. Run with `streamlit run app.py` (or, once
installed, with the `attnviz` command).

The server lives in `attnviz/ui/app/server.py`: the page script and the lifespan hook that
warms up TensorFlow. `streamlit run` finds an `st.App` by reading this file's source, not by
running it: it looks for an assignment `app = st.App(...)`, so an import of `server.app` alone
would be served as a plain script. Hence the one line below, which builds the same app from the
server's pieces.
"""

import streamlit as st

from attnviz.ui.app.server import MIDDLEWARE, PAGE, lifespan

app = st.App(PAGE, lifespan=lifespan, middleware=MIDDLEWARE)
