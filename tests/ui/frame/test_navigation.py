"""Tests for ui/frame/navigation.py: a callback asks for a page, the next run opens it."""

import app_support as ui
from app_support import APP, FIRST_RUN_TIMEOUT
from streamlit.testing.v1 import AppTest

from attnviz.ui.explorer.results import VIEW
from attnviz.ui.frame.navigation import NEXT_PAGE, NEXT_SETUP
from attnviz.ui.pages.matrices import PRESET


def test_a_requested_page_opens_on_the_next_run_once():
    at = AppTest.from_file(APP, default_timeout=60)
    at.run(timeout=FIRST_RUN_TIMEOUT)
    at.session_state[NEXT_PAGE.key] = "cross"  # what `go_to("cross")` stores in a callback
    at.run()
    ui.assert_ok(at)
    assert ui.current_mode(at) == "cross"
    at.run()  # asked once: the page stays
    assert ui.current_mode(at) == "cross"


def test_a_requested_page_opens_with_the_fields_asked_for_once():
    # `go_to("cross", {"from": ...})`: the page's URL has the fields from its first run (a page
    # writing them itself would add a step to the browser's history)
    def script():
        import streamlit as st

        from attnviz.ui.frame import navigation

        if st.button("go"):
            navigation.go_to("cross", {"from": "head:dates:cross:0:3:x"})
        st.write(f"{navigation.take_request()} {navigation.take_fields()}")
        st.write(f"{navigation.take_request()} {navigation.take_fields()}")

    at = AppTest.from_function(script).run()
    at.button[0].click().run()
    assert [m.value for m in at.markdown] == [
        "cross {'from': ['head:dates:cross:0:3:x']}",
        "None {}",
    ]


def test_a_requested_page_opens_prepared_as_asked_once():
    # `go_to("matrices", setup={...})`: the shell prepares the page with these arguments of its
    # `prepare`, as a lesson would, then opens it (how Multi-head and the Decoder open Learn on
    # a shipped Transformer, with no page importing another)
    at = AppTest.from_file(APP, default_timeout=60)
    at.run(timeout=FIRST_RUN_TIMEOUT)
    at.session_state[NEXT_PAGE.key] = "matrices"
    at.session_state[NEXT_SETUP.key] = {"preset": "07_attention_sinks", "view": "Lines"}
    at.run()
    ui.assert_ok(at)
    assert ui.current_mode(at) == "matrices"
    assert at.session_state[PRESET.key] == "07_attention_sinks"
    assert at.session_state[VIEW.key] == "Lines"
    assert "next_setup" not in at.session_state  # taken: the next request starts afresh
