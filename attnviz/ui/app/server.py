"""The attnviz server: an `st.App` serving the page script, with a warm-up when it starts.

`streamlit run attnviz/ui/app/server.py` (what the `attnviz` command runs) and `streamlit run
app.py` (the checkout's entry, which builds its `st.App` from the same `PAGE` and `lifespan`)
serve the page script `attnviz/ui/app/page.py` once per session and per rerun.

Its middleware (`head.PageHead`) puts in every page's head a script that gives each thing the
user does one browser-history entry, the phone's style and the charts' script.

The lifespan hook starts a background thread that imports TensorFlow and traces the attention
graph as soon as the first page has drawn its inputs and controls (or 10 s after the server
starts, if no one has come yet): the page appears as fast as a plain Streamlit page, and the
import does not wait for the first click. It also starts the watch of the classes
(`attnviz.ui.classroom.watch`): a student's page runs again when its class moves on, a Learn
page's progress when its training run publishes an epoch. With Redis (`ATTNVIZ_REDIS_URL`) it
starts the server's trainer on the replicas' shared queue of training runs at once, so a replica
nobody pressed Train on still takes its share.
"""

from __future__ import annotations

import asyncio
import os
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from attnviz.core.redis_url import redis_url_from_env
from attnviz.ui.app.head import PageHead
from attnviz.ui.classroom import watch  # light: the classes are imported when first followed
from attnviz.ui.frame.server_config import WARM_UP_ENV

PAGE = Path(__file__).resolve().parent / "page.py"  # the page script, found wherever installed
MIDDLEWARE = [Middleware(PageHead)]  # every page's head: its history script, style, chart script


@asynccontextmanager
async def lifespan(_app: st.App):
    """Start the warm-up (`attnviz.ui.app.warmup.warm_up`) in a daemon thread, unless the
    environment says `ATTNVIZ_WARM_UP=0`; and the watch of the classes this server's students
    follow (`attnviz.ui.classroom.watch`), stopped at the end."""
    if os.environ.get(WARM_UP_ENV, "1").strip() != "0":
        from attnviz.ui.app.warmup import warm_up  # light: imports nothing heavy itself

        threading.Thread(target=warm_up, name="attnviz-warm-up", daemon=True).start()
    if redis_url_from_env():  # the replicas share one queue of training runs: each takes its
        # share from the start, also before anyone on it presses Train
        threading.Thread(target=_train_shared_runs, name="attnviz-trainers", daemon=True).start()
    watching = asyncio.create_task(watch.watch_classes(_version), name="attnviz-classes")
    try:
        yield
    finally:
        watching.cancel()


def _train_shared_runs() -> None:
    """Start this server's trainer on the runs' shared queue (`attnviz.learn.runs.worker`; it
    imports TensorFlow)."""
    from attnviz.learn.runs.from_env import store_from_env
    from attnviz.learn.runs.worker import ensure_worker

    ensure_worker(store_from_env())


def _version(name: str) -> int:
    """The version now of what pages follow: a class by its code, or a training run
    (`training_progress.run_version`); one small read of its store."""
    from attnviz.ui.models.training_progress import RUN_PREFIX, run_version

    if name.startswith(RUN_PREFIX):
        return run_version(name)
    from attnviz.ui.classroom.session import room

    return room().state(name).version


app = st.App(PAGE, lifespan=lifespan, middleware=MIDDLEWARE)
