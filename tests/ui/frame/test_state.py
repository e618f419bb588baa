"""Tests for ui/frame/state.py: every session-state key declared once, typed reads, URL texts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import attnviz.ui.pages  # noqa: F401 - declares every slot of the app
from attnviz.ui.frame import state
from attnviz.ui.frame.state import Slot, SlotFamily, declared_keys, slot, slot_family

UI = Path(state.__file__).parents[1]  # attnviz/ui


def test_a_key_declared_by_another_module_is_refused():
    slot("test_state_owned", 1)
    slot("test_state_owned", 1)  # the same module again (a re-import): allowed
    with pytest.raises(ValueError, match="'causal' is declared twice: .*ui.controls.masks"):
        slot("causal", True)
    with pytest.raises(ValueError, match="'pad_keys_3' is declared twice"):
        slot("pad_keys_3", [])  # a member of the padding-keys family
    with pytest.raises(ValueError, match="declared twice"):
        slot_family("learn", "")  # would own "learn_view", "learn_arch", ...


def test_the_app_declares_its_keys_once_each():
    keys = declared_keys()
    assert {"score", "causal", "q_text", "view", "mv_head", "task", "way"} <= set(keys)
    assert isinstance(keys["pad_keys"], SlotFamily)
    assert keys["padding"].default is True and keys["padding"].url


def test_widget_arguments_keep_the_value_and_bind_the_url():
    bound = Slot("x", 3, url=True)
    assert bound.widget() == {"key": "x", "persist_state": "session", "bind": "query-params"}
    assert bound.widget("value")["value"] == 3
    assert "bind" not in Slot("y", "").widget()


def test_slots_read_and_write_session_state():
    def script():
        import streamlit as st

        from attnviz.ui.frame.state import Slot, SlotFamily

        number, family = Slot("n", 5), SlotFamily("pick", [])
        st.write(f"default {number.get()} set {number.is_set()}")
        number.set(7)
        st.session_state["bad"] = "seven"  # a hand-edited value of the wrong type
        st.write(f"now {number.get()} typed {Slot('bad', 0).get()}")
        family.of(2).set([1])
        st.write(f"members {[s.key for s in family.members()]} {family.of(2).get()}")
        number.clear()
        st.write(f"cleared {number.get()} {number.setdefault()} {number.setdefault(9)}")

    at = AppTest.from_function(script, default_timeout=60).run()
    assert [m.value for m in at.markdown] == [
        "default 5 set False",
        "now 7 typed 0",
        "members ['pick_2'] [1]",
        "cleared 5 5 5",
    ]


def test_a_lesson_resets_every_setting_and_input_but_keeps_caches_and_the_site_switches():
    def script():
        import streamlit as st

        import attnviz.ui.pages  # noqa: F401 - declares every slot of the app
        from attnviz.ui.frame.state import declared_keys, reset_for_lesson

        keys = declared_keys()
        for key in ("causal", "q_text", "mv_by", "lm_runs", "present"):
            keys[key].set("something")
        keys["pad_keys"].of(0).set([1])
        keys["uploaded"].of("Q").set(("q.csv", None))
        reset_for_lesson()
        st.write(" ".join(sorted(str(k) for k in st.session_state)))

    at = AppTest.from_function(script, default_timeout=60).run()
    assert at.markdown[0].value == "lm_runs present uploaded_Q"
    kept = {key for key, declared in declared_keys().items() if declared.kept}
    caches = {key for key, d in declared_keys().items() if isinstance(d, Slot) and d.kind is dict}
    assert caches <= kept  # a session's runs and figures survive a lesson
    assert not kept & {"causal", "pos", "mv_by", "view", "learn_arch", "sentences", "lm_off"}


def test_a_lesson_s_reset_reads_the_session_s_keys_once():
    # Each read of the session's keys (`st.session_state` iterated) copies the whole state; the
    # reset read them once per family of slots, on every lesson opened.
    def script():
        import streamlit as st
        from streamlit.runtime.state.session_state import SessionState

        import attnviz.ui.pages  # noqa: F401 - declares every slot of the app
        from attnviz.ui.frame.state import declared_keys, reset_for_lesson

        declared_keys()["causal"].set(True)
        copies = []
        copying = SessionState.filtered_state
        SessionState.filtered_state = property(lambda s: copies.append(1) or copying.fget(s))
        try:
            reset_for_lesson()
            reset = len(copies)
            declared_keys()["pad_keys"].of(0).set([1])
            members = declared_keys()["pad_keys"].members()
        finally:
            SessionState.filtered_state = copying
        st.write(f"{reset} {'causal' in st.session_state} {len(copies) - reset} {len(members)}")

    at = AppTest.from_function(script, default_timeout=60).run()
    assert at.markdown[0].value == "1 False 1 1"  # and a family's members: one read (was two)


def test_no_ui_module_spells_a_session_state_key():
    # Keys are read and written through their slots; Streamlit's own state only in frame/state.py.
    spelled = [
        f"{path.relative_to(UI)}:{n}"
        for path in UI.rglob("*.py")
        if path != Path(state.__file__)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"st\.session_state\b", line)
    ]
    assert spelled == []


def test_an_index_that_no_longer_fits_goes_back_to_zero():
    def script():
        import streamlit as st

        from attnviz.ui.frame.state import Slot

        row = Slot("row", 0)
        row.set(4)
        st.write(f"fits {row.index_widget(5)['key']} {row.get()}")
        st.write(f"shrank {row.index_widget(3)['key']} {row.get()}")
        st.session_state["row"] = "2"  # a hand-edited link's text
        row.index_widget(3)
        st.write(f"typed {st.session_state['row']!r}")

    at = AppTest.from_function(script, default_timeout=60).run()
    assert [m.value for m in at.markdown] == ["fits row 4", "shrank row 0", "typed 0"]
