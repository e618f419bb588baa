"""The browser side of the benchmark: headless Chromium through Playwright, and the JavaScript
that times a repaint inside the page.

Times are taken in the page (`performance.now()`), not in Python: a click is stamped by a
capturing listener when the browser dispatches it, and a chart counts as repainted in the first
animation frame in which it holds the new data and its heatmap image is drawn. So neither
Playwright's round trips nor its actionability checks are counted.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from deploy.chromium import CHROMIUM, CHROMIUM_ARGS

VIEWPORT = {"width": 1400, "height": 1000}
WEIGHTS = "Attention weights"
CAUSAL = "Causal (look-ahead) mask"

# The first plotly chart whose title (as the user reads it) starts with `title`, or null. Large
# matrices' titles go on with a second line ("overview: each cell summarises ...").
_FIND = """(title) => {
  for (const div of document.querySelectorAll('.js-plotly-plot')) {
    const t = div.querySelector('.gtitle');
    if (t && t.textContent.trim().startsWith(title) && div._fullData) return div;
  }
  return null;
}"""

# A short fingerprint of a drawn heatmap: traces, shape and a weighted sum of its finite cells;
# null until the chart exists and its heatmap image is painted.
SIGNATURE = (
    "(title) => { const div = (" + _FIND + ")(title);"
    " if (!div || !div._fullData.length || !div.querySelector('.heatmaplayer image')) return null;"
    " const z = div._fullData[0].z; if (!z || !z.length) return null;"
    " let sum = 0, n = 0;"
    " for (let i = 0; i < z.length; i++) { const row = z[i];"
    "  for (let j = 0; j < row.length; j++) { const x = row[j];"
    "   if (Number.isFinite(x)) { sum += x * (((i * 7 + j * 13) % 101) + 1); n++; } } }"
    " return `${div._fullData.length}|${z.length}x${z[0].length}|${n}|${sum.toPrecision(12)}`; }"
)

# Stamp the next click or Enter key the page receives (capturing: before any handler runs).
ARM = """() => {
  window.__bench = {t0: null};
  const mark = () => { if (window.__bench.t0 === null) window.__bench.t0 = performance.now(); };
  document.addEventListener('click', mark, {capture: true, once: true});
  document.addEventListener('keydown', (e) => { if (e.key === 'Enter') mark(); },
                            {capture: true});
}"""

# Resolve with the milliseconds from the stamped event to the first animation frame in which the
# chart `title` shows a signature other than `before`; -1 on timeout, -2 if nothing was stamped.
WAIT_REPAINT = (
    "({title, before, timeoutMs}) => new Promise((resolve) => {"
    " const signature = " + SIGNATURE + "; const start = performance.now();"
    " const tick = () => { const now = performance.now(); const s = signature(title);"
    "  if (s !== null && s !== before) {"
    "   resolve(window.__bench.t0 === null ? -2 : now - window.__bench.t0); return; }"
    "  if (now - start > timeoutMs) { resolve(-1); return; }"
    "  requestAnimationFrame(tick); };"
    " requestAnimationFrame(tick); })"
)

# Epoch milliseconds of the first animation frame with a painted plotly heatmap, or null.
FIRST_HEATMAP = """() => document.querySelector('.js-plotly-plot .heatmaplayer image')
  ? performance.timeOrigin + performance.now() : null"""

# True when the page shows no script run going on.
IDLE = """() => !document.querySelector('[data-testid="stStatusWidget"]')"""

CHART_TITLES = """() => Array.from(document.querySelectorAll('.js-plotly-plot .gtitle'),
  (e) => e.textContent.trim())"""

PROBLEMS = """() => ({
  exceptions: document.querySelectorAll('[data-testid="stException"]').length,
  errors: Array.from(document.querySelectorAll('[data-testid="stAlertContentError"]'),
                     (e) => e.innerText.slice(0, 200)),
})"""


# Run before the page's own scripts: every WebSocket the page opens stamps (performance.now())
# each rerun request it sends and each successful `script_finished` it receives, before the
# page's own handlers see it, and (in `fragments`) each successful end of a fragment's run
# (`st.fragment`). A message's type is read from its top-level protobuf fields: BackMsg
# `rerun_script` (%(rerun)d), ForwardMsg `script_finished` (%(finished)d) with status
# FINISHED_SUCCESSFULLY (%(ok)d) or FINISHED_FRAGMENT_RUN_SUCCESSFULLY (%(fragment)d); the
# numbers come from Streamlit's protos.
STAMP_RUNS = """(() => {
  const field = (bytes, wanted) => {  // [wire type, varint value or length] of a field, or null
    let i = 0;
    const varint = () => {
      let value = 0, shift = 0, byte;
      do { byte = bytes[i++]; value += (byte & 0x7f) * 2 ** shift; shift += 7; }
      while (byte & 0x80 && i < bytes.length);
      return value;
    };
    while (i < bytes.length) {
      const tag = varint(), number = Math.floor(tag / 8), wire = tag & 7;
      const value = wire === 0 || wire === 2 ? varint() : null;
      if (number === wanted) return [wire, value];
      if (wire === 1) i += 8; else if (wire === 5) i += 4; else if (wire === 2) i += value;
      else if (wire !== 0) return null;
    }
    return null;
  };
  const bytesOf = (data) => data instanceof ArrayBuffer ? new Uint8Array(data)
    : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    : null;
  window.__runs = {requested: [], ended: [], fragments: []};
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        const now = performance.now(), bytes = bytesOf(event.data);
        const found = bytes && field(bytes, %(finished)d);
        if (found && found[0] === 0 && found[1] === %(ok)d) window.__runs.ended.push(now);
        if (found && found[0] === 0 && found[1] === %(fragment)d) window.__runs.fragments.push(now);
      });
    }
    send(data) {
      const bytes = bytesOf(data);
      if (bytes && field(bytes, %(rerun)d)) window.__runs.requested.push(performance.now());
      super.send(data);
    }
  };
})()"""


async def launch_browser(playwright: Any) -> Any:
    """Debian's Chromium, headless (never a downloaded browser)."""
    return await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


