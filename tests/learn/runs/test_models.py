"""Tests for learn/runs/models.py: one model object per finished run in the process, the most
recently used `KEPT` of them kept."""

from __future__ import annotations

from attnviz.core.kept import Kept
from attnviz.learn.runs import models as run_models
from attnviz.learn.runs.models import KEPT, keep, kept


def test_a_run_s_model_is_built_once_and_shared():
    store, builds = object(), []

    def build():
        builds.append(1)
        return f"model {len(builds)}"

    assert kept(store, "1", build) == kept(store, "1", build) == "model 1" and len(builds) == 1
    assert kept(object(), "1", build) == "model 2"  # another store's run 1 is another run
    keep(store, "2", "trained here")  # the worker hands over the model it trained
    assert kept(store, "2", build) == "trained here" and len(builds) == 2
    assert kept(store, "3", lambda: None) is None and kept(store, "3", build) == "model 3"


def test_the_most_recently_used_models_are_kept(monkeypatch):
    monkeypatch.setattr(run_models, "_MODELS", Kept(KEPT))  # none from other tests
    store = object()
    for i in range(KEPT):
        keep(store, str(i), i)
    assert kept(store, "0", lambda: "again") == 0  # used: the last out
    keep(store, "new", "new")  # one too many: run 1, the least recently used, goes
    assert kept(store, "1", lambda: "rebuilt") == "rebuilt"
    assert kept(store, "0", lambda: "rebuilt") == 0
