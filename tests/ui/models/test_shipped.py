"""Tests for ui/models/shipped.py: a Transformer's trace of a text, kept per server and shared by
the sessions that read the same model on the same text."""

import pytest

from attnviz.core.kept import Kept
from attnviz.ui.models import shipped


class _Model:
    """A stand-in translator that counts its traces."""

    def __init__(self) -> None:
        self.traced: list[str] = []

    def trace(self, text: str):
        if not text:
            raise ValueError("Your input is empty.")
        self.traced.append(text)
        return ("trace of", text)


def test_a_trace_is_run_once_per_model_and_text_and_kept_for_every_session():
    model, other = _Model(), _Model()
    first = shipped.kept_trace(model, "22 nov 2026")
    assert first == ("trace of", "22 nov 2026")
    assert shipped.kept_trace(model, "22 nov 2026") is first  # a second session, a rerun
    assert model.traced == ["22 nov 2026"]
    shipped.kept_trace(other, "22 nov 2026")  # another model (one trained in a session)
    assert other.traced == ["22 nov 2026"]


def test_the_oldest_traces_go_first_and_a_failed_trace_is_not_kept(monkeypatch):
    monkeypatch.setattr(shipped, "_TRACES", Kept(2))  # TRACES_KEPT = 2
    model = _Model()
    for text in ("a", "b", "a", "c"):  # "a" read again: "b" is the oldest when "c" comes
        shipped.kept_trace(model, text)
    shipped.kept_trace(model, "a")
    shipped.kept_trace(model, "b")
    assert model.traced == ["a", "b", "c", "b"]
    with pytest.raises(ValueError, match="empty"):
        shipped.kept_trace(model, "")
    assert (id(model), "") not in shipped._TRACES
