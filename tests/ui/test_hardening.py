"""A corpus of hostile and malformed input, driven through the app (AppTest).

Every case must give a clear message next to the input (or simply work, for odd but valid
input such as emoji or right-to-left text), never an exception, and the app must go on working:
after the case, a good input brings the charts back.
"""

from __future__ import annotations

import io

import app_support as ui
import numpy as np
import pytest
from app_support import APP, FIRST_RUN_TIMEOUT
from streamlit.testing.v1 import AppTest

GOOD = {"q_text": "1 0 0\n0 1 0", "k_text": "1 2 3\n4 5 6", "v_text": "0 1 0\n1 0 1"}
WORKS = None  # expected message for odd input that must simply work


def _npy(array, allow_pickle=False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


# (id, where, what, words the message must contain) --------------------------------------------
MATRIX_TEXT = [
    ("ragged-rows", "q_text", "1 2 3\n4 5", "row 2 has 2 numbers"),
    ("word-in-matrix", "q_text", "1 0 0\n0 one 0", "'one' is not a number"),
    ("nan", "q_text", "nan 0 0\n0 1 0", "not a finite number"),
    ("inf", "k_text", "1 2 inf\n4 5 6", "not a finite number"),
    ("1e300", "v_text", "1e300 1 0\n1 0 1", "too large"),
    ("1e400", "q_text", "1e400 0 0\n0 1 0", "not a finite number"),
    ("empty", "q_text", "", "`Q` is empty"),
    ("whitespace-only", "k_text", "  \n\t \n", "`K` is empty"),
    ("json-1x0", "q_text", "[[]]", "empty"),
    ("json-empty-list", "q_text", "[]", "empty"),
    ("json-malformed", "q_text", "[[1, 0, 0], [0, 1, 0]", "not valid JSON"),
    ("json-object", "q_text", '{"q": [[1, 0, 0]]}', "list"),
    ("json-strings", "q_text", '[["a", "b", "c"]]', "not a number"),
    ("json-ragged", "q_text", "[[1, 0, 0], [0, 1]]", "row 2"),
    ("json-4d", "q_text", "[[[[1, 0, 0]]]]", "4"),
    ("batch-and-matrix", "q_text", "[[[1, 0, 0], [0, 1, 0]]]", "all be batches"),
    ("dot-dq-ne-dk", "k_text", "1 2\n4 5", "Dq == Dk"),
    ("k-v-rows-differ", "v_text", "0 1 0", "one value per key"),
    ("html", "q_text", "<b>1</b> 0 0\n0 1 0", "HTML"),
    ("script-tag", "v_text", "<script>alert(1)</script>", "HTML"),
    ("emoji-in-matrix", "q_text", "1 😀 0\n0 1 0", "not a number"),
    ("rtl-mark", "q_text", "1\u200f 0 0\n0 1 0", "row 1"),
    ("arabic-indic-digits", "q_text", "١ ٠ ٠\n٠ ١ ٠", "not a number"),
    ("header-row", "q_text", "a b c\n1 0 0", "header"),
    ("too-many-rows", "q_text", "1 0 0\n" * 4097, "at most 4,096"),
    ("too-many-columns", "q_text", " ".join(["1"] * 1025), "at most 1,024"),
    ("text-too-long", "q_text", "1 " * 500_001, "1,000,000"),
]
UPLOADS = [
    ("csv-with-header", "Q", "q.csv", b"a,b,c\n1,0,0\n0,1,0", "header"),
    ("npy-objects", "V", "v.npy", _npy(np.array([{"a": 1}], dtype=object), True), "object"),
    ("npy-strings", "Q", "q.npy", _npy(np.array([["a", "b"]])), "text"),
    ("npy-truncated", "K", "k.npy", _npy(np.ones((2, 3)))[:-8], "cut short"),
    ("json-file-malformed", "K", "k.json", b"[[1, 2, 3], [4, 5", "not valid JSON"),
    ("csv-not-utf8", "Q", "q.csv", b"\xff\xfe1\x00,\x002\x00", "UTF-8"),
    ("upload-too-large", "V", "v.csv", b"1," * (10 * 1024 * 1024 + 1), "20"),
]
SENTENCES = [
    ("sentence-empty", "", "no sentence"),
    ("sentence-10000-chars", "word " * 2000, WORKS),
    ("sentence-over-limit", "a" * 20_001, "at most 20000"),
    ("sentence-emoji", "👨‍👩‍👧 loves 🇫🇷 🎉!", WORKS),
    ("sentence-rtl", "\u200fمرحبا بالعالم\u200f", WORKS),
    ("sentence-zero-width-only", "\u200b\u200b\ufeff", "no words"),
    ("sentence-html", "<img src=x onerror=alert(1)>", WORKS),
    ("sentence-script", "<script>alert('x')</script> hi", WORKS),
    ("too-many-sentences", "\n".join(f"s{i}" for i in range(65)), "64"),
]
URLS = [  # a hand-edited link must not take the app down
    ("url-negative-window", {"window_on": "true", "window": "-5"}),
    ("url-huge-random", {"source": "random", "r_t": "99999", "r_s": "4"}),
    ("url-unknown-score", {"score": "bogus", "causal": "maybe"}),
    ("url-unknown-mode", {"mode": "Bogus"}),
    ("url-bad-seed", {"seed": "abc"}),
    ("url-zero-d-model", {"mode": "Sentences", "d_model": "0"}),
]


@pytest.fixture
def at() -> AppTest:
    app = ui.new_session("matrices")
    ui.assert_ok(app)
    return app


def _still_works(at: AppTest) -> None:
    """No exception, the sidebar is there, a control runs, and good input draws the charts."""
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.toggle, "the sidebar controls are gone"
    at.toggle(key="causal").set_value(not at.toggle(key="causal").value).run()
    assert not at.exception


def _restore_matrices(at: AppTest) -> None:
    for key, text in GOOD.items():
        at.text_area(key=key).input(text)
    at.run()
    ui.assert_ok(at)
    assert "Attention weights" in ui.titles(at)


@pytest.mark.parametrize(
    ("where", "text", "words"), [c[1:] for c in MATRIX_TEXT], ids=[c[0] for c in MATRIX_TEXT]
)
def test_bad_matrix_text(at, where, text, words):
    at.text_area(key=where).input(text).run()
    assert not at.exception
    messages = ui.errors(at)
    assert any(words in m for m in messages), messages
    assert all(len(m) < 600 for m in messages), "messages stay short, whatever was typed"
    assert at.text_area(key=where).value == text  # nothing the user typed is lost
    assert "Attention weights" not in ui.titles(at)
    _still_works(at)
    _restore_matrices(at)


@pytest.mark.parametrize(
    ("box", "name", "data", "words"), [c[1:] for c in UPLOADS], ids=[c[0] for c in UPLOADS]
)
def test_bad_upload(at, box, name, data, words):
    at.button_group(key="source").set_value("upload").run()
    at.file_uploader(key=f"upload_{box}").set_value((name, data, "application/octet-stream"))
    at.run()
    assert not at.exception
    assert any(words in m for m in ui.errors(at)), ui.errors(at)
    _still_works(at)
    at.button_group(key="source").set_value("type").run()
    _restore_matrices(at)


@pytest.mark.parametrize(
    ("text", "words"), [c[1:] for c in SENTENCES], ids=[c[0] for c in SENTENCES]
)
def test_odd_sentences(at, text, words):
    ui.open_mode(at, "Sentences")
    at.text_area(key="sentences").input(text).run()
    assert not at.exception
    if words is WORKS:
        ui.assert_ok(at)
        assert any(t.startswith("Attention weights") for t in ui.titles(at))
        assert "<img" not in str(ui.specs(at)) and "<script" not in str(ui.specs(at))
    else:
        assert any(words in m for m in ui.errors(at)), ui.errors(at)
        assert at.text_area(key="sentences").value == text
    _still_works(at)
    at.text_area(key="sentences").input("The cat sat .").run()
    ui.assert_ok(at)


@pytest.mark.parametrize("params", [c[1] for c in URLS], ids=[c[0] for c in URLS])
def test_hand_edited_links(params):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(params)
    at.run(timeout=FIRST_RUN_TIMEOUT)
    assert not at.exception, [e.value for e in at.exception]
    _still_works(at)


def test_the_corpus_is_large_enough():
    assert len(MATRIX_TEXT) + len(UPLOADS) + len(SENTENCES) + len(URLS) >= 40
