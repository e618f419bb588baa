"""One history entry for each thing the user does: a script in the page's `<head>`, put there
by a middleware of the server (`HistoryScript`), so that it is in place before Streamlit's own
code runs.

Streamlit 1.67's front end pushes a browser-history entry for every change of the URL's fields
that a run sends, one per change: a page's first open wrote its typed inputs one by one (four
entries for the Matrices page, each Back stopping on the same page), and a page opened by a link
got one entry for the switch and one more for the fields it writes as it opens (Back stopped on
the new page once before leaving it). The script lets the first push after the user acts (a
click, a key, which may open a page or change a control) add its entry, and turns the pushes
that follow, until the user acts again, into replacements of that entry. Back and Forward (the
browser's own `popstate`) count as acting once done: Streamlit replaces while it restores.
"""

from __future__ import annotations

import gzip
from typing import Any

HISTORY_SCRIPT = b"""<script>
(() => {
  const history = window.history;
  const push = history.pushState.bind(history), replace = history.replaceState.bind(history);
  let pushed = true;  // the entry the page loaded in stands for everything until the user acts
  const acted = () => { pushed = false; };
  for (const kind of ["pointerdown", "keydown"]) window.addEventListener(kind, acted, true);
  window.addEventListener("popstate", () => { pushed = true; }, true);
  history.pushState = (state, title, url) => {
    if (pushed) return replace(state, title, url);
    pushed = true;
    return push(state, title, url);
  };
})();
</script>"""


class HistoryScript:
    """ASGI middleware: every HTML page the server sends (the app's one page, whatever its path)
    gets `HISTORY_SCRIPT` at the start of its `<head>`; every other response passes as it is."""

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


def with_history_script(page: bytes) -> bytes:
    """`page` (HTML) with `HISTORY_SCRIPT` first in its `<head>` (unchanged without one)."""
    return page.replace(b"<head>", b"<head>" + HISTORY_SCRIPT, 1)


def _edited(page: bytes, encoding: bytes) -> bytes:
    """The page with the script, in its own encoding (Streamlit gzips it for most browsers)."""
    if encoding == b"gzip":
        return gzip.compress(with_history_script(gzip.decompress(page)), mtime=0)
    return with_history_script(page)


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
