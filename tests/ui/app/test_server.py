"""Tests for ui/app/server.py and the top-level app.py: the st.App that `streamlit run` finds in
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

ROOT = Path(__file__).parents[3]


@pytest.mark.parametrize(
    ("script", "import_string"),
    [("app.py", "app:app"), ("attnviz/ui/app/server.py", "server:app")],
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
        "from attnviz.ui.app import server\n"
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
    assert page == str(ROOT / "attnviz" / "ui" / "app" / "page.py") and Path(page).is_file()
    assert served == entry == page
    assert same_lifespan and entry_lifespan
    # Streamlit serves the files of a `pages/` folder beside the page script as pages of their
    # own (its first way of making an app of several pages), run as scripts; the app's pages
    # are `attnviz/ui/pages/`, so the page script must not sit beside them
    assert not (Path(page).parent / "pages").exists()


@pytest.fixture
def server(monkeypatch):
    """attnviz.ui.app.server, imported without leaving Streamlit's main script path pinned."""
    from streamlit import config

    monkeypatch.setattr(config, "_main_script_path", config._main_script_path)  # restored after
    from attnviz.ui.app import server

    return server


def test_the_lifespan_starts_the_warm_up_in_a_daemon_thread(server, monkeypatch):
    from attnviz.ui.app import warmup

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
    from attnviz.ui.app import warmup

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


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6390/0", ""], ids=["redis", "none"])
def test_with_redis_the_lifespan_starts_the_trainer_on_the_shared_queue(server, monkeypatch, url):
    # a replica nobody pressed Train on must still take its share of the replicas' one queue
    # (tests/learn/runs/test_replicas.py runs it for real)
    started = threading.Event()
    monkeypatch.setattr(server, "_train_shared_runs", started.set)
    monkeypatch.setenv(server.WARM_UP_ENV, "0")
    monkeypatch.setenv("ATTNVIZ_REDIS_URL", url)

    async def serve_once() -> None:
        async with server.lifespan(server.app):
            started.wait(10 if url else 0.5)

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, serve_once()).result(timeout=60)
    assert started.is_set() == bool(url)


def test_a_page_opened_during_the_warm_up_is_told_what_loads(monkeypatch):
    # what `note_while_loading` draws above a page while the warm-up is pending or running
    from attnviz.ui.app import warmup

    assert warmup.loading_now() is None  # no warm-up here (pytest runs no server)
    monkeypatch.setattr(warmup, "STEP", ["tensorflow", 2, 9, 0.0])
    monkeypatch.setattr(warmup.time, "time", lambda: 6.2)
    warmup.PENDING.set()
    try:
        told = warmup.loading_now()
        monkeypatch.setattr(warmup, "STEP", ["language-model", 8, 9, 0.0])
        later = warmup.loading_now()
    finally:
        warmup.PENDING.clear()
    assert told == (
        "The server started 6 s ago and is getting ready (now loading TensorFlow, step 2 of 9); "
        f"that takes about {warmup.TYPICAL_S} s in all. This page appears by itself as soon as "
        "what it needs is loaded."
    )
    assert "(now loading the Language model page's models, step 8 of 9)" in later


@pytest.mark.slow
@pytest.mark.browser
def test_a_page_opened_while_the_server_warms_up_says_so_until_it_is_drawn(tabs):
    # a page opened at once after a start waits for TensorFlow and the warm-up: it says what
    # loads and how long it takes (before: only Streamlit's running icon, 7-9 s), and the note
    # goes when the page is drawn
    from browser_support import OPEN_SECONDS, App
    from playwright.sync_api import expect

    from deploy import servers

    server = servers.wait_healthy(servers.start("attnviz"))  # with its warm-up
    page = tabs.take(new_tab=True)
    try:
        app = App(page, server.url).start_loading()
        note = page.get_by_text("is getting ready")
        note.wait_for(timeout=OPEN_SECONDS * 1000)
        assert "s in all. This page appears by itself" in note.inner_text()
        app.wait_opened(charts=4)
        expect(note).to_have_count(0)
    finally:
        tabs.give_back(page)
        server.stop()


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop has no Windows build (not pinned)")
def test_the_server_runs_its_event_loop_on_uvloop():
    # Streamlit's uvicorn settings name no loop, so uvicorn takes uvloop when it is installed
    # (requirements.txt): each element a run sends costs the loop less than asyncio's own
    import uvicorn
    from streamlit.web.server.starlette.starlette_server import _get_uvicorn_config_kwargs

    config = uvicorn.Config(app=lambda scope, receive, send: None, **_get_uvicorn_config_kwargs())
    loop = config.get_loop_factory()()
    try:
        assert type(loop).__module__.split(".")[0] == "uvloop", type(loop)
    finally:
        loop.close()
