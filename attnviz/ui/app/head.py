"""What the server puts first in every page's `<head>`, before Streamlit's own code runs
(`PageHead`, a middleware): one history entry per thing the user does (`history`), and what
every page's charts and formulas need, our own constant style and script
(`attnviz.ui.frame.presenter.HEAD_HTML`: the phone's style, the charts' tick labels, printed
values and SVG button). Sent once per page load: as elements of the page, they were three of
the elements every run of every page sent.
"""

from __future__ import annotations

import gzip
from typing import Any

from attnviz.ui.app.history import HISTORY_SCRIPT
from attnviz.ui.frame.presenter import HEAD_HTML

PAGE_HEAD = HISTORY_SCRIPT + HEAD_HTML.encode()  # the history script first: before any push


class PageHead:
    """ASGI middleware: every HTML page the server sends (the app's one page, whatever its path)
    gets `PAGE_HEAD` at the start of its `<head>`; every other response passes as it is."""

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
            page = _edited(b"".join(body), _encoding(held["start"]))
            await send(_with_length(held["start"], len(page)))
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, sending)


def with_head(page: bytes) -> bytes:
    """`page` (HTML) with `PAGE_HEAD` first in its `<head>` (unchanged without one)."""
    return page.replace(b"<head>", b"<head>" + PAGE_HEAD, 1)


def _edited(page: bytes, encoding: bytes) -> bytes:
    """The page with the script, in its own encoding (Streamlit gzips it for most browsers)."""
    if encoding == b"gzip":
        return gzip.compress(with_head(gzip.decompress(page)), mtime=0)
    return with_head(page)


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
