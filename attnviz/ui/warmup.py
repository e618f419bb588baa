"""Work done once per server, at start-up, before the first visitor needs it."""

from __future__ import annotations

import logging
import threading

from attnviz.ui import loading

PAGE_DRAWN = threading.Event()  # set once a session has drawn its inputs and controls
PAGE_WAIT_S = 3.0  # most time the TensorFlow import waits for a first page to be drawn


def page_drawn() -> None:
    """A session has drawn its inputs and controls: the TensorFlow import may start."""
    PAGE_DRAWN.set()


loading.on_back_end(page_drawn)  # the server imports this module: its pages tell it


def warm_up() -> None:
    """Import TensorFlow and Keras (~4.5 s), trace the dot-product attention graphs, and load
    Learn's default shipped model into the server's cache.

    Runs in a background thread started by `server.py` when the server starts. It first waits
    until a session has drawn its inputs and controls (`page_drawn`), or `PAGE_WAIT_S`: the
    import holds Python's GIL most of the time, and running it beside the first page's own
    run made that page appear ~1 s later (measured: page shown 3.5 s after launch, floor app
    1.8 s; with the wait 2.3–2.5 s, for a first heatmap ~0.5 s later). A session that arrives
    meanwhile waits on Python's import lock for the same import, never repeats it. Failures are
    logged, not raised: the page's own first run would then meet them again and show its error
    message.
    """
    PAGE_DRAWN.wait(PAGE_WAIT_S)
    try:
        import numpy as np

        from attnviz.core.attention import compute_attention

        x = np.eye(2, dtype=np.float32)
        for causal in (False, True):
            compute_attention(x, x, x, causal=causal)
        from attnviz.ui.shipped import preload

        quiet = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # no script run here: its cache needs none, it warns
        try:
            preload()  # Learn's default model, so a first Learn page does not wait ~1.5 s
        finally:
            quiet.setLevel(level)
    except Exception:  # noqa: BLE001 - a warm-up must never take the server down
        logging.getLogger("attnviz").exception("warm-up failed")