async def new_page(browser: Any, timeout_s: float = 120) -> Any:
    """A page in a fresh context: its own cookies, cache and Streamlit session."""
    context = await browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(timeout_s * 1000)
    return await context.new_page()


async def signature(page: Any, title: str = WEIGHTS) -> str | None:
    """The fingerprint of the chart `title` now (None until it is painted)."""
    return await page.evaluate(SIGNATURE, title)


def stamp_runs() -> str:
    """`STAMP_RUNS` with the field numbers and status value of Streamlit's protos."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    return STAMP_RUNS % {
        "rerun": BackMsg.DESCRIPTOR.fields_by_name["rerun_script"].number,
        "finished": ForwardMsg.DESCRIPTOR.fields_by_name["script_finished"].number,
        "ok": ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY"),
        "fragment": ForwardMsg.ScriptFinishedStatus.Value("FINISHED_FRAGMENT_RUN_SUCCESSFULLY"),
    }


class RunWatcher:
    """Counts the script runs a page's server finished, from the messages on its websocket."""

    def __init__(self, page: Any) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        self._parse = ForwardMsg.FromString
        self._ok = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY")
        self._fragment_ok = ForwardMsg.ScriptFinishedStatus.Value(
            "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"
        )
        self.finished = 0  # runs that finished successfully
        self.fragments = 0  # fragments' runs (`st.fragment`) that finished successfully
        self.other = 0  # runs that ended otherwise (interrupted, compile error)
        self.exceptions = 0  # exception elements the script sent (tracebacks)
        page.on("websocket", lambda ws: ws.on("framereceived", self._on_frame))

    def _on_frame(self, payload: Any) -> None:
        if not isinstance(payload, bytes | bytearray):
            return
        msg = self._parse(bytes(payload))
        kind = msg.WhichOneof("type")
        if kind == "script_finished":
            if msg.script_finished == self._ok:
                self.finished += 1
            elif msg.script_finished == self._fragment_ok:
                self.fragments += 1
            else:
                self.other += 1
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self.exceptions += msg.delta.new_element.WhichOneof("type") == "exception"

    async def wait_for(self, count: int, timeout_s: float = 120, fragments: bool = False) -> None:
        """Wait until `count` runs (`fragments`: fragments' runs) have finished successfully."""
        deadline = time.monotonic() + timeout_s
        while (self.fragments if fragments else self.finished) < count:
            if time.monotonic() > deadline:
                what = "fragment run" if fragments else "run"
                raise RuntimeError(f"{what} {count} did not finish within {timeout_s} s")
            await asyncio.sleep(0.02)


async def settle(
    page: Any, watcher: RunWatcher, runs: int, timeout_s: float = 120, fragments: bool = False
) -> int:
    """Wait until `runs` runs (`fragments`: fragments' runs) have finished and the page shows
    none going on; returns how many plotly charts the page then shows."""
    await watcher.wait_for(runs, timeout_s, fragments)
    await page.wait_for_function(IDLE, polling=50, timeout=timeout_s * 1000)
    return len(await chart_titles(page))


