"""Tests for ui/frame/messages.py: user text made safe for markdown, errors shown where they
arise."""

from streamlit.testing.v1 import AppTest

from attnviz.ui.frame.messages import counted, plain


def test_plain_text_can_never_become_a_link_an_image_or_latex():
    assert plain("[x](http://a) ![i](b) $x$ \\") == "\\[x\\](http://a) !\\[i\\](b) \\$x\\$ \\\\"
    assert plain("<b>bold</b>") == "<b>bold</b>"  # Streamlit never renders HTML in markdown
    assert plain(3) == "3"


def test_shown_reports_a_value_error_and_returns_none():
    def script():
        import streamlit as st

        from attnviz.ui.frame.messages import shown

        def bad():
            raise ValueError("`Q` is empty. Type a row.")

        st.write(f"got {shown(bad, 'Source: ')} and {shown(lambda: 4)}")

    at = AppTest.from_function(script).run()
    assert [e.value for e in at.error] == ["Source: `Q` is empty. Type a row."]
    assert at.markdown[0].value == "got None and 4"


def test_counted_says_one_thing_or_many():
    said = [counted(n, "key tile") for n in (0, 1, 2)]
    assert said == ["0 key tiles", "1 key tile", "2 key tiles"]


def test_readable_says_a_check_s_error_in_the_page_s_words():
    def script():
        import streamlit as st

        from attnviz.ui.frame.messages import readable

        def bad():
            raise ValueError("`text` is empty. Type at least one character.")

        st.write(f"got {readable(bad, 'text', 'Your text')} and {readable(lambda: 1, 'x', 'X')}")

    at = AppTest.from_function(script).run()
    assert [e.value for e in at.error] == ["Your text is empty. Type at least one character."]
    assert at.markdown[0].value == "got False and True"
