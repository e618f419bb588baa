"""Tests for ui/app/head.py: the server puts the page head (on a page below the app's root, where
the server is; the history script, then the phone's style and the charts' script) first in every
HTML page's head, plain or gzipped, with the length corrected, and leaves everything else as it
is. (What the scripts do in a browser: tests/ui/test_browser_lessons.py, the history;
tests/ui/test_browser_phone.py, the charts; tests/ui/test_browser_explorer.py, the server found
at once.)"""

from __future__ import annotations

import asyncio
import gzip
from concurrent.futures import ThreadPoolExecutor

from attnviz.ui.app.head import PAGE_HEAD, PageHead, server_root
from attnviz.ui.app.history import HISTORY_SCRIPT
from attnviz.ui.frame.presenter import CHART_SCRIPT, NARROW_STYLE

PAGE = b"<!doctype html><html><head><meta charset='UTF-8'></head><body></body></html>"


def _serve(body: bytes, kind: bytes, encoding: bytes | None = None, method: str = "GET",
           chunks: int = 1, path: str = "/") -> tuple[dict, bytes]:  # fmt: skip
    """What `PageHead` sends for a response of `body`, as (start, body)."""
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    if encoding:
        headers.append((b"content-encoding", encoding))

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        size = -(-len(body) // chunks)
        for k in range(chunks):
            part = body[k * size : (k + 1) * size]
            await send({"type": "http.response.body", "body": part, "more_body": k < chunks - 1})

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path}
    with ThreadPoolExecutor(1) as thread:  # a loop of its own: the test's thread may run one
        thread.submit(asyncio.run, PageHead(app)(scope, None, send)).result()
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def _length(start: dict) -> int:
    (value,) = [v for k, v in start["headers"] if k == b"content-length"]
    return int(value)


def test_the_head_is_the_history_script_then_the_style_and_the_chart_script():
    assert HISTORY_SCRIPT + (NARROW_STYLE + CHART_SCRIPT).encode() == PAGE_HEAD
    # ASCII only: it stands before the page's <meta charset>, which a browser looks for in the
    # first 1024 bytes when the response does not say its encoding
    assert PAGE_HEAD.isascii()


def test_an_html_page_gets_the_head_first_in_its_head():
    start, body = _serve(PAGE, b"text/html; charset=utf-8", chunks=3)
    assert body.startswith(b"<!doctype html><html><head>" + PAGE_HEAD + b"<meta")
    assert _length(start) == len(body) == len(PAGE) + len(PAGE_HEAD)


def test_a_gzipped_page_is_edited_and_gzipped_again():
    start, body = _serve(gzip.compress(PAGE), b"text/html", encoding=b"gzip", path="/matrices")
    head = server_root("/matrices") + PAGE_HEAD
    assert gzip.decompress(body) == PAGE.replace(b"<head>", b"<head>" + head)
    assert _length(start) == len(body)


def test_a_page_below_the_root_says_where_the_server_is_first():
    start, body = _serve(PAGE, b"text/html", path="/lesson-4")
    script = server_root("/lesson-4")
    assert body.startswith(b"<!doctype html><html><head>" + script + PAGE_HEAD + b"<meta")
    assert _length(start) == len(body)
    assert b"window.__streamlit" in script and script.isascii()


def test_where_the_server_is_drops_the_page_s_parts_of_the_address():
    # `.slice(0, -n)` drops the n parts of the address below the app's root: behind a proxy's
    # prefix too, which the server does not see (the browser's /school/attnviz/sentences)
    def dropped(path: str, base: str = "") -> int | None:
        script = server_root(path, base).decode()
        return int(script.split(".slice(0, -")[1].split(")")[0]) if script else None

    assert dropped("/") is None and dropped("") is None  # the root: Streamlit finds it itself
    assert dropped("/sentences") == dropped("/lesson-4/") == 1
    assert dropped("/a/b") == 2
    assert dropped("/attnviz/sentences", "attnviz") == 1  # under server.baseUrlPath
    assert dropped("/attnviz/matrices", "/attnviz/") == 1
    assert dropped("/attnviz/", "attnviz") is None  # the root under server.baseUrlPath
    assert dropped("/other", "attnviz") is None  # not below the root: left to Streamlit


def test_other_responses_pass_untouched():
    script = b"console.log('<head>')"
    assert _serve(script, b"application/javascript")[1] == script
    assert _serve(PAGE, b"text/html", method="HEAD")[1] == PAGE
    assert _serve(PAGE, b"text/html", encoding=b"br")[1] == PAGE  # an encoding it cannot read
