"""What the server puts first in every page's `<head>`, before Streamlit's own code runs
(`PageHead`, a middleware): one history entry per thing the user does (`history`), and what
every page's charts and formulas need, our own constant style and script
(`attnviz.ui.frame.presenter.HEAD_HTML`: the phone's style, the charts' tick labels, printed
values and SVG button). Sent once per page load: as elements of the page, they were three of
the elements every run of every page sent.

Before them, on a page below the app's root (`/sentences`, `/lesson-4`), where the server is
(`server_root`): Streamlit's front end cannot tell a page's path from the app's, so it first
asks the page's own path for the server's health and settings (`/sentences/_stcore/health`),
gets "Not Found", waits and asks the parent path: a round trip and a retry's wait before the page
connects, on every new tab and every reload. Told where the server is, it asks once.
"""

from __future__ import annotations

import gzip
from typing import Any

import streamlit as st

from attnviz.ui.app.history import HISTORY_SCRIPT
from attnviz.ui.frame.presenter import HEAD_HTML

PAGE_HEAD = HISTORY_SCRIPT + HEAD_HTML.encode()  # the history script first: before any push


class PageHead:
    """ASGI middleware: every HTML page the server sends (the app's one page, whatever its path)
    gets, at the start of its `<head>`, where the server is (below the root) and `PAGE_HEAD`;
    every other response passes as it is."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        held: dict[str, Any] = {}  # the response's start, while its HTML body arrives
        body: list[bytes] = []

        async def sending(message: dict) -> None:
            if message["type"] == "http.response.start" and _is_plain_html(message):
                held["start"] = message
                return
            if message["type"] != "http.response.body" or "start" not in held:
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            root = server_root(scope.get("path", "/"), st.get_option("server.baseUrlPath"))
            page = _edited(b"".join(body), _encoding(held["start"]), root + PAGE_HEAD)
            await send(_with_length(held["start"], len(page)))
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, sending)


def server_root(path: str, base_path: str = "") -> bytes:
    """The script that tells Streamlit's front end where the server is when the page's URL
    `path` (as the server got it) lies below the app's root (`base_path`, the server's
    `server.baseUrlPath`); empty at the root. It drops as many trailing parts from the
    address the browser shows as the path has below the root, so that it also holds behind a
    proxy that serves the app under a prefix of its own."""
    parts = [part for part in path.split("/") if part]
    base = [part for part in base_path.split("/") if part]
    below = len(parts) - len(base) if parts[: len(base)] == base else 0
    if below <= 0:
        return b""
    return (
        "<script>(() => { const parts = location.pathname.split('/').filter(Boolean)"
        f".slice(0, -{below}); window.__streamlit = Object.assign("
        "{BACKEND_BASE_URL: location.origin + '/' + parts.join('/')}, window.__streamlit); "
        "})();</script>"
    ).encode()


def with_head(page: bytes, head: bytes = PAGE_HEAD) -> bytes:
    """`page` (HTML) with `head` first in its `<head>` (unchanged without one)."""
    return page.replace(b"<head>", b"<head>" + head, 1)


def _edited(page: bytes, encoding: bytes, head: bytes) -> bytes:
    """The page with `head`, in its own encoding (Streamlit gzips it for most browsers)."""
    if encoding == b"gzip":
        return gzip.compress(with_head(gzip.decompress(page), head), mtime=0)
    return with_head(page, head)


def _encoding(start: dict) -> bytes:
    headers = {k.lower(): v for k, v in start.get("headers", [])}
    return headers.get(b"content-encoding", b"").strip().lower()


def _is_plain_html(start: dict) -> bool:
    """An HTML page, not encoded or gzipped (another encoding passes untouched)."""
    headers = {k.lower(): v for k, v in start.get("headers", [])}
    kind = headers.get(b"content-type", b"")
    return kind.startswith(b"text/html") and _encoding(start) in (b"", b"gzip")


def _with_length(start: dict, length: int) -> dict:
    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
    return {**start, "headers": [*headers, (b"content-length", str(length).encode())]}
