"""Tests for parsing: matrices typed, pasted or uploaded as text, CSV, JSON or .npy."""

import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis_support import examples

from attnviz.core.limits import (
    APP_MAX_FEATURES,
    APP_MAX_TOKENS,
    MAX_TEXT_CHARS,
    MAX_UPLOAD_BYTES,
)
from attnviz.inputs.parsing import (
    ALLOWED_EXTENSIONS,
    load_matrix,
    parse_csv_bytes,
    parse_json_text,
    parse_matrix_text,
    parse_npy_bytes,
)

M12_34 = [[1.0, 2.0], [3.0, 4.0]]


def npy_bytes(array, **kwargs):
    """The bytes `np.save` writes for `array`."""
    buffer = io.BytesIO()
    np.save(buffer, array, **kwargs)
    return buffer.getvalue()


def npy_header(shape, descr="<f8"):
    """A hand-written .npy header, to fake files that claim more than they hold."""
    buffer = io.BytesIO()
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


def assert_parsed(array, expected):
    assert isinstance(array, np.ndarray) and array.dtype == np.float64
    np.testing.assert_array_equal(array, expected)


# --- good input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 2\n3 4", M12_34),
        ("1,2\n3,4", M12_34),
        ("1\t2\n3\t4", M12_34),
        ("1;2\n3;4", M12_34),
        ("1, 2;\t3\n4 ;5,\t 6", [[1, 2, 3], [4, 5, 6]]),
        ("1,,  2\n3 ;; 4", M12_34),  # repeated separators are one
        ("\n\n   1 2  \n\n\t3 4\t\n\n", M12_34),  # blank lines and indents
        ("1 2\r\n3 4\r\n", M12_34),  # Windows line ends
        ("-2.5 .5 1e-3 +3 1. -.25 2E2", [[-2.5, 0.5, 0.001, 3, 1, -0.25, 200]]),
        ("7", [[7]]),
        ("\u22121 \u22122.5e\u22121", [[-1, -0.25]]),  # Unicode minus sign
        ("１２ ３．５ －１", [[12, 3.5, -1]]),  # full-width digits
        ("1\u00a02\u30003", [[1, 2, 3]]),  # no-break and ideographic spaces
        ("1 \u200b2\u200b \u200b3", [[1, 2, 3]]),  # zero-width space next to a separator
        ("1\u200b2 3\ufeff4", [[12, 34]]),  # ... or inside a number: deleted, as the user sees
        ("\ufeff1 2", [[1, 2]]),  # byte order mark
        ("1e-400 0", [[0, 0]]),  # underflows to zero, which is finite
        ("[1, 2],\n[3, 4],", M12_34),  # Python rows with trailing commas
        ("[[1. 2.]\n [3. 4.]]", M12_34),  # numpy printout
        ("[[1, 2],\n [3 4]]", M12_34),  # not JSON (a comma is missing) but clear as rows
        ("[[1, 2], [3, 4]]", M12_34),  # JSON
        ("  [[1, 2],\n   [3, 4]]  ", M12_34),  # JSON over several lines
        ("[1, 2.5, -3e2]", [[1, 2.5, -300]]),  # a flat JSON list is one row
        ("[[[1, 2]], [[3, 4]]]", [[[1, 2]], [[3, 4]]]),  # a JSON batch (B, R, C)
        ("[[1, 2], [3, \u22124]]", [[1, 2], [3, -4]]),
    ],
    ids=[
        "spaces",
        "commas",
        "tabs",
        "semicolons",
        "mixed-separators",
        "repeated-separators",
        "blank-lines",
        "crlf",
        "number-forms",
        "single-number",
        "unicode-minus",
        "full-width",
        "unicode-spaces",
        "zero-width-space-separator",
        "zero-width-inside-number",
        "bom",
        "underflow",
        "bracketed-rows",
        "numpy-printout",
        "almost-json",
        "json-2d",
        "json-multiline",
        "json-1d",
        "json-3d",
        "json-unicode-minus",
    ],
)
def test_parse_matrix_text_reads_good_formats(text, expected):
    assert_parsed(parse_matrix_text(text, name="Q"), expected)


