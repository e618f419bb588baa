"""Work done once per server, at start-up, before the first visitor needs it."""

from __future__ import annotations

import logging


def warm_up() -> None:
    """Import TensorFlow and Keras (~4.5 s) and trace the dot-product attention graphs.

    Runs in a background thread started by `app.py` when the server starts. A session that
    arrives meanwhile waits on Python's import lock for the same import, never repeats it.
    Failures are logged, not raised: the page's own first run would then meet them again and
    show its error message.
    """
    try:
        import numpy as np

        from attnviz.core.attention import compute_attention

        x = np.eye(2, dtype=np.float32)
        for causal in (False, True):
            compute_attention(x, x, x, causal=causal)
    except Exception:  # noqa: BLE001 - a warm-up must never take the server down
        logging.getLogger("attnviz").exception("warm-up failed")
