"""`bench.pages.StreamlitSession`, the load benchmarks' client, against a scripted websocket: its
reruns ask for the page its last run drew, as a browser's do."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.pages import StreamlitSession


class ScriptedSocket:
    """A websocket whose server answers every rerun with `answer`'s messages, then the run's
    end; keeps the reruns asked for."""

    def __init__(self, answer: list[ForwardMsg]) -> None:
        self.answer = answer
        self.reruns: list[BackMsg] = []
        self._frames: asyncio.Queue[bytes] = asyncio.Queue()

    def __aiter__(self) -> ScriptedSocket:
        return self

    async def __anext__(self) -> bytes:
        return await self._frames.get()

    async def send(self, data: bytes) -> None:
        self.reruns.append(BackMsg.FromString(data))
        finished = ForwardMsg(script_finished=ForwardMsg.FINISHED_SUCCESSFULLY)
        for msg in [*self.answer, finished]:
            self._frames.put_nowait(msg.SerializeToString())


def _run(coroutine):
    """`coroutine`'s result, in a loop of its own (a browser test's may be running here)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=30)


def _asked(answer: list[ForwardMsg]) -> list[tuple[str, str]]:
    """(page name, page script hash) of each of three reruns of a session opened on "learn"."""

    async def three_runs() -> list[BackMsg]:
        socket = ScriptedSocket(answer)
        session = StreamlitSession(socket, "seed=3", "http://app", "learn")
        for _ in range(3):
            await session.rerun([], timeout_s=5)
        session._reader.cancel()  # noqa: SLF001 - the scripted socket never closes
        return socket.reruns

    reruns = _run(three_runs())
    assert [r.rerun_script.query_string for r in reruns] == ["seed=3"] * 3
    return [(r.rerun_script.page_name, r.rerun_script.page_script_hash) for r in reruns]


def test_the_reruns_of_an_app_of_pages_ask_for_the_page_drawn():
    # new_session names the app's script; the navigation message, the page the run drew
    started = ForwardMsg()
    started.new_session.page_script_hash = "app-script"
    drawn = ForwardMsg()
    drawn.navigation.page_script_hash = "learn-page"
    assert _asked([started, drawn]) == [("learn", ""), ("", "learn-page"), ("", "learn-page")]


def test_the_reruns_of_an_app_without_pages_ask_for_its_script():
    started = ForwardMsg()
    started.new_session.page_script_hash = "app-script"
    assert _asked([started]) == [("learn", ""), ("", "app-script"), ("", "app-script")]


def test_a_fragment_run_the_server_started_is_not_the_end_of_a_rerun():
    # a page that follows a class or a training run: the server runs its fragment by itself
    fragment = ForwardMsg(script_finished=ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
    shown = ForwardMsg()
    shown.delta.new_element.markdown.body = "the rerun's own text"

    async def one_run() -> list:
        session = StreamlitSession(ScriptedSocket([fragment, shown]), "", "http://app", "")
        _, messages = await session.rerun([], timeout_s=5)
        session._reader.cancel()  # noqa: SLF001 - the scripted socket never closes
        return messages

    messages = _run(one_run())
    assert messages[-2].delta.new_element.markdown.body == "the rerun's own text"