@pytest.mark.parametrize(
    ("data", "filename", "expected"),
    [
        (b"1,2\n3,4\n", "q.csv", M12_34),
        (b"\xef\xbb\xbf1,2\r\n3,4\r\n", "q.csv", M12_34),  # Excel's "CSV UTF-8" with BOM
        (b'"1","2"\n" 3 ",4\n', "q.csv", M12_34),  # quoted cells
        (b"1;2\n3;4\n", "q.csv", M12_34),  # semicolon CSV
        (b"1.5\n-2\n\n", "q.csv", [[1.5], [-2]]),  # one column, trailing blank line
        (b"1\t2\n3\t4\n", "q.tsv", M12_34),
        (b"1 2\n3 4\n", "q.txt", M12_34),
        ("\u22121 2\n3 4".encode(), "q.txt", [[-1, 2], [3, 4]]),
        (b"[[1, 2], [3, 4]]", "q.json", M12_34),
        (b"[[[1, 2]], [[3, 4]]]", "q.json", [[[1, 2]], [[3, 4]]]),
        (b"1,2\n3,4\n", "Q.CSV", M12_34),  # extensions are case-insensitive
        (npy_bytes(np.array(M12_34)), "q.npy", M12_34),
        (npy_bytes(np.array(M12_34, dtype=np.float32)), "q.npy", M12_34),
        (npy_bytes(np.array([[1, 2], [3, 4]], dtype=np.int64)), "q.npy", M12_34),
        (npy_bytes(np.array([[1, 2], [3, 4]], dtype=np.uint8)), "q.npy", M12_34),
        (npy_bytes(np.array([[True, False]])), "q.NPY", [[1, 0]]),
        (npy_bytes(np.array([0.5, 1.5], dtype=np.float16)), "q.npy", [[0.5, 1.5]]),  # 1-D: a row
        (npy_bytes(np.asfortranarray(M12_34)), "q.npy", M12_34),
        (npy_bytes(np.arange(8.0).reshape(2, 2, 2)), "q.npy", [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]),
        (npy_bytes(np.array(M12_34, dtype=">f8")), "q.npy", M12_34),  # big-endian
    ],
    ids=[
        "csv",
        "csv-bom-crlf",
        "csv-quoted",
        "csv-semicolon",
        "csv-one-column",
        "tsv",
        "txt",
        "txt-unicode-minus",
        "json",
        "json-3d",
        "upper-case-extension",
        "npy-float64",
        "npy-float32",
        "npy-int64",
        "npy-uint8",
        "npy-bool",
        "npy-1d-float16",
        "npy-fortran-order",
        "npy-3d",
        "npy-big-endian",
    ],
)
def test_load_matrix_reads_good_files(data, filename, expected):
    assert_parsed(load_matrix(data, filename, name="Q"), expected)


def test_parse_functions_agree_with_load_matrix():
    assert_parsed(parse_csv_bytes(b"\xef\xbb\xbf1,2\n3,4"), M12_34)
    assert_parsed(parse_npy_bytes(npy_bytes(np.array(M12_34, dtype=np.float32))), M12_34)
    assert_parsed(parse_json_text("[[1, 2], [3, 4]]"), M12_34)
    assert_parsed(parse_matrix_text("1 2\n3 4"), M12_34)


PAGE = (APP_MAX_TOKENS, APP_MAX_FEATURES)  # the Matrices page's own limits, which it passes


def test_sizes_at_the_limits_are_accepted():
    assert parse_matrix_text("1\n" * APP_MAX_TOKENS, max_shape=PAGE).shape == (APP_MAX_TOKENS, 1)
    assert parse_matrix_text("1 " * APP_MAX_FEATURES, max_shape=PAGE).shape == (1, APP_MAX_FEATURES)
    text = "1" + " " * (MAX_TEXT_CHARS - 1)
    assert parse_matrix_text(text).shape == (1, 1)


def test_without_a_pages_limits_any_size_the_text_holds_is_read():
    # the library caps nothing but the text and upload sizes: more rows and columns than a page
    assert parse_matrix_text("1\n" * 5000).shape == (5000, 1)
    assert parse_json_text("[" + "1, " * 2047 + "1]").shape == (1, 2048)
    assert load_matrix(npy_bytes(np.zeros((3, 5000, 2))), "q.npy").shape == (3, 5000, 2)


