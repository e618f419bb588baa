"""Tests for ui/frame/loading.py: what Streamlit's after-run call to Keras's clear becomes. The
whole page's runs, with a shipped model: tests/ui/test_app.py (the after-run Keras clear)."""

from __future__ import annotations

import sys
import threading
from types import SimpleNamespace

from streamlit.runtime import scriptrunner

from attnviz.ui.frame import loading


def _after_run(monkeypatch, fragments: list[str] | None) -> None:
    """Streamlit's after-run call, in a thread of its own (one per run, as Streamlit's) whose
    run redrew `fragments` (None: a whole run that the shell did not begin)."""
    ctx = SimpleNamespace(fragment_ids_this_run=fragments)
    monkeypatch.setattr(scriptrunner, "get_script_run_ctx", lambda suppress_warning=False: ctx)
    thread = threading.Thread(target=loading._clear_session_after_run)
    thread.start()
    thread.join()


def test_a_fragments_run_keeps_tensorflows_kernels(monkeypatch):
    # A fragment's run (an exercise checked, a class's poll) redraws part of a page without
    # passing through the shell, which marks the page's whole runs (`new_run`): Streamlit's
    # Keras clear after it dropped TensorFlow's kernels, as after a run of no page at all.
    cleared = []
    monkeypatch.setattr(loading, "_KERAS_CLEAR_SESSION", [lambda **kw: cleared.append(kw)])
    monkeypatch.setattr(loading, "_KERAS_BUSY", [])
    idle = SimpleNamespace(training_active=lambda: False)  # no training: not TensorFlow's import
    monkeypatch.setitem(sys.modules, "attnviz.learn.runs", idle)
    _after_run(monkeypatch, ["exercise-1b"])
    assert cleared == []
    _after_run(monkeypatch, None)  # no page's run: Keras's own clear, as before
    assert cleared == [{"free_memory": True}]
