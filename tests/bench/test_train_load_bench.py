"""`bench.train_load_bench.Learner`, the train load's Learn page: the progress runs it times
while its run trains are also those its server starts (a page follows its run)."""

from __future__ import annotations

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.train_load_bench import Learner

from .test_pages import ScriptedSocket, _run


def _progress(text: str) -> ForwardMsg:
    msg = ForwardMsg()
    msg.delta.new_element.progress.text = text
    return msg


def _server_run(page: Learner, start: float, end: float, text: str) -> None:
    """A fragment run its server started: its first message at `start`, its end at `end`."""
    started = ForwardMsg()
    started.new_session.page_script_hash = "learn-page"
    started.metadata.run.fragment_ids.append("progress")
    page._arrive(start, started)  # noqa: SLF001 - as the reader hands each message on
    page._arrive((start + end) / 2, _progress(text))  # noqa: SLF001
    ended = ForwardMsg(script_finished=ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
    page._arrive(end, ended)  # noqa: SLF001


def test_a_learn_page_times_the_progress_runs_its_server_starts_while_training():
    async def watched() -> list[float]:
        page = Learner(ScriptedSocket([]), "", "http://app", "learn")
        _server_run(page, 10.0, 10.25, "Training: epoch 3 of 20 done (2 s)")
        _server_run(page, 11.0, 11.5, "Waiting for the server's training slot: next in the queue")
        _server_run(page, 12.0, 12.125, "Training: epoch 4 of 20 done (3 s)")
        page._reader.cancel()  # noqa: SLF001 - the scripted socket never closes
        return page.progress_s

    assert _run(watched()) == pytest.approx([0.25, 0.125])  # only those that showed training