def test_uploaded_text_may_be_longer_than_the_text_box_limit():
    # Files are limited by MAX_UPLOAD_BYTES, not MAX_TEXT_CHARS: limits.py lists CSV and JSON.
    data = b"1 2" + b" " * (MAX_TEXT_CHARS + 10)
    assert_parsed(load_matrix(data, "q.txt"), [[1, 2]])


# --- bad input ---------------------------------------------------------------------------------

OBJECT_NPY = npy_bytes(np.array([{"a": 1}], dtype=object), allow_pickle=True)

BAD_INPUTS = [
    # (id, call, pattern of the message)
    (
        "ragged",
        lambda: parse_matrix_text("1 2 3\n4 5 6\n7 8", name="Q"),
        r"^`Q`, row 3 has 2 numbers but row 1 has 3\. Give every row the same number of columns\.$",
    ),
    (
        "ragged-after-blank-lines",
        lambda: parse_matrix_text("\n1 2\n\n3", name="Q"),
        r"`Q`, row 4 has 1 number but row 2 has 2\.",
    ),
    (
        "word",
        lambda: parse_matrix_text("1 2 3\n4 5 abc", name="Q"),
        r"^`Q`, row 2, column 3: 'abc' is not a number\. Write digits",
    ),
    (
        "word-line-number-counts-blank-lines",
        lambda: parse_matrix_text("1 2\n\n\n3 x", name="Q"),
        r"`Q`, row 4, column 2: 'x' is not a number",
    ),
    (
        "nan",
        lambda: parse_matrix_text("1 nan\n2 3", name="Q"),
        r"`Q`, row 1, column 2: 'nan' is not a finite number\. Only finite numbers are allowed",
    ),
    (
        "inf",
        lambda: parse_matrix_text("1 2\n-inf 3", name="Q"),
        r"`Q`, row 2, column 1: '-inf' is not a finite number",
    ),
    (
        "infinity",
        lambda: parse_matrix_text("Infinity", name="Q"),
        r"`Q`, row 1, column 1: 'Infinity' is not a finite number",
    ),
    (
        "1e400",
        lambda: parse_matrix_text("1 2\n3 1e400", name="Q"),
        r"`Q`, row 2, column 2: '1e400' is not a finite number.*1\.8e308",
    ),
    (
        "too-large-for-attention",
        lambda: parse_matrix_text("1 1e16", name="Q"),
        r"`Q` holds a number too large to compute with",
    ),
    (
        "empty",
        lambda: parse_matrix_text("", name="Q"),
        r"^`Q` is empty\. Type one row of numbers per line, e\.g\. ",
    ),
    (
        "whitespace-only",
        lambda: parse_matrix_text(" \n\t\n  \u200b ", name="Q"),
        r"^`Q` is empty\.",
    ),
    ("json-empty-list", lambda: parse_matrix_text("[]", name="Q"), r"^`Q` is empty\."),
    ("json-empty-row", lambda: parse_matrix_text("[[]]", name="Q"), r"^`Q` is empty"),
    (
        "json-malformed",
        lambda: parse_matrix_text("[[1, 2],\n [3, 4], x]", name="Q"),
        r"^`Q` is not valid JSON: Expecting value at line 2, column 10\. Write a list",
    ),
    (
        "json-unclosed",
        lambda: parse_json_text("[[1, 2], [3, 4]", name="Q"),
        r"`Q` is not valid JSON: .* at line 1, column 16",
    ),
    (
        "json-dict",
        lambda: parse_matrix_text('{"a": 1}', name="Q"),
        r"^`Q` must be a JSON list of rows, e\.g\. \[\[1, 2\], \[3, 4\]\]\. Received an object\.",
    ),
    (
        "json-number",
        lambda: load_matrix(b"5", "q.json", name="Q"),
        r"`Q` must be a JSON list of rows.*Received the single number '5'",
    ),
    (
        "json-string-cell",
        lambda: parse_matrix_text('[[1, "x"]]', name="Q"),
        r"^`Q`, row 1, column 2: the text 'x' is not a number\. Write plain numbers without quotes",
    ),
    (
        "json-quoted-number",
        lambda: parse_json_text('[["1", 2]]', name="Q"),
        r"`Q`, row 1, column 1: the text '1' is not a number",
    ),
    (
        "json-true-cell",
        lambda: parse_json_text("[[1, true]]", name="Q"),
        r"`Q`, row 1, column 2: true is not a number",
    ),
    (
        "json-null-cell",
        lambda: parse_json_text("[[null]]", name="Q"),
        r"`Q`, row 1, column 1: null is not a number",
    ),
    (
        "json-ragged",
        lambda: parse_matrix_text("[[1, 2], [3]]", name="Q"),
        r"^`Q`, row 2 has 1 number but row 1 has 2\. Give every row the same number of columns\.",
    ),
    (
        "json-mixed-depth",
        lambda: parse_json_text("[[1, 2], 3]", name="Q"),
        r"`Q`, row 2 is the single number '3', not a list of numbers",
    ),
    (
        "json-batch-ragged",
        lambda: parse_json_text("[[[1, 2]], [[3, 4], [5, 6]]]", name="Q"),
        r"`Q`, matrix 2 has shape 2 × 2 but matrix 1 has 1 × 2",
    ),
    (
        "json-batch-bad-cell",
        lambda: parse_json_text('[[[1]], [["a"]]]', name="Q"),
        r"`Q`, matrix 2, row 1, column 1: the text 'a' is not a number",
    ),
    (
        "json-4d",
        lambda: parse_json_text("[[[[1]]]]", name="Q"),
        r"`Q` has 4 levels of nested lists; at most 3 are allowed",
    ),
    (
        "json-nan",
        lambda: parse_json_text("[[1, NaN]]", name="Q"),
        r"`Q`, row 1, column 2: 'NaN' is not a finite number",
    ),
    (
        "json-1e400",
        lambda: parse_json_text("[[1e400]]", name="Q"),
        r"`Q`, row 1, column 1: '1e400' is not a finite number",
    ),
    (
        "json-deeply-nested",
        lambda: parse_matrix_text("[" * 100_000, name="Q"),
        r"`Q` has too many nested brackets",
    ),
    (
        "numpy-3d-printout",
        lambda: parse_matrix_text("[[[1 2]\n  [3 4]]]", name="Q"),
        r"`Q`, row 1 starts with 3 brackets, like a printout of a 3-D array",
    ),
    (
        "numpy-ellipsis",
        lambda: parse_matrix_text("[[1. 2. ... 9.]]", name="Q"),
        r"`Q`, row 1, column 3: '\.\.\.' is not a number\. numpy shortened its printout",
    ),
    (
        "underscore-number",
        lambda: parse_matrix_text("1_000", name="Q"),
        r"`Q`, row 1, column 1: '1_000' is not a number",
    ),
    (
        "csv-header",
        lambda: parse_csv_bytes(b"a,b\n1,2\n3,4\n", name="Q"),
        r"^`Q`: the first row looks like a header \('a' is a word, not a number\)\. Remove the",
    ),
    (
        "csv-pandas-header",
        lambda: load_matrix(b",x,y\n0,1,2\n", "q.csv", name="Q"),
        r"`Q`: the first row looks like a header \('x'",
    ),
    (
        "text-header",
        lambda: parse_matrix_text("q1 q2\n1 2", name="Q"),
        r"`Q`: the first row looks like a header",
    ),
    (
        "csv-blank-cell",
        lambda: parse_csv_bytes(b"1,2,3\n4,,6\n", name="Q"),
        r"^`Q`, row 2, column 2 is blank\. Fill in a number",
    ),
    (
        "csv-ragged",
        lambda: parse_csv_bytes(b"1,2,3\n4,5\n", name="Q"),
        r"`Q`, row 2 has 2 numbers but row 1 has 3\.",
    ),
    (
        "csv-bad-quotes",
        lambda: parse_csv_bytes(b'1,2\n3,"4\n', name="Q"),
        r"`Q`, row 2 could not be read as CSV \(.*\)\. Check the quotes",
    ),
    ("csv-empty", lambda: parse_csv_bytes(b"\xef\xbb\xbf\r\n", name="Q"), r"^`Q` is empty\."),
    (
        "npy-object",
        lambda: parse_npy_bytes(OBJECT_NPY, name="Q"),
        r"^`Q` in the \.npy file holds Python objects \(dtype object\)",
    ),
    (
        "npy-strings",
        lambda: parse_npy_bytes(npy_bytes(np.array([["1", "2"]])), name="Q"),
        r"`Q` in the \.npy file must hold real numbers .* Received dtype str\d+ \(text\)",
    ),
    (
        "npy-complex",
        lambda: parse_npy_bytes(npy_bytes(np.zeros((2, 2), complex)), name="Q"),
        r"Received dtype complex128 \(complex numbers\)",
    ),
    (
        "npy-structured",
        lambda: parse_npy_bytes(npy_bytes(np.zeros(2, "f8, i4")), name="Q"),
        r"`Q` in the \.npy file must hold real numbers .*\(records\)",
    ),
    (
        "npy-datetime",
        lambda: parse_npy_bytes(npy_bytes(np.zeros(2, "M8[s]")), name="Q"),
        r"`Q` in the \.npy file must hold real numbers",
    ),
    (
        "npy-0d",
        lambda: parse_npy_bytes(npy_bytes(np.array(1.0)), name="Q"),
        r"`Q` in the \.npy file must be 1-D .* Received shape \(\)\.",
    ),
    (
        "npy-4d",
        lambda: parse_npy_bytes(npy_bytes(np.zeros((1, 1, 1, 1))), name="Q"),
        r"Received shape \(1, 1, 1, 1\)\.",
    ),
    (
        "npy-nan",
        lambda: load_matrix(npy_bytes(np.array([[1.0, np.nan]])), "q.npy", name="Q"),
        r"`Q` holds a non-finite number \(nan\) at index \(0, 1\)",
    ),
    (
        "npy-empty",
        lambda: parse_npy_bytes(npy_bytes(np.zeros((0, 3))), name="Q"),
        r"`Q` is empty: shape \(0, 3\)",
    ),
    (
        "npy-truncated",
        lambda: parse_npy_bytes(npy_bytes(np.zeros((2, 2)))[:-8], name="Q"),
        r"`Q` \.npy file is cut short: shape \(2, 2\) needs 32 bytes of data but the file has 24",
    ),
    (
        "npy-header-claims-32-gb",
        lambda: parse_npy_bytes(npy_header((1024, 4096, 1024)), name="Q"),
        r"`Q` \.npy file is cut short: shape \(1024, 4096, 1024\) needs 34,359,738,368 bytes",
    ),
    (
        "npy-garbage",
        lambda: parse_npy_bytes(b"not an npy file", name="Q"),
        r"^`Q` is not a readable \.npy file",
    ),
    (
        "npy-bad-header",
        lambda: parse_npy_bytes(b"\x93NUMPY\x01\x00\x04\x00{}\n\n", name="Q"),
        r"^`Q` is not a readable \.npy file",
    ),
    (
        "npz",
        lambda: load_matrix(b"PK\x03\x04rest", "q.npy", name="Q"),
        r"`Q` file is a \.npz archive, not a \.npy file",
    ),
    (
        "too-many-rows",
        lambda: parse_matrix_text("1\n" * (APP_MAX_TOKENS + 1), name="Q", max_shape=PAGE),
        rf"^`Q` has {APP_MAX_TOKENS + 1:,} rows; at most {APP_MAX_TOKENS:,} are allowed",
    ),
    (
        "too-many-columns",
        lambda: parse_matrix_text("1 " * (APP_MAX_FEATURES + 1), name="Q", max_shape=PAGE),
        rf"^`Q` has {APP_MAX_FEATURES + 1:,} columns; at most {APP_MAX_FEATURES:,} are allowed",
    ),
    (
        "npy-too-many-rows",
        lambda: parse_npy_bytes(
            npy_bytes(np.zeros((APP_MAX_TOKENS + 1, 1))), name="Q", max_shape=PAGE
        ),
        rf"`Q` has {APP_MAX_TOKENS + 1:,} rows",
    ),
    (
        "npy-1d-too-long",
        lambda: parse_npy_bytes(
            npy_bytes(np.zeros(APP_MAX_FEATURES + 1)), name="Q", max_shape=PAGE
        ),
        rf"`Q` has {APP_MAX_FEATURES + 1:,} columns",
    ),
    (
        "upload-too-many-rows",  # load_matrix passes the page's limits to every reader
        lambda: load_matrix(b"1\n" * (APP_MAX_TOKENS + 1), "q.csv", name="Q", max_shape=PAGE),
        rf"^`Q` has {APP_MAX_TOKENS + 1:,} rows; at most {APP_MAX_TOKENS:,} are allowed",
    ),
    (
        "json-too-many-columns",
        lambda: parse_json_text(str([1] * (APP_MAX_FEATURES + 1)), name="Q", max_shape=PAGE),
        rf"^`Q` has {APP_MAX_FEATURES + 1:,} columns",
    ),
    (
        "npy-batch-too-large",
        lambda: parse_npy_bytes(npy_header((5000, 1, 1)), name="Q"),
        r"`Q` is a batch of 5,000 matrices; at most 1,024 are allowed",
    ),
    (
        "text-too-long",
        lambda: parse_matrix_text(" " * (MAX_TEXT_CHARS + 1), name="Q"),
        rf"^`Q` is too long: {MAX_TEXT_CHARS + 1:,} characters; at most {MAX_TEXT_CHARS:,} are",
    ),
    (
        "upload-too-large",
        lambda: load_matrix(b"1" * (MAX_UPLOAD_BYTES + 1), "q.csv", name="Q"),
        rf"^`Q` file is too large: {MAX_UPLOAD_BYTES + 1:,} bytes; at most {MAX_UPLOAD_BYTES:,}",
    ),
    (
        "npy-upload-too-large",
        lambda: load_matrix(b"1" * (MAX_UPLOAD_BYTES + 1), "q.npy", name="Q"),
        r"`Q` file is too large",
    ),
    (
        "unknown-extension",
        lambda: load_matrix(b"1,2", "q.xlsx", name="Q"),
        r"^`Q` file 'q\.xlsx' has an unsupported type\. "
        r"Allowed: \.csv, \.json, \.npy, \.tsv, \.txt\.",
    ),
    ("no-extension", lambda: load_matrix(b"1,2", "matrix", name="Q"), r"unsupported type"),
    (
        "not-utf8",
        lambda: load_matrix(b"1,2\n3,\xff", "q.csv", name="Q"),
        r"^`Q` file is not UTF-8 text: byte 0xff at position 6 cannot be read\. Save the file as",
    ),
    (
        "utf16",
        lambda: load_matrix("1,2".encode("utf-16"), "q.txt", name="Q"),
        r"`Q` file is UTF-16 text, not UTF-8",
    ),
    (
        "html",
        lambda: parse_matrix_text("1 2\n<b>1</b> 2", name="Q"),
        r"^`Q`, row 2 contains HTML or other markup \(the characters < or >\), not plain numbers",
    ),
    (
        "emoji",
        lambda: parse_matrix_text("1 2\n3 \U0001f600", name="Q"),
        "`Q`, row 2, column 2: '\U0001f600' is not a number",
    ),
    (
        "right-to-left-mark",
        lambda: parse_matrix_text("1 2\n\u200f3 4", name="Q"),
        r"^`Q`, row 2 contains an invisible text-direction mark \(U\+200F\)",
    ),
    ("bidi-override", lambda: parse_matrix_text("1 \u202e2 3", name="Q"), r"\(U\+202E\)"),
    (
        "control-character",
        lambda: parse_matrix_text("1 2\x00", name="Q"),
        r"`Q`, row 1, column 2: '2\\x00' is not a number",
    ),
    (
        "arabic-digits",
        lambda: parse_matrix_text("\u0661 2", name="Q"),
        r"`Q`, row 1, column 1: '\u0661' is not a number",
    ),
    ("text-not-str", lambda: parse_matrix_text(b"1 2", name="Q"), r"^`Q` must be text\."),
    (
        "data-not-bytes",
        lambda: load_matrix("1,2", "q.csv", name="Q"),
        r"^`Q` must be the bytes of a file\.",
    ),
]


