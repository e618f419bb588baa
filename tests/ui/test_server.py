"""Tests for ui/server.py and the top-level app.py: the st.App that `streamlit run` finds in
either file serves the page script, and its lifespan starts the warm-up in the background."""

import asyncio
import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from streamlit.web.server.app_discovery import discover_asgi_app

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize(
    ("script", "import_string"),
    [("app.py", "app:app"), ("attnviz/ui/server.py", "server:app")],
    ids=["app.py", "server.py"],
)
def test_streamlit_run_finds_the_app_in_the_file(script, import_string):
    # `streamlit run FILE` reads FILE's source (without running it) for `app = st.App(...)`
    found = discover_asgi_app(ROOT / script)
    assert found.is_asgi_app and found.import_string == import_string


def test_both_files_serve_the_page_script_with_the_warm_up():
    # In a fresh process: building an st.App pins Streamlit's main script path for the process.
    probe = (
        "import json, runpy\n"
        "from attnviz.ui import server\n"
        "entry = runpy.run_path('app.py')['app']\n"
        "print(json.dumps([str(server.PAGE), str(server.app._resolved_script_path),\n"
        "    str(entry._resolved_script_path), server.app._user_lifespan is server.lifespan,\n"
        "    entry._user_lifespan is server.lifespan]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    page, served, entry, same_lifespan, entry_lifespan = json.loads(done.stdout)
    assert page == str(ROOT / "attnviz" / "ui" / "page.py") and Path(page).is_file()
    assert served == entry == page
    assert same_lifespan and entry_lifespan


@pytest.fixture
def server(monkeypatch):
    """attnviz.ui.server, imported without leaving Streamlit's main script path pinned."""
    from streamlit import config

    monkeypatch.setattr(config, "_main_script_path", config._main_script_path)  # restored after
    from attnviz.ui import server

    return server


def test_the_lifespan_starts_the_warm_up_in_a_daemon_thread(server, monkeypatch):
    from attnviz.ui import warmup

    started = threading.Event()
    seen: list[threading.Thread] = []

    def fake_warm_up() -> None:
        seen.append(threading.current_thread())
        started.set()

    monkeypatch.setattr(warmup, "warm_up", fake_warm_up)

    async def serve_once() -> None:
        async with server.lifespan(server.app) as state:
            assert state is None  # nothing shared with the page
            assert started.wait(10)  # the warm-up runs while the server serves

    # a fresh thread for a fresh event loop: Playwright's sync API may run one in this thread
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, serve_once()).result(timeout=60)
    (thread,) = seen
    assert thread.name == "attnviz-warm-up" and thread.daemon
    assert thread is not threading.main_thread()


def test_no_warm_up_when_the_environment_says_so(server, monkeypatch):
    from attnviz.ui import warmup

    called = threading.Event()
    monkeypatch.setattr(warmup, "warm_up", called.set)
    monkeypatch.setenv(server.WARM_UP_ENV, "0")

    async def serve_once() -> None:
        async with server.lifespan(server.app):
            pass

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, serve_once()).result(timeout=60)
    assert not called.is_set()
    assert not any(t.name == "attnviz-warm-up" for t in threading.enumerate())