async def timed_toggle(page: Any, label: str = CAUSAL, timeout_s: float = 120) -> float:
    """Click the toggle `label`; milliseconds until the weights chart is repainted with new data.

    Raises:
        RuntimeError: if the chart does not change within `timeout_s`.
    """
    return await timed_action(page, lambda: toggle(page, label), repr(label), WEIGHTS, timeout_s)


async def timed_action(
    page: Any, act: Any, what: str, title: str = WEIGHTS, timeout_s: float = 120
) -> float:
    """Await `act()` (a click, or Enter in a field); milliseconds from the event the page saw
    to the chart `title` repainted with new data.

    Raises:
        RuntimeError: if no event was seen or the chart does not change within `timeout_s`.
    """
    before = await signature(page, title)
    await page.evaluate(ARM)
    await act()
    args = {"title": title, "before": before, "timeoutMs": timeout_s * 1000}
    elapsed = await page.evaluate(WAIT_REPAINT, args)
    if elapsed < 0:
        why = "no click was seen" if elapsed == -2 else f"no repaint within {timeout_s} s"
        raise RuntimeError(f"{what} on {page.url}: {why}")
    return float(elapsed)


async def open_settled(browser: Any, address: str) -> tuple[Any, RunWatcher]:
    """A new page (its own session) at `address`, once its first run has finished and it is
    idle; with the watcher of its runs."""
    page = await new_page(browser)
    watcher = RunWatcher(page)
    await page.goto(address)
    await settle(page, watcher, 1)
    return page, watcher


async def toggle(page: Any, label: str = CAUSAL) -> None:
    """Click a Streamlit toggle by its label (the input itself is covered by its label)."""
    switch = page.get_by_role("switch", name=label, exact=True)
    await page.locator("label").filter(has=switch).click()


async def chart_titles(page: Any) -> list[str]:
    """The titles of the plotly charts on the page, in page order."""
    return await page.evaluate(CHART_TITLES)


async def close_page(page: Any) -> None:
    """Close a page's whole context (ends its Streamlit session)."""
    await page.context.close()