@pytest.mark.parametrize(
    ("call", "pattern"), [case[1:] for case in BAD_INPUTS], ids=[case[0] for case in BAD_INPUTS]
)
def test_bad_input_raises_value_error_saying_what_where_and_how(call, pattern):
    with pytest.raises(ValueError, match=pattern) as info:
        call()
    assert_plain_message(str(info.value), "Q")


def assert_plain_message(message, name):
    assert f"`{name}`" in message  # names the input
    assert "<b>" not in message and "</" not in message  # never HTML
    assert len(message) < 700  # echoed user text is truncated


def test_a_long_token_is_truncated_in_the_message():
    with pytest.raises(ValueError, match=r"'x{30}\.\.\.' is not a number") as info:
        parse_matrix_text("1 " + "x" * 10_000, name="Q")
    assert len(str(info.value)) < 200


def test_text_starting_with_a_bracket_reports_the_row_error_for_numpy_printouts():
    # No commas: the user pasted a numpy printout, not JSON.
    with pytest.raises(ValueError, match=r"row 2, column 2: 'x' is not a number"):
        parse_matrix_text("[[1. 2.]\n [3. x]]", name="Q")


# --- invariants and cross-checks ---------------------------------------------------------------

FINITE = st.floats(min_value=-1e15, max_value=1e15, allow_nan=False, allow_infinity=False)
MATRICES = hnp.arrays(
    np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=5), elements=FINITE
)
SEPARATORS = st.sampled_from([" ", "  ", ",", ", ", ";", "\t", " ,\t"])


@given(MATRICES, SEPARATORS)
def test_text_round_trips_exactly(matrix, separator):
    text = "\n".join(separator.join(repr(float(x)) for x in row) for row in matrix)
    assert_parsed(parse_matrix_text(text), matrix)


@given(MATRICES)
def test_json_round_trips_exactly(matrix):
    assert_parsed(parse_matrix_text(json.dumps(matrix.tolist())), matrix)
    assert_parsed(load_matrix(json.dumps([matrix.tolist()]).encode(), "q.json"), [matrix])


@given(MATRICES)
def test_csv_written_by_numpy_reads_like_numpy_loadtxt(matrix):
    buffer = io.BytesIO()
    np.savetxt(buffer, matrix, delimiter=",", fmt="%.17g")
    data = buffer.getvalue()
    expected = np.loadtxt(io.BytesIO(data), delimiter=",", ndmin=2)
    assert_parsed(parse_csv_bytes(data), expected)
    assert_parsed(load_matrix(data.replace(b",", b"\t"), "q.tsv"), expected)


@given(MATRICES)
def test_npy_round_trips_exactly(matrix):
    assert_parsed(load_matrix(npy_bytes(matrix), "q.npy"), matrix)


def assert_finite_matrix_or_value_error(call):
    """The parser's contract: a finite float64 2-D/3-D array, or a ValueError naming the input."""
    try:
        array = call()
    except ValueError as err:
        assert_plain_message(str(err), "fuzz")
        return
    assert isinstance(array, np.ndarray) and array.dtype == np.float64
    assert array.ndim in (2, 3) and array.size > 0 and np.isfinite(array).all()