class StreamlitSession:
    """A Streamlit session spoken to directly over its websocket, as its page would: the cheap
    client of the load benchmark (no browser, no rendering; the server does all its usual work).

    Like the page, a rerun sends the URL's query string, the widgets the user changed, and the
    hashes of the large messages it already holds (the server then sends a reference instead);
    the URL follows the server's changes (`page_info_changed`) and the user's changes to widgets
    bound to it. A background task reads every message, stamped on arrival.
    """

    def __init__(self, socket: Any, query: str, base: str, page: str = "") -> None:
        self._socket = socket
        self.query = query  # the query string of the page's URL now
        self.base = base  # the app's address (http://host:port)
        self.url = f"{base}/{page}"  # the page's address, without the query
        self.messages: list[tuple[float, Any]] = []  # (perf_counter at arrival, ForwardMsg)
        # since the end of the last run
        self.widgets: dict[str, str] = {}  # label -> widget id, from the elements received
        self.cookie = ""  # the cookies sent with the websocket (nginx's names the replica)
        self._page = ""  # page_script_hash: the page the last run drew (or the one switched to)
        self._page_name = page  # the URL path a new visitor opens ("" for the default page)
        self._cache: dict[str, Any] = {}  # hash -> large message, as the page's cache
        self._cached_now: list[str] = []  # hashes received in the last run
        self._arrived = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def open(
        cls, base: str, query: str, timeout_s: float = 30, page: str = ""
    ) -> StreamlitSession:
        """Connect to the app at `base` (http://host:port) as a new visitor of the page at the
        URL path `page` ("" for the default page) with `query`, carrying the cookies the server
        (or nginx in front of it) sets on a first request."""
        import urllib.request

        import websockets

        def first_request() -> str:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=timeout_s) as answer:
                cookies = answer.headers.get_all("Set-Cookie") or []
            return "; ".join(c.split(";", 1)[0] for c in cookies)

        cookie = await asyncio.to_thread(first_request)
        socket = await websockets.connect(
            base.replace("http", "ws", 1) + "/_stcore/stream",
            subprotocols=["streamlit"],
            additional_headers={"Cookie": cookie} if cookie else None,
            max_size=None,
            open_timeout=timeout_s,
        )
        session = cls(socket, query, base, page)
        session.cookie = cookie
        return session

    async def _read(self) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        try:
            async for frame in self._socket:
                arrived = time.perf_counter()
                msg = ForwardMsg.FromString(frame)
                if msg.WhichOneof("type") == "ref_hash":
                    msg = self._cache.get(msg.ref_hash, msg)
                elif msg.metadata.cacheable:
                    self._cache[msg.hash] = msg
                    self._cached_now.append(msg.hash)
                self._note(msg, msg.WhichOneof("type"))
                self._arrive(arrived, msg)
        finally:
            self._ended()

    def _arrive(self, arrived: float, msg: Any) -> None:
        """Keep message `msg`, which arrived at `arrived` (`time.perf_counter()`), for `rerun`."""
        self.messages.append((arrived, msg))
        self._arrived.set()

    def _ended(self) -> None:
        """The socket closed."""
        self._arrived.set()  # wake a waiting rerun: it reports the closed socket

    def _note(self, msg: Any, kind: str) -> None:
        if kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "new_session":  # an app without pages: its script is the page
            self._page = msg.new_session.page_script_hash
        elif kind == "navigation":  # an app of pages: the page the run drew (after new_session,
            self._page = msg.navigation.page_script_hash  # which names the app's own script)
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            widget = getattr(element, element.WhichOneof("type"))
            if getattr(widget, "id", "") and getattr(widget, "label", ""):
                self.widgets[widget.label] = widget.id

    def switch_page(self, page: str) -> None:
        """Go to the page at the URL path `page` on the next rerun, as the browser does when a
        link of the navigation is clicked: the request names the page by its script hash
        (Streamlit's hash of the URL path) and carries the URL's query string, whose fields
        bound to the old page's widgets the server drops."""
        from streamlit.util import calc_hash

        self._page, self._page_name = calc_hash(page), ""
        self.url = f"{self.base}/{page}"

    def set_param(self, key: str, value: str) -> None:
        """Write a bound widget's new value into the URL, as the page does when it changes."""
        from urllib.parse import parse_qsl, urlencode

        pairs = [(k, v) for k, v in parse_qsl(self.query, keep_blank_values=True) if k != key]
        self.query = urlencode([*pairs, (key, value)])

    async def rerun(self, changed: list[Any], timeout_s: float) -> tuple[float, list[Any]]:
        """Ask for a run with the `changed` widget states (WidgetState protos); wait for its
        end. Returns the seconds from sending to the arrival of its `script_finished` message,
        and the run's messages. A run that ended early for another rerun is followed to the
        end of that one; a fragment's run the server started meanwhile (a page that follows a
        class or a training run) is not this run's end."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        back = BackMsg()
        state = back.rerun_script
        state.query_string, state.page_script_hash = self.query, self._page
        if not self._page:  # a new visitor: the page is named by its URL path
            state.page_name = self._page_name
        state.widget_states.widgets.extend(changed)
        state.cached_message_hashes.extend(self._cached_now)
        state.context_info.timezone, state.context_info.locale = "UTC", "en-US"
        state.context_info.url = self.url
        self._cached_now = []
        first = len(self.messages)
        sent = time.perf_counter()
        await self._socket.send(back.SerializeToString())
        index = await asyncio.wait_for(self._finished(first), timeout_s)
        others = (ForwardMsg.FINISHED_EARLY_FOR_RERUN,
                  ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)  # fmt: skip
        while self.messages[index][1].script_finished in others:  # not this run's end
            index = await asyncio.wait_for(self._finished(index + 1), timeout_s)
        status = self.messages[index][1].script_finished
        if status != ForwardMsg.FINISHED_SUCCESSFULLY:
            raise RuntimeError(f"run ended with {ForwardMsg.ScriptFinishedStatus.Name(status)}")
        ended, run = self.messages[index][0], [m for _, m in self.messages[first : index + 1]]
        self.messages = self.messages[index + 1 :]  # keep only what came after the run
        return ended - sent, run

    async def _finished(self, start: int) -> int:
        while True:
            for index in range(start, len(self.messages)):
                if self.messages[index][1].WhichOneof("type") == "script_finished":
                    return index
            if self._reader.done():
                self._reader.result()  # raises what ended the reader
                raise ConnectionError("the websocket closed")
            self._arrived.clear()
            await self._arrived.wait()

    async def close(self) -> None:
        """Close the websocket (the server ends the session)."""
        await self._socket.close()
        self._reader.cancel()