NUMBERISH = st.text(alphabet='0123456789.,;-+eE[]{}" \n\tnaifINF\u2212\u200b\u200f１x<')


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.text(), NUMBERISH))
def test_any_text_gives_a_finite_matrix_or_value_error(text):
    assert_finite_matrix_or_value_error(lambda: parse_matrix_text(text, name="fuzz"))
    assert_finite_matrix_or_value_error(lambda: parse_json_text(text, name="fuzz"))


@pytest.mark.filterwarnings("ignore:invalid escape sequence")  # numpy header parser on garbage
@settings(max_examples=examples(100), deadline=None)
@given(st.one_of(st.binary(), NUMBERISH.map(str.encode)), st.sampled_from(ALLOWED_EXTENSIONS))
def test_any_bytes_give_a_finite_matrix_or_value_error(data, extension):
    assert_finite_matrix_or_value_error(lambda: load_matrix(data, "f" + extension, name="fuzz"))


VALID_NPY = npy_bytes(np.arange(6.0).reshape(2, 3))


@pytest.mark.filterwarnings("ignore:invalid escape sequence")  # numpy header parser on garbage
@settings(max_examples=examples(200), deadline=None)
@given(st.integers(0, len(VALID_NPY) - 1), st.binary(min_size=1, max_size=16))
def test_damaged_npy_gives_a_finite_matrix_or_value_error(offset, patch):
    data = VALID_NPY[:offset] + patch + VALID_NPY[offset + len(patch) :]
    assert_finite_matrix_or_value_error(lambda: parse_npy_bytes(data, name="fuzz"))
